// Kernels of known duration for the timing benchmarks. spin: one thread spins until `ns`
// nanoseconds of %globaltimer have passed (it ends a little later: the timer ticks coarsely).
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

// spin_cycles: one thread spins for `cycles` of its SM's clock (clock64): a length that does not
// depend on where the kernel starts against a timer's ticks (tests/bench/cupti_record.lua)
extern "C" __global__ void spin_cycles(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
}
