// A kernel of known duration for the timing benchmarks: one thread spins until `ns` nanoseconds of
// %globaltimer have passed (it ends a little later: the timer ticks coarsely).
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
