// Kernels of the MLP in scenarios/training_loop.lua. Row-major float matrices.

#define T 32

// C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C. op(A) = A (stored M x K) or, with TA,
// A^T (A stored K x M); op(B) = B (stored K x N) or, with TB, B^T (B stored N x K).
template <bool TA, bool TB>
__global__ void matmul(const float* __restrict__ A, const float* __restrict__ B,
                       float* __restrict__ C, int M, int N, int K, float alpha, float beta) {
  __shared__ float As[T][T + 1];
  __shared__ float Bs[T][T + 1];
  int ty = threadIdx.y, tx = threadIdx.x;
  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.0f;
  for (int t = 0; t < K; t += T) {
    int ak = t + tx, bk = t + ty;
    float a = 0.0f, b = 0.0f;
    if (row < M && ak < K) a = TA ? A[(size_t)ak * M + row] : A[(size_t)row * K + ak];
    if (bk < K && col < N) b = TB ? B[(size_t)col * K + bk] : B[(size_t)bk * N + col];
    As[ty][tx] = a;
    Bs[ty][tx] = b;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) {
    size_t i = (size_t)row * N + col;
    C[i] = alpha * acc + (beta != 0.0f ? beta * C[i] : 0.0f);
  }
}

// H[m, n] = relu?(H[m, n] + b[n])
extern "C" __global__ void bias_act(float* __restrict__ H, const float* __restrict__ b, int M,
                                    int N, int relu) {
  size_t total = (size_t)M * N;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    float v = H[i] + b[i % N];
    H[i] = relu && v < 0.0f ? 0.0f : v;
  }
}

// dH *= (H > 0): the gradient through a ReLU whose output is H
extern "C" __global__ void relu_backward(float* __restrict__ dH, const float* __restrict__ H,
                                         long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    if (H[i] <= 0.0f) dH[i] = 0.0f;
}

// softmax cross-entropy over rows of logits[B, C]: adds the mean loss to loss[*step] and writes
// dlogits = (softmax - onehot) / B. One thread per row (C is small).
extern "C" __global__ void softmax_xent(const float* __restrict__ logits,
                                        const int* __restrict__ labels, float* __restrict__ dlogits,
                                        float* __restrict__ loss, const int* __restrict__ step,
                                        int B, int C) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= B) return;
  const float* x = logits + (size_t)r * C;
  float m = x[0];
  for (int c = 1; c < C; ++c) m = fmaxf(m, x[c]);
  float sum = 0.0f;
  for (int c = 0; c < C; ++c) sum += __expf(x[c] - m);
  int y = labels[r];
  for (int c = 0; c < C; ++c) {
    float p = __expf(x[c] - m) / sum;
    dlogits[(size_t)r * C + c] = (p - (c == y ? 1.0f : 0.0f)) / B;
  }
  atomicAdd(loss + *step, (logf(sum) + m - x[y]) / B);
}

// the loss history's cursor: one step done
extern "C" __global__ void next_step(int* step) { *step += 1; }

// db[n] = sum over m of dY[m, n]
extern "C" __global__ void col_sum(const float* __restrict__ dY, float* __restrict__ db, int M,
                                   int N) {
  int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= N) return;
  float s = 0.0f;
  for (int m = 0; m < M; ++m) s += dY[(size_t)m * N + n];
  db[n] = s;
}

// W -= lr * dW
extern "C" __global__ void sgd(float* __restrict__ W, const float* __restrict__ dW, float lr,
                               long n) {
  for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n;
       i += (long)gridDim.x * blockDim.x)
    W[i] -= lr * dW[i];
}

// records R[b, 0..D-1] = features, R[b, D] = the label's bits: splits them into X and labels
extern "C" __global__ void unpack(const float* __restrict__ R, float* __restrict__ X,
                                  int* __restrict__ labels, int B, int D) {
  size_t total = (size_t)B * (D + 1);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total;
       i += (size_t)gridDim.x * blockDim.x) {
    size_t b = i / (D + 1), d = i % (D + 1);
    if (d < (size_t)D) X[b * D + d] = R[i];
    else labels[b] = __float_as_int(R[i]);
  }
}

// the data set: labels from a fixed random linear teacher, packed as records (see unpack)
extern "C" __global__ void make_records(const float* __restrict__ X, const float* __restrict__ Tch,
                                        float* __restrict__ R, int N, int D, int C) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= N) return;
  int best = 0;
  float best_v = -1e30f;
  for (int c = 0; c < C; ++c) {
    float v = 0.0f;
    for (int d = 0; d < D; ++d) v += X[(size_t)r * D + d] * Tch[(size_t)d * C + c];
    if (v > best_v) {
      best_v = v;
      best = c;
    }
  }
  for (int d = 0; d < D; ++d) R[(size_t)r * (D + 1) + d] = X[(size_t)r * D + d];
  R[(size_t)r * (D + 1) + D] = __int_as_float(best);
}
