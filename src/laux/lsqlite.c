/* wlrun.sqlite (lsqlite.h): connections and prepared statements as Lua objects, in the manner of
 * liolib.c: a userdata made in its closed state before the resource is acquired, one check
 * function called first in every method, one close path for close, __gc and __close that clears
 * the handle. A statement keeps its connection alive (its user value) and is refused once the
 * connection is closed (sqlite3_close_v2 leaves a closed connection to the last finalize).
 *
 *   sqlite.open(path, {readonly =, create =, immutable =, timeout = seconds, label = text}) -> db
 *                                a file's path, never one of SQLite's special names (":memory:",
 *                                "file:..." URIs); a FIFO, a directory or a device is refused
 *   db:exec(sql)                 statements that take no values: the schema, BEGIN, COMMIT
 *   db:prepare(sql) -> stmt      one statement; values only through its parameters ?1..?n
 *   stmt:run(...) -> changes     binds the arguments, steps to the end, resets
 *   stmt:rows(...) -> {{column = value, ...}, ...}
 *   stmt:close()
 *   db:run(sql, ...), db:rows(sql, ...)   prepare, run or rows, close
 *   db:close(), db:readonly(), db:changes(), db:last_insert_rowid()
 *
 * Errors of the database name it by its label ("SQLite database 'path'" unless given) and give
 * SQLite's message, kind io (exit 9): a file that is not a database, a locked, read-only or full
 * one. Misuse from Lua (a closed object, a value that cannot be stored) is kind script. */
#include "lsqlite.h"
#include "laux.h"
#include "wl_exit.h"

#include <lauxlib.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define DB_MT "wlrun.sqlite.db"
#define STMT_MT "wlrun.sqlite.statement"

/* closed when handle is NULL; user value 1: the label of its messages */
struct db {
  sqlite3 *handle;
  double timeout;    /* seconds a busy database is waited for */
  double busy_since; /* when the current wait began (monotonic seconds) */
};

/* closed when handle is NULL; user value 1: its connection's userdata */
struct stmt {
  sqlite3_stmt *handle;
  struct db *db;
};

static double monotonic(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* SQLite's message for the connection's last error, with the system's reason where the error
 * came from the operating system ("unable to open database file (Too many open files)") */
static void error_text(sqlite3 *handle, int rc, char *msg, size_t len) {
  if (!handle) {
    snprintf(msg, len, "%s", sqlite3_errstr(rc));
    return;
  }
  int os = sqlite3_system_errno(handle);
  if (os) snprintf(msg, len, "%s (%s)", sqlite3_errmsg(handle), strerror(os));
  else snprintf(msg, len, "%s", sqlite3_errmsg(handle));
}

/* Raises the connection's last error, kind io, naming the database (its label at db_arg). */
static int db_error(lua_State *L, int db_arg, sqlite3 *handle, const char *doing) {
  char msg[512];
  error_text(handle, SQLITE_NOMEM, msg, sizeof msg);
  wl_stop_check(L); /* a wait given up for Ctrl-C is the interrupt, not a locked database */
  lua_getiuservalue(L, db_arg, 1);
  const char *label = lua_tostring(L, -1);
  return wl_raise(L, WL_EXIT_IO, "%s: %s%s%s", label ? label : "SQLite database", doing,
                  *doing ? ": " : "", msg);
}

/* While another process holds the lock: short sleeps, growing, until the timeout or a stop
 * (Ctrl-C) is asked; 0 gives up and the statement returns SQLITE_BUSY. */
static int busy_wait(void *arg, int count) {
  struct db *d = arg;
  double now = monotonic();
  if (count == 0) d->busy_since = now;
  if (wl_stop_pending() || now - d->busy_since >= d->timeout) return 0;
  long ms = count < 10 ? 1 + count : 20;
  struct timespec nap = {0, ms * 1000000L};
  nanosleep(&nap, NULL);
  return 1;
}

/* Every PROGRESS_STEPS steps of SQLite's virtual machine: a stop (Ctrl-C) asked for ends the
 * statement with SQLITE_INTERRUPT, which step() and db_error() raise as the interrupt. A query
 * can run for as long as a file's schema makes it (a view over a recursive query). */
#define PROGRESS_STEPS 10000
static int progress_stop(void *arg) {
  (void)arg;
  return wl_stop_pending();
}

static struct db *check_db(lua_State *L, int arg, const char *fn) {
  struct db *d = wl_check_udata(L, arg, DB_MT);
  if (!d->handle) wl_raise(L, WL_EXIT_SCRIPT, "%s: database used after close", fn);
  return d;
}

static struct stmt *check_stmt(lua_State *L, int arg, const char *fn) {
  struct stmt *s = wl_check_udata(L, arg, STMT_MT);
  if (!s->handle) wl_raise(L, WL_EXIT_SCRIPT, "%s: statement used after close", fn);
  if (!s->db->handle)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: statement used after its database was closed", fn);
  return s;
}

/* the one close path of a connection: close, __gc, __close */
static int db_close_handle(struct db *d) {
  int rc = d->handle ? sqlite3_close_v2(d->handle) : SQLITE_OK;
  d->handle = NULL;
  return rc;
}

/* the one close path of a statement: close, __gc, __close */
static int stmt_close_handle(struct stmt *s) {
  int rc = s->handle ? sqlite3_finalize(s->handle) : SQLITE_OK;
  s->handle = NULL;
  return rc;
}

static int db_gc(lua_State *L) {
  (void)db_close_handle(wl_check_udata(L, 1, DB_MT)); /* nothing can be raised from __gc */
  return 0;
}

static int stmt_gc(lua_State *L) {
  (void)stmt_close_handle(wl_check_udata(L, 1, STMT_MT)); /* its error was raised by the step */
  return 0;
}

/* db:close(); closing twice through the method is an error, through __gc or __close nothing */
static int db_close(lua_State *L) {
  struct db *d = check_db(L, 1, "db:close");
  sqlite3 *handle = d->handle;
  if (db_close_handle(d) != SQLITE_OK) return db_error(L, 1, handle, "closing");
  return 0;
}

/* a boolean option of the table at arg */
static bool opt_bool(lua_State *L, int arg, const char *name) {
  if (lua_type(L, arg) != LUA_TTABLE) return false;
  lua_getfield(L, arg, name);
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

/* what a connection opened by wlrun may do: no extension, no function called by the schema
 * of a file someone else made, no write that corrupts the file on purpose */
static int harden(sqlite3 *h) {
  int rc = sqlite3_db_config(h, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, (int *)NULL);
  if (rc == SQLITE_OK) rc = sqlite3_db_config(h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
  if (rc == SQLITE_OK) rc = sqlite3_db_config(h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
  return rc;
}

/* pushes the URI of a file read as immutable: no lock, no -shm file (a WAL database in a
 * directory this process may not write to), every byte of the path but the plain ones escaped */
static const char *immutable_uri(lua_State *L, const char *path) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "file:");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
        strchr("-._~/", *p)) {
      luaL_addchar(&b, (char)*p);
    } else {
      char hex[4];
      snprintf(hex, sizeof hex, "%%%02X", *p);
      luaL_addstring(&b, hex);
    }
  }
  luaL_addstring(&b, "?immutable=1");
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* what path is when something other than a regular file is there (through symbolic links),
 * else NULL: SQLite would block on a FIFO and take a device for a file */
static const char *not_a_file(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
    return NULL; /* a missing file is SQLite's to report */
  return S_ISDIR(st.st_mode)    ? "a directory"
         : S_ISFIFO(st.st_mode) ? "a FIFO"
                                : "a device or a socket";
}

/* sqlite.open(path, {readonly =, create =, immutable =, timeout = seconds (default 30), label =})
 * -> db; immutable: read-only, and the file is taken as one that nobody changes meanwhile */
static int l_open(lua_State *L) {
  size_t len;
  const char *path = wl_check_lstring(L, 1, &len);
  if (strlen(path) != len || len == 0) wl_arg_error(L, 1, "a path without NUL bytes expected");
  bool readonly = opt_bool(L, 2, "readonly"), create = opt_bool(L, 2, "create"),
       immutable = opt_bool(L, 2, "immutable");
  double timeout = 30;
  const char *label = NULL;
  if (lua_type(L, 2) == LUA_TTABLE) {
    int t = lua_getfield(L, 2, "timeout");
    if (t != LUA_TNIL && t != LUA_TNUMBER) wl_arg_error(L, 2, "timeout: seconds expected");
    if (t == LUA_TNUMBER) timeout = lua_tonumber(L, -1);
    t = lua_getfield(L, 2, "label");
    if (t != LUA_TNIL && t != LUA_TSTRING) wl_arg_error(L, 2, "label: a string expected");
    label = lua_tostring(L, -1); /* kept alive by the options table */
    lua_pop(L, 2);
  }
  wl_arg_check(L, timeout >= 0 && timeout <= 86400, 2, "timeout: seconds from 0 to 86400 expected");
  struct db *d = lua_newuserdatauv(L, sizeof *d, 1);
  memset(d, 0, sizeof *d);
  d->timeout = timeout;
  luaL_setmetatable(L, DB_MT);
  int arg = lua_gettop(L);
  if (label) lua_pushstring(L, label);
  else lua_pushfstring(L, "SQLite database '%s'", path);
  lua_setiuservalue(L, arg, 1);
  const char *kind = not_a_file(path);
  if (kind) {
    lua_getiuservalue(L, arg, 1);
    return wl_raise(L, WL_EXIT_IO, "%s: cannot open: %s, not a file", lua_tostring(L, -1), kind);
  }
  int flags =
      readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
  if (immutable) {
    path = immutable_uri(L, path);
    flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  } else if (path[0] != '/') {
    /* a path is a path: SQLite reads ":memory:" as a database in memory and a name that starts
     * with "file:" as a URI with options (Debian builds it with SQLITE_USE_URI); neither
     * begins with "./" */
    path = lua_pushfstring(L, "./%s", path);
  }
  int rc = sqlite3_open_v2(path, &d->handle, flags, NULL);
  if (rc == SQLITE_OK) rc = harden(d->handle);
  if (rc == SQLITE_OK) rc = sqlite3_busy_handler(d->handle, busy_wait, d);
  if (rc == SQLITE_OK) sqlite3_progress_handler(d->handle, PROGRESS_STEPS, progress_stop, NULL);
  if (rc != SQLITE_OK) {
    char msg[512];
    error_text(d->handle, rc, msg, sizeof msg);
    (void)db_close_handle(d); /* a failed open still allocates a handle */
    lua_getiuservalue(L, arg, 1);
    return wl_raise(L, WL_EXIT_IO, "%s: cannot open: %s", lua_tostring(L, -1), msg);
  }
  lua_settop(L, arg);
  return 1;
}

/* db:exec(sql): statements that take no values */
static int db_exec(lua_State *L) {
  struct db *d = check_db(L, 1, "db:exec");
  const char *sql = wl_check_string(L, 2);
  if (sqlite3_exec(d->handle, sql, NULL, NULL, NULL) != SQLITE_OK)
    return db_error(L, 1, d->handle, "");
  return 0;
}

/* pushes a new statement of the connection at db_arg */
static struct stmt *prepare(lua_State *L, int db_arg, struct db *d, int sql_arg) {
  size_t len;
  const char *sql = wl_check_lstring(L, sql_arg, &len);
  struct stmt *s = lua_newuserdatauv(L, sizeof *s, 1);
  memset(s, 0, sizeof *s);
  s->db = d;
  luaL_setmetatable(L, STMT_MT);
  lua_pushvalue(L, db_arg);
  lua_setiuservalue(L, -2, 1);
  const char *tail = NULL;
  if (sqlite3_prepare_v2(d->handle, sql, (int)len, &s->handle, &tail) != SQLITE_OK)
    db_error(L, db_arg, d->handle, "");
  if (!s->handle) wl_raise(L, WL_EXIT_SCRIPT, "db:prepare: no statement in '%s'", sql);
  if (tail && *tail && strspn(tail, " \t\r\n;") != strlen(tail))
    wl_raise(L, WL_EXIT_SCRIPT, "db:prepare: one statement expected, more follow: '%s'", tail);
  return s;
}

/* db:prepare(sql) -> statement */
static int db_prepare(lua_State *L) {
  prepare(L, 1, check_db(L, 1, "db:prepare"), 2);
  return 1;
}

/* binds the arguments first..top to the statement's parameters, in order */
static void bind_args(lua_State *L, int stmt_arg, struct stmt *s, int first, const char *fn) {
  int n = lua_gettop(L) - first + 1, want = sqlite3_bind_parameter_count(s->handle);
  if (n != want)
    wl_raise(L, WL_EXIT_SCRIPT, "%s: the statement takes %d value%s, got %d", fn, want,
             want == 1 ? "" : "s", n);
  for (int i = 1; i <= n; i++) {
    int arg = first + i - 1, rc;
    switch (lua_type(L, arg)) {
    case LUA_TNIL: rc = sqlite3_bind_null(s->handle, i); break;
    case LUA_TBOOLEAN: rc = sqlite3_bind_int(s->handle, i, lua_toboolean(L, arg)); break;
    case LUA_TNUMBER:
      rc = lua_isinteger(L, arg)
               ? sqlite3_bind_int64(s->handle, i, (sqlite3_int64)lua_tointeger(L, arg))
               : sqlite3_bind_double(s->handle, i, lua_tonumber(L, arg));
      break;
    case LUA_TSTRING: {
      size_t len;
      const char *text = lua_tolstring(L, arg, &len);
      rc = sqlite3_bind_text64(s->handle, i, text, len, SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
    }
    default:
      wl_raise(L, WL_EXIT_SCRIPT,
               "%s: value %d is a %s (nil, a boolean, a number or a string can be stored)", fn, i,
               luaL_typename(L, arg));
      return;
    }
    if (rc != SQLITE_OK) {
      lua_getiuservalue(L, stmt_arg, 1);
      db_error(L, lua_gettop(L), s->db->handle, "");
    }
  }
}

/* One step: SQLITE_ROW or SQLITE_DONE; any other answer is raised, the statement reset.
 * SQLite answers SQLITE_BUSY without asking the busy handler where waiting could deadlock: a
 * statement that upgrades its own read transaction to a write while another connection writes
 * (PRAGMA journal_mode = WAL on a database that parallel processes are making). A statement
 * outside an explicit transaction that has given no row yet was its own transaction, rolled back
 * by the reset, so it is run again (its values stay bound) after the same waits as the busy
 * handler's, until the timeout. */
static int step(lua_State *L, int stmt_arg, struct stmt *s, bool first) {
  int rc = sqlite3_step(s->handle);
  for (int tries = 0; rc == SQLITE_BUSY && first && sqlite3_get_autocommit(s->db->handle);) {
    (void)sqlite3_reset(s->handle); /* answers the SQLITE_BUSY just had */
    if (!busy_wait(s->db, tries++)) break;
    rc = sqlite3_step(s->handle);
  }
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) return rc;
  char msg[512];
  error_text(s->db->handle, rc, msg, sizeof msg);
  (void)sqlite3_reset(s->handle);          /* releases the locks; it answers the error just had */
  (void)sqlite3_clear_bindings(s->handle); /* always SQLITE_OK */
  wl_stop_check(L);
  lua_getiuservalue(L, stmt_arg, 1);
  lua_getiuservalue(L, -1, 1);
  const char *label = lua_tostring(L, -1);
  return wl_raise(L, WL_EXIT_IO, "%s: %s", label ? label : "SQLite database", msg);
}

/* after the last step: ready to run again with other values */
static void rewind_stmt(lua_State *L, int stmt_arg, struct stmt *s) {
  if (sqlite3_reset(s->handle) != SQLITE_OK || sqlite3_clear_bindings(s->handle) != SQLITE_OK) {
    lua_getiuservalue(L, stmt_arg, 1);
    db_error(L, lua_gettop(L), s->db->handle, "");
  }
}

/* pushes column i of the current row (nothing for NULL: the row's field stays nil) */
static bool push_column(lua_State *L, int stmt_arg, struct stmt *s, int i) {
  switch (sqlite3_column_type(s->handle, i)) {
  case SQLITE_INTEGER:
    lua_pushinteger(L, (lua_Integer)sqlite3_column_int64(s->handle, i));
    return true;
  case SQLITE_FLOAT: lua_pushnumber(L, sqlite3_column_double(s->handle, i)); return true;
  case SQLITE_NULL: return false;
  default: { /* text and blobs, as Lua strings */
    const void *p = sqlite3_column_type(s->handle, i) == SQLITE_TEXT
                        ? (const void *)sqlite3_column_text(s->handle, i)
                        : sqlite3_column_blob(s->handle, i);
    int n = sqlite3_column_bytes(s->handle, i);
    if (!p && n > 0) { /* a value SQLite could not convert: out of memory */
      lua_getiuservalue(L, stmt_arg, 1);
      db_error(L, lua_gettop(L), s->db->handle, "reading a value");
    }
    lua_pushlstring(L, p ? p : "", (size_t)n);
    return true;
  }
  }
}

/* runs the statement at 1 with the values from 2 on; with rows, pushes them as a table */
static int run_stmt(lua_State *L, struct stmt *s, bool rows, const char *fn) {
  bind_args(L, 1, s, 2, fn);
  lua_settop(L, 1);
  if (rows) lua_newtable(L);
  int ncols = sqlite3_column_count(s->handle);
  lua_Integer n = 0;
  for (bool first = true; step(L, 1, s, first) == SQLITE_ROW; first = false) {
    if (!rows) continue;
    lua_createtable(L, 0, ncols);
    for (int i = 0; i < ncols; i++) {
      const char *name = sqlite3_column_name(s->handle, i);
      if (!name) {
        lua_getiuservalue(L, 1, 1);
        db_error(L, lua_gettop(L), s->db->handle, "reading a column name");
      }
      if (push_column(L, 1, s, i)) lua_setfield(L, -2, name);
    }
    lua_rawseti(L, 2, ++n);
  }
  rewind_stmt(L, 1, s);
  if (!rows) lua_pushinteger(L, sqlite3_changes(s->db->handle));
  return 1;
}

static int stmt_run(lua_State *L) {
  return run_stmt(L, check_stmt(L, 1, "statement:run"), false, "statement:run");
}
static int stmt_rows(lua_State *L) {
  return run_stmt(L, check_stmt(L, 1, "statement:rows"), true, "statement:rows");
}

/* statement:close(), also after its connection was closed (the last finalize frees it) */
static int stmt_close(lua_State *L) {
  struct stmt *s = wl_check_udata(L, 1, STMT_MT);
  if (!s->handle) return wl_raise(L, WL_EXIT_SCRIPT, "statement:close: statement used after close");
  if (stmt_close_handle(s) != SQLITE_OK && s->db->handle) {
    lua_getiuservalue(L, 1, 1);
    return db_error(L, lua_gettop(L), s->db->handle, "");
  }
  return 0;
}

/* db:run(sql, ...) and db:rows(sql, ...): a statement for one use, closed whatever happens */
static int once(lua_State *L, bool rows, const char *fn) {
  struct db *d = check_db(L, 1, fn);
  int nvalues = lua_gettop(L) - 2;
  struct stmt *s = prepare(L, 1, d, 2);
  lua_replace(L, 2); /* db, stmt, values... */
  lua_pushcfunction(L, rows ? stmt_rows : stmt_run);
  lua_pushvalue(L, 2);
  lua_rotate(L, 3, 2); /* db, stmt, function, stmt, values... */
  int status = lua_pcall(L, nvalues + 1, 1, 0);
  int rc = stmt_close_handle(s);
  if (status != LUA_OK) return lua_error(L);
  if (rc != SQLITE_OK) return db_error(L, 1, d->handle, "");
  return 1;
}

static int db_run(lua_State *L) { return once(L, false, "db:run"); }
static int db_rows(lua_State *L) { return once(L, true, "db:rows"); }

static int db_readonly(lua_State *L) {
  struct db *d = check_db(L, 1, "db:readonly");
  int r = sqlite3_db_readonly(d->handle, "main");
  if (r < 0) return wl_raise(L, WL_EXIT_SCRIPT, "db:readonly: no main database");
  lua_pushboolean(L, r);
  return 1;
}

static int db_changes(lua_State *L) {
  lua_pushinteger(L, sqlite3_changes(check_db(L, 1, "db:changes")->handle));
  return 1;
}

static int db_last_insert_rowid(lua_State *L) {
  lua_pushinteger(
      L, (lua_Integer)sqlite3_last_insert_rowid(check_db(L, 1, "db:last_insert_rowid")->handle));
  return 1;
}

static int db_tostring(lua_State *L) {
  struct db *d = wl_check_udata(L, 1, DB_MT);
  lua_getiuservalue(L, 1, 1);
  lua_pushfstring(L, "%s%s", lua_tostring(L, -1), d->handle ? "" : " (closed)");
  return 1;
}

int luaopen_wlrun_sqlite(lua_State *L) {
  static const luaL_Reg db_methods[] = {{"exec", db_exec},
                                        {"prepare", db_prepare},
                                        {"run", db_run},
                                        {"rows", db_rows},
                                        {"close", db_close},
                                        {"readonly", db_readonly},
                                        {"changes", db_changes},
                                        {"last_insert_rowid", db_last_insert_rowid},
                                        {NULL, NULL}};
  static const luaL_Reg stmt_methods[] = {
      {"run", stmt_run}, {"rows", stmt_rows}, {"close", stmt_close}, {NULL, NULL}};
  luaL_newmetatable(L, DB_MT);
  luaL_newlib(L, db_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, db_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, db_gc);
  lua_setfield(L, -2, "__close");
  lua_pushcfunction(L, db_tostring);
  lua_setfield(L, -2, "__tostring");
  luaL_newmetatable(L, STMT_MT);
  luaL_newlib(L, stmt_methods);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, stmt_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, stmt_gc);
  lua_setfield(L, -2, "__close");
  lua_pop(L, 2);
  lua_newtable(L);
  lua_pushcfunction(L, l_open);
  lua_setfield(L, -2, "open");
  lua_pushstring(L, sqlite3_libversion());
  lua_setfield(L, -2, "version");
  return 1;
}
