"""CuPy and Triton timings of the kernels of tests/bench/evidence.lua, from the same sources.

Run by evidence.lua on the GPU machine (it has CuPy and Triton); prints one JSON object per
line: {"kernel", "tool", "median", "p10", "p90", "host"} (seconds; host = enqueue time of one
launch). A tool that is missing prints {"tool", "missing": reason}.
"""
import json
import sys
import time

SPIN = r'''
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
'''


def emit(**kw):
    print(json.dumps(kw), flush=True)


def main():
    try:
        import cupy as cp
        import numpy as np
        from cupyx.profiler import benchmark
    except Exception as e:  # noqa: BLE001 - any import failure means "not there"
        emit(tool="cupyx", missing=repr(e))
        return
    try:
        import triton.testing as tt
    except Exception as e:  # noqa: BLE001
        tt = None
        emit(tool="do_bench", missing=repr(e))

    kernels = {}
    spin_mod = cp.RawModule(code=SPIN)
    spin = spin_mod.get_function("spin")
    for us in (5, 50, 1000):
        ns = cp.uint64(us * 1000)
        kernels[f"spin {us} us"] = (lambda ns=ns: spin((1,), (1,), (ns,)))
    stream_mod = cp.RawModule(code=open("scenarios/kernels/stream.cu").read())
    copy = stream_mod.get_function("copy")
    nbytes = 1 << 30
    x = cp.ones(nbytes // 4, dtype=cp.float32)
    y = cp.empty_like(x)
    n4 = cp.int64(nbytes // 16)
    kernels["copy 1 GiB"] = lambda: copy((1024,), (512,), (y, x, n4))
    gemm_mod = cp.RawModule(code=open("scenarios/kernels/gemm.cu").read(), options=("-DTILE=32",))
    gemm = gemm_mod.get_function("gemm_tiled")
    n = 4096
    a = cp.random.standard_normal((n, n), dtype=cp.float32)
    b = cp.random.standard_normal((n, n), dtype=cp.float32)
    c = cp.empty((n, n), dtype=cp.float32)
    g = (n + 31) // 32
    kernels["gemm 4096"] = lambda: gemm((g, g), (32, 32), (a, b, c, cp.int32(n), cp.int32(n), cp.int32(n)))

    busy = lambda: spin((1,), (1,), (cp.uint64(3_000_000),))  # noqa: E731
    for name, fn in kernels.items():
        fn()
        cp.cuda.Device().synchronize()
        # host cost of one launch, the GPU kept busy so that every launch only queues
        busy()
        t0 = time.perf_counter()
        for _ in range(200):
            fn() if name.startswith("spin 5") else spin((1,), (1,), (cp.uint64(1000),))
        host = (time.perf_counter() - t0) / 200
        cp.cuda.Device().synchronize()
        repeat = 30 if name.startswith("gemm") else 200
        r = benchmark(fn, (), n_repeat=repeat, n_warmup=20)
        t = np.sort(r.gpu_times[0])
        emit(kernel=name, tool="cupyx", median=float(np.median(t)), p10=float(t[len(t) // 10]),
             p90=float(t[len(t) * 9 // 10]), host=host)
        if tt is not None:
            times = sorted(tt.do_bench(fn, warmup=25, rep=200 if not name.startswith("gemm") else 500,
                                       return_mode="all"))
            m = times[len(times) // 2] * 1e-3
            emit(kernel=name, tool="do_bench", median=m, p10=times[len(times) // 10] * 1e-3,
                 p90=times[len(times) * 9 // 10] * 1e-3, host=None)


if __name__ == "__main__":
    sys.exit(main())
