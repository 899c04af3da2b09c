/* wlrun.process, files and directories: listing, what a path is (never following a link) and
 * where its symbolic links lead, making directories (temporary ones by mkdtemp), removing a tree
 * without following a symbolic link, new files made beside a target (file_beside.h), links made
 * only where nothing is, and flock locks (one writer per output: wlrun.results.journal). */
#include "file_beside.h"
#include "laux.h"
#include "lsystem.h"
#include "wl_exit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <lauxlib.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* core.list_dir(path) -> the names in a directory (without . and ..), or nil and the error */
static int l_list_dir(lua_State *L) {
  DIR *d = opendir(wl_check_cstring(L, 1));
  if (!d) return wl_push_failure(L);
  lua_newtable(L);
  lua_Integer n = 0;
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
      lua_pushstring(L, e->d_name);
      lua_rawseti(L, -2, ++n);
    }
    errno = 0;
  }
  int failed = errno;
  closedir(d);
  if (failed) {
    errno = failed;
    return wl_push_failure(L);
  }
  return 1;
}

/* what file_type calls a file of this mode */
static const char *kind_of(mode_t mode) {
  return S_ISREG(mode)    ? "file"
         : S_ISDIR(mode)  ? "directory"
         : S_ISLNK(mode)  ? "link"
         : S_ISFIFO(mode) ? "fifo"
         : S_ISSOCK(mode) ? "socket"
                          : "other";
}

/* core.file_type(path [, follow]) -> "file", "directory", "link", "fifo", "socket" or "other" (a
 * device), never following a symbolic link (lstat), or through them with follow (stat: what
 * opening path reaches); or nil and the error. For directories another program writes into and
 * files a user names: a FIFO would block whoever opens it to read, /dev/zero never ends. */
static int l_file_type(lua_State *L) {
  struct stat st;
  const char *path = wl_check_cstring(L, 1);
  if ((lua_toboolean(L, 2) ? stat(path, &st) : lstat(path, &st)) != 0) return wl_push_failure(L);
  lua_pushstring(L, kind_of(st.st_mode));
  return 1;
}

/* whether the directory of the name `path` (up to its last '/') is on /proc, whose links
 * (/proc/self/fd/1, where /dev/stdout leads) stand for files a process has open, not for names */
static bool in_proc(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  int len = slash ? (int)(slash - path) + 1 : 0;
  snprintf(dir, sizeof dir, "%.*s", len ? len : 1, len ? path : ".");
  struct statfs fs;
  return statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

/* process.link_end(path) -> where the symbolic links from path lead, by name: each link's text
 * (readlink(2); a relative one taken from the link's directory) until a name that is no link;
 * what is there as file_type says, or nil where nothing is yet (a link to nothing); and whether a
 * link on the way is one of /proc's (true: its text names no file to write). path itself where it
 * is no link. Or nil and the error ("Too many levels of symbolic links" after 40 links). */
static int l_link_end(lua_State *L) {
  char cur[PATH_MAX], next[PATH_MAX], text[PATH_MAX];
  const char *path = wl_check_cstring(L, 1);
  if (strlen(path) >= sizeof cur) {
    errno = ENAMETOOLONG;
    return wl_push_failure(L);
  }
  snprintf(cur, sizeof cur, "%s", path);
  bool proc = false;
  for (int links = 0; links <= 40; links++) {
    struct stat st;
    bool none = lstat(cur, &st) != 0;
    if (none && errno != ENOENT) return wl_push_failure(L);
    if (none || !S_ISLNK(st.st_mode)) {
      lua_pushstring(L, cur);
      if (none) lua_pushnil(L);
      else lua_pushstring(L, kind_of(st.st_mode));
      lua_pushboolean(L, proc);
      return 3;
    }
    if (links == 40) break;
    proc = proc || in_proc(cur);
    ssize_t n = readlink(cur, text, sizeof text - 1);
    if (n < 0) return wl_push_failure(L);
    text[n] = '\0';
    const char *slash = strrchr(cur, '/');
    int dir = text[0] == '/' || !slash ? 0 : (int)(slash - cur + 1);
    int len = snprintf(next, sizeof next, "%.*s%s", dir, cur, text);
    if (len < 0 || (size_t)len >= sizeof next) {
      errno = ENAMETOOLONG;
      return wl_push_failure(L);
    }
    memcpy(cur, next, (size_t)len + 1);
  }
  errno = ELOOP;
  return wl_push_failure(L);
}

/* process.file_id(path) -> "DEVICE:INODE" of the file path names, through symbolic links
 * (stat); or nil and the error. Two paths name one file when their ids are equal: a link, a
 * hard link, another spelling. */
static int l_file_id(lua_State *L) {
  struct stat st;
  if (stat(wl_check_cstring(L, 1), &st) != 0) return wl_push_failure(L);
  lua_pushfstring(L, "%I:%I", (lua_Integer)st.st_dev, (lua_Integer)st.st_ino);
  return 1;
}

/* core.make_dir(path) -> true (made, or already there), or nil and the error; its mode is the
 * umask's, as mkdir(1) makes it (a private directory is temp_dir's) */
static int l_make_dir(lua_State *L) {
  if (mkdir(wl_check_cstring(L, 1), 0777) != 0 && errno != EEXIST) return wl_push_failure(L);
  lua_pushboolean(L, 1);
  return 1;
}

/* core.temp_dir([prefix [, parent]]) -> a new directory only this user can enter, made by
 * mkdtemp(3) in parent, else $TMPDIR (or /tmp), named prefix + 6 random characters; or nil, the
 * reason and the parent */
static int l_temp_dir(lua_State *L) {
  const char *prefix = lua_isnoneornil(L, 1) ? "wlrun-" : wl_check_cstring(L, 1);
  wl_arg_check(L, strchr(prefix, '/') == NULL, 1, "a name without '/' expected");
  const char *parent = lua_isnoneornil(L, 2) ? getenv("TMPDIR") : wl_check_cstring(L, 2);
  if (!parent || !*parent) parent = "/tmp";
  char path[PATH_MAX];
  int len = snprintf(path, sizeof path, "%s/%sXXXXXX", parent, prefix);
  if (len < 0 || (size_t)len >= sizeof path) {
    errno = ENAMETOOLONG;
  } else if (mkdtemp(path)) {
    lua_pushstring(L, path);
    return 1;
  }
  wl_push_failure(L);
  lua_pushstring(L, parent);
  return 3;
}

/* closes a file of process.create_beside, as io.open's files close */
static int close_stream(lua_State *L) {
  luaL_Stream *p = wl_check_udata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(p->f) == 0, NULL);
}

/* process.create_beside(path) -> a Lua file open for writing, new (never one that was there: no
 * link followed, nothing truncated), in path's directory, and its name (file_beside.h); or nil
 * and the error. The caller writes, closes, and renames it over path (wlrun.text.files). */
static int l_create_beside(lua_State *L) {
  const char *target = wl_check_cstring(L, 1);
  char tmp[PATH_MAX];
  luaL_Stream *p = lua_newuserdatauv(L, sizeof *p, 0);
  p->closef = NULL; /* a closed file until it is open */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  int fd = wl_create_beside(target, tmp, sizeof tmp);
  if (fd < 0) return wl_push_failure(L);
  p->f = fdopen(fd, "wb");
  if (!p->f) {
    int e = errno;
    close(fd);
    unlink(tmp);
    errno = e;
    return wl_push_failure(L);
  }
  p->closef = close_stream;
  lua_pushstring(L, tmp);
  return 2;
}

/* pushes nil and "busy" where flock found the lock held (EWOULDBLOCK), else nil and the error */
static int push_lock_failure(lua_State *L) {
  if (errno != EWOULDBLOCK) return wl_push_failure(L);
  lua_pushnil(L);
  lua_pushliteral(L, "busy");
  return 2;
}

/* process.lock(file) -> true, or nil and "busy" (another open file holds it) or the error: an
 * exclusive flock(2) on an open Lua file, which lasts while it stays open in this process (the
 * kernel lets go of it when the process ends, however it ends) */
static int l_lock(lua_State *L) {
  luaL_Stream *p = wl_check_udata(L, 1, LUA_FILEHANDLE);
  if (!p->closef || !p->f) return wl_raise(L, WL_EXIT_SCRIPT, "process.lock: the file is closed");
  if (flock(fileno(p->f), LOCK_EX | LOCK_NB) != 0) return push_lock_failure(L);
  lua_pushboolean(L, 1);
  return 1;
}

/* process.lock_path(path) -> a Lua file (read-only) holding an exclusive flock on the file at
 * path, and its id as file_id gives it; or nil and "busy" (a live process holds it), or the error
 * (nothing there: "No such file or directory"). A symbolic link is not followed; a FIFO or a
 * device is not waited on. Closing the file lets go of the lock. */
static int l_lock_path(lua_State *L) {
  const char *path = wl_check_cstring(L, 1);
  luaL_Stream *p = lua_newuserdatauv(L, sizeof *p, 0);
  p->closef = NULL; /* a closed file until it is open */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return wl_push_failure(L);
  struct stat st;
  int failed = fstat(fd, &st) != 0                 ? errno
               : !S_ISREG(st.st_mode)              ? EINVAL /* never a journal of wlrun's */
               : flock(fd, LOCK_EX | LOCK_NB) != 0 ? errno
                                                   : 0;
  if (failed) {
    close(fd);
    errno = failed;
    return push_lock_failure(L);
  }
  p->f = fdopen(fd, "rb");
  if (!p->f) {
    int e = errno;
    close(fd);
    errno = e;
    return wl_push_failure(L);
  }
  p->closef = close_stream;
  lua_pushfstring(L, "%I:%I", (lua_Integer)st.st_dev, (lua_Integer)st.st_ino);
  return 2;
}

/* A file system without hard links (vfat, some FUSE and scratch file systems: link(2) refused)
 * takes the name another way: an empty file made there only where nothing is (O_EXCL), locked as
 * a live run's journal is (another run that finds it sees it held), then `from` renamed over it.
 * -1 with errno where that fails too. */
static int take_name_without_link(const char *from, const char *to) {
  int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  (void)flock(fd, LOCK_EX | LOCK_NB); /* it is ours alone until the rename */
  int r = rename(from, to);
  int e = errno;
  close(fd);
  if (r != 0) (void)unlink(to);
  errno = e;
  return r;
}

/* process.link(from, to) -> true, or nil and the error: a second name for a file, made only where
 * nothing is (link(2): "File exists" otherwise), so that two processes cannot both take a name;
 * where the file system has no hard links, `from` is renamed to `to` instead (then gone) */
static int l_link(lua_State *L) {
  const char *from = wl_check_cstring(L, 1), *to = wl_check_cstring(L, 2);
  if (link(from, to) != 0) {
    bool no_links = errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS || errno == EMLINK;
    if (!no_links || take_name_without_link(from, to) != 0) return wl_push_failure(L);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* records the name that failed, keeping errno */
static void failed_at(char *where, size_t size, const char *name) {
  int e = errno;
  snprintf(where, size, "%s", name);
  errno = e;
}

/* Removes what the directory open as fd holds, depth first, by names relative to it (openat,
 * unlinkat): a symbolic link is removed, never followed, so nothing outside the tree is touched.
 * Closes fd. Returns 0, or -1 with errno and the name that failed in `where`. */
static int remove_entries(int fd, int depth, char *where, size_t size) {
  DIR *d = fdopendir(fd);
  if (!d) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  int rc = 0;
  struct dirent *e;
  errno = 0;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    const char *name = e->d_name;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) rc = -1; /* ENOENT: gone meanwhile, nothing to remove */
    } else if (S_ISDIR(st.st_mode)) {
      int sub = -1;
      if (depth >= 256) errno = ELOOP;
      else sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        rc = -1;
      } else if (remove_entries(sub, depth + 1, where, size) != 0) {
        rc = -1;
        name = NULL; /* `where` names the entry inside that failed */
      } else if (unlinkat(dirfd(d), name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
        rc = -1;
      }
    } else if (unlinkat(dirfd(d), name, 0) != 0 && errno != ENOENT) {
      rc = -1;
    }
    if (rc != 0 && name) failed_at(where, size, name);
    if (rc == 0) errno = 0;
  }
  int failed = (rc != 0 || errno != 0) ? (errno ? errno : EIO) : 0;
  closedir(d);
  errno = failed;
  return failed ? -1 : 0;
}

/* core.remove_tree(dir) -> true, or nil and the reason: removes the directory dir and all it
 * holds, never following a symbolic link (dir itself being one is refused) */
static int l_remove_tree(lua_State *L) {
  const char *path = wl_check_cstring(L, 1);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) {
      errno = e;
      return wl_push_failure(L);
    }
    lua_pushnil(L);
    lua_pushliteral(L, "a symbolic link, not a directory: not removed");
    return 2;
  }
  char where[256] = "";
  if (remove_entries(fd, 0, where, sizeof where) != 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s%s%s", where, *where ? ": " : "", strerror(errno));
    return 2;
  }
  if (rmdir(path) != 0) return wl_push_failure(L);
  lua_pushboolean(L, 1);
  return 1;
}

void wl_open_system_files(lua_State *L) {
  static const luaL_Reg fns[] = {{"list_dir", l_list_dir},
                                 {"file_type", l_file_type},
                                 {"file_id", l_file_id},
                                 {"link_end", l_link_end},
                                 {"make_dir", l_make_dir},
                                 {"temp_dir", l_temp_dir},
                                 {"remove_tree", l_remove_tree},
                                 {"create_beside", l_create_beside},
                                 {"lock", l_lock},
                                 {"lock_path", l_lock_path},
                                 {"link", l_link},
                                 {NULL, NULL}};
  luaL_setfuncs(L, fns, 0);
}
