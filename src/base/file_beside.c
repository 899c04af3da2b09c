#include "file_beside.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* 6 letters and digits, from getrandom(2); from the clock and the process id where it fails (a
 * name that someone guessed is EEXIST, and another is tried) */
static void random_letters(char out[7]) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static uint64_t counter;
  unsigned char bytes[6];
  if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
                 ++counter * 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(x >> (8 * i));
  }
  for (size_t i = 0; i < sizeof bytes; i++) out[i] = letters[bytes[i] % (sizeof letters - 1)];
  out[6] = '\0';
}

int wl_create_beside(const char *target, char *tmp, size_t size) {
  for (int attempt = 0; attempt < 100; attempt++) {
    char letters[7];
    random_letters(letters);
    int len = snprintf(tmp, size, "%s.%s.tmp", target, letters);
    if (len < 0 || (size_t)len >= size) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1; /* EEXIST: 100 names taken */
}
