// Tensor-core bf16 GEMM for scenarios/gemm_sweep.lua: C[M,N] = A[M,K] * B[K,N], all bf16 and
// row-major (the data types of cuBLAS's bf16 GEMM), accumulated in f32 by mma.sync.m16n8k16
// (sm_80 and later, written for sm_90) and rounded to bf16 once at the end.
//
// Block tile BM x BN x BK = 128 x BN x 32 (BN = 128 or 256), BN threads: 2 x BN/64 warps of a
// 64 x 64 warp tile each (4 x 8 mma tiles, 128 f32 accumulators per thread). Global -> shared
// by cp.async (16 bytes, zero-filled outside the matrices) in a STAGES-deep ring; shared ->
// registers by ldmatrix (.trans for B, which is k-major in memory but "col" for the mma).
// Shared memory is XOR-swizzled in 16-byte chunks so that neither ldmatrix nor cp.async has
// bank conflicts. Blocks are rasterized in groups of 8 block rows for L2 reuse. Dynamic shared
// memory: STAGES * (BM * BK + BK * BN) * 2 bytes.
// Needs N and K multiples of 8 (16-byte rows of chunks); M, N, K otherwise arbitrary.
#include <cuda_bf16.h>

#define GEMM_BM 128
#define GEMM_BK 32

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes global -> shared, bypassing L1; src_bytes = 0 writes zeros (outside the matrix)
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// d += a * b for one 16 x 8 x 16 tile
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Element offsets of 16-byte chunk c of a row in the swizzled tiles. A: 32 bf16 = 4 chunks a
// row, two rows per 128-byte line; XOR with (row / 2) % 4 puts the 8 rows an ldmatrix reads
// at one chunk column into 8 different bank groups. B: BN bf16 a row; XOR of the low 3 bits
// with k % 8 does the same for 8 consecutive k.
__device__ __forceinline__ int a_offset(int row, int c) {
  return row * GEMM_BK + ((c ^ ((row >> 1) & 3)) << 3);
}
template <int BN> __device__ __forceinline__ int b_offset(int k, int c) {
  return k * BN + ((c ^ (k & 7)) << 3);
}

// one k-tile of A and B into the stage's buffers; every thread issues its share of the chunks
template <int BN>
__device__ __forceinline__ void load_tile(__nv_bfloat16* sA, __nv_bfloat16* sB,
                                          const __nv_bfloat16* A, const __nv_bfloat16* B, int M,
                                          int N, int K, int m0, int n0, int k0) {
  constexpr int THREADS = BN, A_CHUNKS = GEMM_BM * GEMM_BK / 8, B_CHUNKS = GEMM_BK * BN / 8;
  static_assert(A_CHUNKS % THREADS == 0 && B_CHUNKS % THREADS == 0,
                "chunks must divide among the threads");
#pragma unroll
  for (int i = 0; i < A_CHUNKS / THREADS; ++i) {
    int q = threadIdx.x + i * THREADS, row = q >> 2, c = q & 3;
    int gr = m0 + row, gk = k0 + c * 8;
    bool in = gr < M && gk < K;
    const __nv_bfloat16* src = in ? A + (size_t)gr * K + gk : A;
    cp_async16(smem_addr(sA + a_offset(row, c)), src, in ? 16 : 0);
  }
#pragma unroll
  for (int i = 0; i < B_CHUNKS / THREADS; ++i) {
    int q = threadIdx.x + i * THREADS, k = q / (BN / 8), c = q % (BN / 8);
    int gk = k0 + k, gn = n0 + c * 8;
    bool in = gk < K && gn < N;
    const __nv_bfloat16* src = in ? B + (size_t)gk * N + gn : B;
    cp_async16(smem_addr(sB + b_offset<BN>(k, c)), src, in ? 16 : 0);
  }
}

template <int BN, int STAGES>
__global__ void __launch_bounds__(BN)
    gemm_bf16_mma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                  __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  static_assert(BN == 128 || BN == 256, "BN is 128 or 256");
  static_assert(STAGES >= 2, "at least two stages");
  constexpr int A_TILE = GEMM_BM * GEMM_BK, B_TILE = GEMM_BK * BN, WARPS_N = BN / 64;
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* sA = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* sB = sA + STAGES * A_TILE;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N; // 2 x WARPS_N warps of 64 x 64
  // blocks in launch order walk down groups of GROUP_M block rows, column by column, so that
  // the blocks resident at once share rows of A and columns of B in L2
  constexpr int GROUP_M = 8;
  const int grid_n = gridDim.x, grid_m = gridDim.y;
  const int bid = blockIdx.y * grid_n + blockIdx.x, in_group = GROUP_M * grid_n;
  const int first_m = (bid / in_group) * GROUP_M, group_rows = min(grid_m - first_m, GROUP_M);
  const int block_m = first_m + (bid % in_group) % group_rows,
            block_n = (bid % in_group) / group_rows;
  const int m0 = block_m * GEMM_BM, n0 = block_n * BN;
  const int ktiles = (K + GEMM_BK - 1) / GEMM_BK;

  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

        // prologue: the first STAGES - 1 k-tiles in flight, one commit group each (empty past the
        // end)
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < ktiles)
      load_tile<BN>(sA + s * A_TILE, sB + s * B_TILE, A, B, M, N, K, m0, n0, s * GEMM_BK);
    cp_async_commit();
  }

  for (int kt = 0; kt < ktiles; ++kt) {
    // groups committed so far: STAGES - 1 + kt; all but the newest STAGES - 2 done = k-tile kt
    cp_async_wait<STAGES - 2>();
    // k-tile kt visible to every thread, and every warp done with k-tile kt - 1, whose stage
    // the prefetch below overwrites
    __syncthreads();
    int next = kt + STAGES - 1;
    if (next < ktiles) {
      int s = next % STAGES;
      load_tile<BN>(sA + s * A_TILE, sB + s * B_TILE, A, B, M, N, K, m0, n0, next * GEMM_BK);
    }
    cp_async_commit();

    const __nv_bfloat16* tA = sA + (kt % STAGES) * A_TILE;
    const __nv_bfloat16* tB = sB + (kt % STAGES) * B_TILE;
#pragma unroll
    for (int ks = 0; ks < GEMM_BK / 16; ++ks) {
      // A fragments: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15),
      // (rows 8-15, k 8-15); lane gives the address of row lane % 16 at k chunk lane / 16
      unsigned a[4][4];
#pragma unroll
      for (int mi = 0; mi < 4; ++mi) {
        int row = warp_m * 64 + mi * 16 + (lane & 15);
        ldmatrix_x4(a[mi], smem_addr(tA + a_offset(row, ks * 2 + (lane >> 4))));
      }
      // B fragments, two n-tiles per ldmatrix: matrices (k 0-7, n 0-7), (k 8-15, n 0-7),
      // (k 0-7, n 8-15), (k 8-15, n 8-15), transposed so that each lane holds k pairs
      unsigned b[8][2];
#pragma unroll
      for (int nj = 0; nj < 4; ++nj) {
        int mat = lane >> 3;
        int k = ks * 16 + (mat & 1) * 8 + (lane & 7);
        int n = warp_n * 64 + nj * 16 + (mat >> 1) * 8;
        unsigned r[4];
        ldmatrix_x4_trans(r, smem_addr(tB + b_offset<BN>(k, n >> 3)));
        b[2 * nj][0] = r[0];
        b[2 * nj][1] = r[1];
        b[2 * nj + 1][0] = r[2];
        b[2 * nj + 1][1] = r[3];
      }
#pragma unroll
      for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni) mma_bf16(acc[mi][ni], a[mi], b[ni][0], b[ni][1]);
    }
  }
  cp_async_wait<0>(); // nothing left in flight at exit (only empty groups remain)

  // accumulator layout: d0, d1 at (lane / 4, 2 (lane % 4) + {0, 1}); d2, d3 eight rows below
#pragma unroll
  for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
    for (int ni = 0; ni < 8; ++ni) {
      int row = m0 + warp_m * 64 + mi * 16 + (lane >> 2);
      int col =
          n0 + warp_n * 64 + ni * 8 + (lane & 3) * 2; // even, and N is even: col < N => col + 1 < N
      if (col < N) {
        if (row < M)
          *reinterpret_cast<__nv_bfloat162*>(C + (size_t)row * N + col) =
              __floats2bfloat162_rn(acc[mi][ni][0], acc[mi][ni][1]);
        if (row + 8 < M)
          *reinterpret_cast<__nv_bfloat162*>(C + (size_t)(row + 8) * N + col) =
              __floats2bfloat162_rn(acc[mi][ni][2], acc[mi][ni][3]);
      }
    }
  }
}
