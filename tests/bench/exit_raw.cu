// Benchmark helper (docs/benchmarks.md, "The end of a run"): what a CUDA process's exit costs,
// and whether skipping the runtime's own teardown saves any of it. Each child makes the
// primary context, allocates 1 GiB and a kernel's module, runs the kernel, synchronises, then
// writes the monotonic clock to a pipe and ends one way:
//   return   returns from main: the runtime's exit handlers tear the context down
//   _exit    _exit(0): no exit handlers; the driver releases the context as the process ends
//   reset    cudaDeviceReset() (its own time is reported), then _exit(0)
// The parent reads the clock, waits for the child, and reports the time from the child's last
// clock to the wait's return, the median of ROUNDS children of each way, interleaved.
//   exit_raw [ROUNDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <cuda_runtime.h>
#define CK(x)                                                 \
  do {                                                        \
    cudaError_t e = (x);                                      \
    if (e != cudaSuccess) {                                   \
      fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); \
      _exit(1);                                               \
    }                                                         \
  } while (0)

__global__ void touch(float *p) { p[threadIdx.x] = 1.0f; }

static double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// the child: the work, then {its clock before the end, the reset's time} into fd, then the end
static int child(int how, int fd) {
  void *big;
  CK(cudaMalloc(&big, (size_t)1 << 30));
  touch<<<1, 32>>>((float *)big);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  double msg[2] = {0, 0};
  if (how == 2) {
    double t0 = now();
    CK(cudaDeviceReset());
    msg[1] = now() - t0;
  }
  msg[0] = now();
  if (write(fd, msg, sizeof msg) != (ssize_t)sizeof msg) _exit(1);
  close(fd);
  if (how == 0) return 0;
  _exit(0);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  if (rounds < 1) rounds = 1;
  const char *names[] = {"return from main (the runtime's teardown)",
                         "_exit (the driver's release alone)", "cudaDeviceReset, then _exit"};
  std::vector<double> end[3], reset;
  for (int r = 0; r < rounds; r++) {
    for (int how = 0; how < 3; how++) {
      int p[2];
      if (pipe(p) != 0) return 1;
      pid_t pid = fork();
      if (pid < 0) return 1;
      if (pid == 0) {
        close(p[0]);
        return child(how, p[1]);
      }
      close(p[1]);
      double msg[2];
      bool got = read(p[0], msg, sizeof msg) == (ssize_t)sizeof msg;
      close(p[0]);
      int status;
      if (waitpid(pid, &status, 0) != pid || !got || !WIFEXITED(status) ||
          WEXITSTATUS(status) != 0) {
        fprintf(stderr, "exit_raw: the child (%s) failed\n", names[how]);
        return 1;
      }
      end[how].push_back(now() - msg[0]);
      if (how == 2) reset.push_back(msg[1]);
    }
  }
  printf("a CUDA process's end after its last statement (1 GiB, one kernel), median of %d:\n",
         rounds);
  for (int how = 0; how < 3; how++)
    printf("  %-44s %8.1f ms\n", names[how], median(end[how]) * 1e3);
  printf("  %-44s %8.1f ms\n", "  plus, before it, cudaDeviceReset itself", median(reset) * 1e3);
  return 0;
}
