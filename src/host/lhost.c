#include "lhost.h"
#include "laux.h"
#include "lhost_signals.h"

#include "cublas_prepare.h"
#include "cuda_device.h"
#include "nvml.h"
#include "nvrtc_load.h"
#include "side_thread.h"

#include "ljson.h"
#include "lsqlite.h"
#include "wl_exit.h"
#include "wl_modules.h"

#include <errno.h>
#include <lauxlib.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_KIND_KEY "wlrun.exit_kind"
#define EXIT_CODE_KEY "wlrun.exit_code"

/* A stop (a signal, the time limit) is not a script bug: one line, "interrupted (SIGTERM) at
 * train.lua:12", naming the script's line that was running (the first frame up the stack that is
 * the script's, past C functions and wlrun's own library), no traceback. */
static const char *stop_message(lua_State *L, const char *msg) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); level++) {
    int user = wl_user_level(L, level);
    if (!user) continue;
    luaL_where(L, user);
    size_t n;
    const char *where = lua_tolstring(L, -1, &n);
    if (n > 2) return lua_pushfstring(L, "%s at %s", msg, lua_pushlstring(L, where, n - 2));
    return msg;
  }
  return msg;
}

/* Message handler of every protected call: file:line message plus a traceback; remembers
 * the error's kind (for the exit code). */
static int message_handler(lua_State *L) {
  const char *kind = "script";
  const char *msg = NULL;
  bool bare = false; /* an error raised for the user, not a script bug: no traceback */
  if (lua_type(L, 1) == LUA_TTABLE && lua_getfield(L, 1, "message") == LUA_TSTRING) {
    msg = lua_tostring(L, -1);
    if (lua_getfield(L, 1, "kind") == LUA_TSTRING) kind = lua_tostring(L, -1);
    bare = lua_getfield(L, 1, "bare") == LUA_TBOOLEAN && lua_toboolean(L, -1);
  } else if (lua_type(L, 1) == LUA_TSTRING) {
    msg = lua_tostring(L, 1);
  } else if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) {
    msg = lua_tostring(L, -1);
  }
  if (!msg) msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  lua_pushstring(L, kind);
  lua_setfield(L, LUA_REGISTRYINDEX, EXIT_KIND_KEY);
  /* an exit code of its own (os.exit(3) that stopped a scenario run): 1 to 125 */
  lua_Integer code = 0;
  if (lua_type(L, 1) == LUA_TTABLE && lua_getfield(L, 1, "exit_code") == LUA_TNUMBER)
    code = lua_tointeger(L, -1);
  lua_pushinteger(L, code >= 1 && code <= 125 ? code : 0);
  lua_setfield(L, LUA_REGISTRYINDEX, EXIT_CODE_KEY);
  bool stop = strcmp(kind, "interrupted") == 0 || strcmp(kind, "timeout") == 0;
  if (bare) lua_pushstring(L, msg);
  else if (stop) lua_pushstring(L, stop_message(L, msg));
  else luaL_traceback(L, L, msg, 1);
  return 1;
}

/* The length of the well-formed UTF-8 character of two or more bytes at s (n bytes left), or 0. */
static size_t utf8_length(const unsigned char *s, size_t n) {
  size_t len = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                              : 0;
  if (len == 0 || len > n) return 0;
  unsigned char lo = s[0] == 0xe0 ? 0xa0 : s[0] == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = s[0] == 0xed ? 0x9f : s[0] == 0xf4 ? 0x8f : 0xbf;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return len;
}

/* The code point of the valid UTF-8 character s of len bytes (2 to 4). */
static unsigned long utf8_code_point(const unsigned char *s, size_t len) {
  unsigned long cp = s[0] & (0xff >> (len + 1));
  for (size_t i = 1; i < len; i++) cp = cp << 6 | (s[i] & 0x3f);
  return cp;
}

/* A character that shows nothing (a byte order mark, a zero-width space, a direction override
 * that reorders what follows): written \xHH like a control character, so that a message shows
 * that it is there. The same set as wlrun.text.printable's. */
static bool invisible(unsigned long cp) {
  return cp == 0xad || cp == 0x61c || cp == 0x180e || (cp >= 0x200b && cp <= 0x200f) ||
         (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff ||
         (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0xe0000 && cp <= 0xe007f);
}

/* the most of a message printed (a script's error() of a huge string, a huge compile log) */
enum { WL_MESSAGE_MAX = 1 << 20 };

/* one write for many bytes: stderr is unbuffered */
struct message_out {
  char buf[4096];
  size_t used;
};

static void message_put(struct message_out *o, const void *bytes, size_t n) {
  if (o->used + n > sizeof o->buf) {
    fwrite(o->buf, 1, o->used, stderr);
    o->used = 0;
  }
  if (n > sizeof o->buf) {
    fwrite(bytes, 1, n, stderr);
    return;
  }
  memcpy(o->buf + o->used, bytes, n);
  o->used += n;
}

/* "wlrun: MESSAGE" on stderr, in one write, cut after WL_MESSAGE_MAX bytes. A message quotes
 * data (a name from a results file, a script's error value): no control character of it reaches
 * the terminal. C0 but newline and tab, DEL, C1, invisible characters and bytes that are not
 * UTF-8 are written \xHH, as wlrun.text.printable writes them. */
static void print_message(const char *msg) {
  const unsigned char *s = (const unsigned char *)msg;
  size_t n = strlen(msg), shown = n > WL_MESSAGE_MAX ? WL_MESSAGE_MAX : n;
  struct message_out o = {.used = 0};
  message_put(&o, "wlrun: ", 7);
  for (size_t i = 0; i < shown;) {
    size_t len = s[i] >= 0x80 ? utf8_length(s + i, n - i) : 1;
    bool c1 = len == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0;
    bool hidden = len > 1 && invisible(utf8_code_point(s + i, len));
    if (len == 0 || c1 || hidden || (s[i] < 0x20 && s[i] != '\n' && s[i] != '\t') || s[i] == 0x7f) {
      for (size_t k = 0; k < (len ? len : 1); k++) {
        char hex[5];
        snprintf(hex, sizeof hex, "\\x%02x", s[i + k]);
        message_put(&o, hex, 4);
      }
      i += len ? len : 1;
    } else {
      message_put(&o, s + i, len);
      i += len;
    }
  }
  if (shown < n) {
    char more[96];
    int m = snprintf(more, sizeof more, "... (%zu more bytes of the message not shown)", n - shown);
    message_put(&o, more, (size_t)m);
  }
  message_put(&o, "\n", 1);
  fwrite(o.buf, 1, o.used, stderr);
}

/* Runs the function below nargs arguments on the stack, protected; on error prints the
 * message with its traceback and returns the error's exit code. Leaves nresults on success. */
static enum wl_exit protected_call(lua_State *L, int nargs, int nresults) {
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, message_handler);
  lua_insert(L, base);
  wl_signals_running(L); /* a stop that came between two protected calls is raised at once */
  int status = lua_pcall(L, nargs, nresults, base);
  wl_signals_running(NULL); /* and the time limit, if any, is over: the code it limited ended */
  lua_remove(L, base);
  if (status == LUA_OK) return WL_EXIT_OK;
  print_message(lua_tostring(L, -1) ? lua_tostring(L, -1) : "(no message)");
  lua_pop(L, 1);
  if (status == LUA_ERRMEM) return WL_EXIT_SCRIPT;
  lua_getfield(L, LUA_REGISTRYINDEX, EXIT_KIND_KEY);
  enum wl_exit code = wl_exit_from_kind(lua_tostring(L, -1));
  if (code == WL_EXIT_INTERRUPTED) code = (enum wl_exit)wl_stop_exit_code(); /* 128 + the signal */
  lua_getfield(L, LUA_REGISTRYINDEX, EXIT_CODE_KEY);
  if (lua_tointeger(L, -1) > 0) code = (enum wl_exit)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return code;
}

/* Loads lua/REL from the embedded library (the chunk is named after its source path); 0 when
 * the binary has no such file. */
static int load_embedded(lua_State *L, const char *rel, int *status) {
  const char *path = lua_pushfstring(L, "lua/%s", rel);
  const struct wl_embedded_file *file = wl_embedded_find(path);
  if (!file) {
    lua_pop(L, 1);
    return 0;
  }
  const char *chunkname = lua_pushfstring(L, "@%s", path);
  *status = luaL_loadbufferx(L, (const char *)file->data, file->size, chunkname, "t");
  return 1;
}

/* Loads DIR/REL; 0 when there is no such file. */
static int load_from_dir(lua_State *L, const char *dir, const char *rel, int *status) {
  const char *path = lua_pushfstring(L, "%s/%s", dir, rel);
  FILE *f = fopen(path, "r");
  if (!f) {
    lua_pop(L, 1);
    return 0;
  }
  fclose(f);
  *status = luaL_loadfilex(L, path, "t");
  return 1;
}

/* records the chunk on top of the stack as wlrun's own (WL_LIBRARY_CHUNKS) */
static void mark_library_chunk(lua_State *L) {
  lua_Debug ar;
  lua_pushvalue(L, -1);
  lua_getinfo(L, ">S", &ar);
  if (lua_getfield(L, LUA_REGISTRYINDEX, WL_LIBRARY_CHUNKS) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, WL_LIBRARY_CHUNKS);
  }
  lua_pushboolean(L, 1);
  lua_setfield(L, -2, ar.source);
  lua_pop(L, 1);
}

/* package.searchers entry for wlrun.*: WLRUN_LUA_DIR when set (development), then the library
 * embedded in the binary. */
static int search_embedded(lua_State *L) {
  const char *name = wl_check_string(L, 1);
  if (strcmp(name, "wlrun") != 0 && strncmp(name, "wlrun.", 6) != 0) {
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
  }
  /* wlrun.a.b is wlrun/a/b.lua, or wlrun/a/b/init.lua for a package */
  const char *base = lua_pushfstring(L, "wlrun/%s", strcmp(name, "wlrun") == 0 ? "init" : name + 6);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addgsub(&b, base, ".", "/");
  luaL_pushresult(&b);
  const char *stem = lua_tostring(L, -1);
  const char *dir = getenv("WLRUN_LUA_DIR");
  struct stat
      st; /* a copy of the library that is not there is said, never replaced by the embedded one */
  if (dir && *dir && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    return wl_raise(L, WL_EXIT_IO,
                    "WLRUN_LUA_DIR=%s: not a directory (it names where wlrun/*.lua are)", dir);
  for (int source = dir && *dir ? 0 : 1; source < 2; source++) {
    for (int form = 0; form < 2; form++) {
      const char *rel = lua_pushfstring(L, form == 0 ? "%s.lua" : "%s/init.lua", stem);
      int status = LUA_OK;
      if (!(source == 0 ? load_from_dir(L, dir, rel, &status) : load_embedded(L, rel, &status))) {
        lua_pop(L, 1);
        continue;
      }
      if (status != LUA_OK)
        return wl_raise(L, WL_EXIT_SCRIPT, "error loading module '%s':\n\t%s", name,
                        lua_tostring(L, -1));
      mark_library_chunk(L);
      lua_pushstring(L, rel);
      return 2;
    }
  }
  lua_pushfstring(L, "no %sembedded file '%s.lua' or '%s/init.lua'",
                  dir && *dir ? "file (WLRUN_LUA_DIR) or " : "", stem, stem);
  return 1;
}

static int error_tostring(lua_State *L) {
  lua_getfield(L, 1, "message");
  if (lua_type(L, -1) != LUA_TSTRING) lua_pushliteral(L, "wlrun error");
  return 1;
}

/* the kinds of error (each an exit code, wl_exit.c); core.error_kinds in Lua */
static const char *const error_kinds[] = {"script",      "usage",   "config",     "no_device",
                                          "cuda",        "compile", "regression", "io",
                                          "interrupted", "timeout", "crash",      NULL};

/* wl.error(kind, message [, level]): raise an error with a kind (an exit code). */
static int core_error(lua_State *L) {
  int kind = wl_check_option(L, 1, NULL, error_kinds);
  const char *msg = wl_check_string(L, 2);
  int level = (int)wl_opt_integer(L, 3, 1);
  lua_createtable(L, 0, 2);
  lua_pushstring(L, error_kinds[kind]);
  lua_setfield(L, -2, "kind");
  if (level > 0) level = wl_user_level(L, level); /* never a position inside wlrun's library */
  if (level > 0) {
    luaL_where(L, level);
    lua_pushstring(L, msg);
    lua_concat(L, 2);
  } else {
    lua_pushstring(L, msg);
    lua_pushboolean(
        L, 1); /* level 0 (or no script's frame): a message for the user, without a traceback */
    lua_setfield(L, -3, "bare");
  }
  lua_setfield(L, -2, "message");
  luaL_setmetatable(L, "wlrun.error");
  return lua_error(L);
}

/* core.on_warning(fn | nil): who writes the warnings of the C parts (wl_warn) */
static int core_on_warning(lua_State *L) {
  if (!lua_isnil(L, 1)) wl_check_type(L, 1, LUA_TFUNCTION);
  lua_settop(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, WL_WARNING_HANDLER);
  return 0;
}

static int open_core(lua_State *L) {
  const struct wl_cli *cli = lua_touserdata(L, lua_upvalueindex(1));
  lua_newtable(L);
  lua_pushliteral(L, WLRUN_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushcfunction(L, core_error);
  lua_setfield(L, -2, "error");
  lua_pushcfunction(L, core_on_warning);
  lua_setfield(L, -2, "on_warning");
  lua_newtable(L);
  for (int i = 0; error_kinds[i]; i++) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, error_kinds[i]);
  }
  lua_setfield(L, -2, "error_kinds");
  wl_signals_open(L);
  wl_open_clock(L);
  wl_open_stats(L);
  wl_open_printable(L);
  wl_open_settings(L, cli);
  wl_open_device(L);
  wl_open_tensor(L);
  wl_open_stream(L);
  wl_open_graph(L);
  wl_open_kernel(L);
  wl_open_launch(L);
  wl_open_library(L);
  wl_open_ops(L);
  wl_open_cublas(L);
  wl_open_cublaslt(L);
  wl_open_gpu_clock(L);
  wl_open_nvtx(L);
  return 1;
}

/* The internals of the Lua library, apart from what scripts see: the timed loops of the
 * measurement engine (wlrun.engine), and child processes, files and clocks of the host
 * (wlrun.process). */
static int open_engine(lua_State *L) {
  lua_newtable(L);
  wl_open_timing(L);
  wl_open_cupti_timing(L);
  return 1;
}

static int open_process(lua_State *L) {
  lua_newtable(L);
  wl_open_system(L);
  return 1;
}

/* Ends the process now, without the exit handlers: standard output checked
 * (wl_host_check_stdout), the clocks unlocked (nvml.c's own handler) and every stream flushed, the
 * script's files too (_exit writes none of them). */
static _Noreturn void end_now(int code) {
  code = wl_host_check_stdout(code);
  wl_nvml_unlock_clocks();
  fflush(NULL);
  _exit(code);
}

/* A wait of the end that gave up (what: what it waited for; waited: its limit): ends the
 * process, saying why; code: the run's, else `otherwise`. */
static _Noreturn void gave_up(const char *what, int waited, int code, int otherwise) {
  if (wl_side_thread_abandon) {
    fprintf(stderr,
            "wlrun: interrupted while waiting for %s at the end; the process ends at once\n", what);
    end_now(code == WL_EXIT_OK ? wl_stop_exit_code() : (int)code);
  }
  fprintf(stderr, "wlrun: %s still works after %d s; the process ends without it\n", what, waited);
  end_now(code == WL_EXIT_OK ? otherwise : code);
}

void wl_host_finish_threads(int code) {
  wl_signals_ending();
  /* a Ctrl-C after the Lua code's last instruction, which no Lua code raised: the end's */
  if (wl_stop_pending()) wl_side_thread_abandon = 1;
  if (!wl_nvrtc_finish(WL_PREPARE_EXIT_WAIT_S))
    gave_up("NVRTC's loading thread", WL_PREPARE_EXIT_WAIT_S, code, code);
  if (!wl_cublas_prepare_finish())
    gave_up("wl.cublas.prepare's thread", WL_PREPARE_EXIT_WAIT_S, code, code);
  if (!wl_nvml_finish(WL_NVML_EXIT_WAIT_S))
    gave_up("NVML's loading thread", WL_NVML_EXIT_WAIT_S, code, code);
}

/* Why an earlier write to standard output failed, its errno long gone (a script's print does
 * not say): a reader gone is EPIPE; a device that refuses every write (/dev/full) says why again
 * to a write of nothing, which changes nothing. */
static const char *earlier_failure(void) {
  if (wl_stdout_broken()) return strerror(EPIPE);
  if (write(fileno(stdout), "", 0) < 0) return strerror(errno);
  return "a write failed";
}

int wl_host_check_stdout(int code) {
  static bool checked; /* once: main's return comes after wl_host_end's */
  if (checked) return code;
  checked = true;
  const char *why = fflush(stdout) != 0 ? strerror(errno)
                    : ferror(stdout)    ? earlier_failure()
                                        : NULL;
  if (why && code != WL_EXIT_IO) { /* an I/O error has been reported already: this one */
    fprintf(stderr, "wlrun: cannot write to standard output: %s\n", why);
    if (code == WL_EXIT_OK) code = WL_EXIT_IO;
  }
  return code;
}

/* Variables by which a tool puts code of its own into the process (a profiler, a sanitizer, a
 * preloaded library): its exit handlers may still have work to do; and wlrun's own switch. */
static const char *const tool_variables[] = {"LD_PRELOAD", "LD_AUDIT", "CUDA_INJECTION64_PATH",
                                             "NVTX_INJECTION64_PATH", "WLRUN_EXIT_HANDLERS"};

/* Runtimes whose work at the end is an exit handler, found by a symbol of theirs in the process
 * (linked in, or preloaded): a sanitizer's report (its leak check, ThreadSanitizer's exit
 * code), gcov's counts (--coverage), gprof's gmon.out (-pg). */
extern void __lsan_do_leak_check(void) __attribute__((weak));
extern void __tsan_init(void) __attribute__((weak));
extern void __gcov_init(void *) __attribute__((weak));
extern void __gmon_start__(void) __attribute__((weak));

static bool exit_handlers_wanted(void) {
  if (__lsan_do_leak_check || __tsan_init || __gcov_init || __gmon_start__) return true;
  for (size_t i = 0; i < sizeof tool_variables / sizeof *tool_variables; i++) {
    const char *v = getenv(tool_variables[i]);
    if (v && *v) return true;
  }
  return false;
}

int wl_host_finish_device(int code) {
  cudaError_t err;
  /* given up: not through the state's close, whose frees would wait for the device, nor the
   * runtime's teardown */
  if (!wl_device_finish(WL_PREPARE_EXIT_WAIT_S, &err))
    gave_up("the work queued on the device (never waited for)", WL_PREPARE_EXIT_WAIT_S, code,
            WL_EXIT_CUDA);
  if (err != cudaSuccess && code == WL_EXIT_OK) {
    fprintf(
        stderr,
        "wlrun: work that the script queued and never waited for failed on the device: %s: %s\n",
        cudaGetErrorName(err), cudaGetErrorString(err));
    code = WL_EXIT_CUDA;
  }
  return code;
}

int wl_host_end(int code) {
  code = wl_host_check_stdout(code);
  if (!exit_handlers_wanted()) end_now(code);
  return code;
}

/* os.exit ends the process there (C's exit, after closing the state when asked): the threads
 * of wlrun's own are finished first (cublas_prepare.h), then the library's os.exit, the upvalue */
static int exit_after_threads(lua_State *L) {
  int isint = 0;
  lua_Integer n = lua_tointegerx(L, 1, &isint);
  int code = lua_isboolean(L, 1)     ? (lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE)
             : lua_isnoneornil(L, 1) ? EXIT_SUCCESS
             : isint                 ? (int)n
                                     : EXIT_FAILURE;
  wl_host_finish_threads(code);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

static int setup_state(lua_State *L) {
  const struct wl_cli *cli = lua_touserdata(L, 1);
  luaL_openlibs(L);
  lua_getglobal(L, "os");
  lua_getfield(L, -1, "exit");
  lua_pushcclosure(L, exit_after_threads, 1);
  lua_setfield(L, -2, "exit");
  lua_pop(L, 1);
  if (luaL_newmetatable(L, "wlrun.error")) {
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushlightuserdata(L, (void *)cli);
  lua_pushcclosure(L, open_core, 1);
  lua_setfield(L, -2, "wlrun.core");
  lua_pushcfunction(L, open_engine);
  lua_setfield(L, -2, "wlrun.engine");
  lua_pushcfunction(L, open_process);
  lua_setfield(L, -2, "wlrun.process");
  lua_pushcfunction(L, luaopen_wlrun_json);
  lua_setfield(L, -2, "wlrun.json");
  lua_pushcfunction(L, luaopen_wlrun_sqlite);
  lua_setfield(L, -2, "wlrun.sqlite");
  lua_pop(L, 1);
  /* the embedded searcher goes right after the preload searcher */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, search_embedded);
  for (lua_Integer i = (lua_Integer)luaL_len(L, -2); i >= 2; i--) {
    lua_geti(L, -2, i);
    lua_seti(L, -3, i + 1);
  }
  lua_seti(L, -2, 2);
  lua_pop(L, 2);
  return 0;
}

static int panic(lua_State *L) {
  const char *msg = lua_tostring(L, -1);
  fprintf(stderr, "wlrun: unprotected Lua error: %s\n", msg ? msg : "(no message)");
  wl_host_finish_threads(WL_EXIT_SCRIPT);
  exit(WL_EXIT_SCRIPT);
}

lua_State *wl_host_new(const struct wl_cli *cli) {
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "wlrun: cannot create the Lua state: out of memory\n");
    return NULL;
  }
  lua_atpanic(L, panic);
  wl_signals_install(cli && cli->worker_queue != NULL);
  lua_pushcfunction(L, setup_state);
  lua_pushlightuserdata(L, (void *)cli);
  if (protected_call(L, 1, 0) != WL_EXIT_OK) {
    lua_close(L);
    return NULL;
  }
  return L;
}

static int call_main(lua_State *L) {
  lua_getglobal(L, "require");
  lua_pushliteral(L, "wlrun.host");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_call(L, 0, 0);
  return 0;
}

enum wl_exit wl_host_main(lua_State *L) {
  lua_pushcfunction(L, call_main);
  return protected_call(L, 0, 0);
}

void wl_host_close(lua_State *L) {
  if (!L) return;
  wl_signals_running(NULL);
  wl_cublas_prepare_wait(); /* its thread uses cuBLASLt, which the state's close may release */
  lua_close(L);
}
