/* The on-disk cache of compiled kernels (docs/kernels.md, "Cache"). A file per key, named by a
 * 128-bit hash of the key; the file holds the whole key, so that a hash collision is a miss,
 * never a wrong kernel. Written to a temporary file and renamed: readers never see half. */
#ifndef WL_KERNEL_CACHE_H
#define WL_KERNEL_CACHE_H

#include <stdbool.h>
#include <stddef.h>

struct wl_compiled {
  char *lowered; /* the kernel's lowered (mangled) name */
  char *ptx;     /* NUL-terminated */
  size_t ptx_len;
  unsigned char *cubin;
  size_t cubin_len;
  char *log; /* compiler warnings, NUL-terminated, may be empty */
};

void wl_compiled_free(struct wl_compiled *c);

/* The cache directory: the compile.cache_dir setting, else $WLRUN_CACHE_DIR, else
 * $XDG_CACHE_HOME/wlrun, else $HOME/.cache/wlrun. Malloc'd; NULL when none can be named. */
char *wl_cache_dir(void);

/* 32 hex digits of a 128-bit FNV-1a hash of data, into hex[33]. */
void wl_cache_hash(const void *data, size_t len, char hex[33]);

/* Looks the key up; true and *out filled on a hit. */
bool wl_cache_load(const char *dir, const char *key, size_t keylen, struct wl_compiled *out);

/* Holds the compile of key against other processes (--devices workers, shards on one machine,
 * two runs) that would compile it at the same time: an flock on DIR/HASH.lock, waited for in
 * steps of 10 ms while stop_pending() is false; after WL_CACHE_LOCK_NOTE seconds of waiting,
 * waiting(ctx, the lock's path) is called once (a compile that long, or a holder that hangs).
 * Returns the lock's descriptor for wl_cache_unlock, or -1 when it could not be taken (no
 * directory, a lock name that is not a regular file, a stop): then the caller compiles without
 * it. The lock saves work and is never needed for correctness: every entry is written whole and
 * renamed into place. Its holder removes what a writer of the same entry killed mid-write left
 * (HASH.wlk.XXXXXX.tmp). */
#define WL_CACHE_LOCK_NOTE 5
int wl_cache_lock(const char *dir, const char *key, size_t keylen, bool (*stop_pending)(void),
                  void (*waiting)(void *ctx, const char *path), void *ctx);
void wl_cache_unlock(const char *dir, const char *key, size_t keylen, int fd);

/* Stores c under key, creating dir when needed. False with a message on failure. */
bool wl_cache_store(const char *dir, const char *key, size_t keylen, const struct wl_compiled *c,
                    char *err, size_t errlen);

#endif
