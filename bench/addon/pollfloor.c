// Node's own floor for an exit notice, with nothing of procpin in between: a bench-only addon
// (raw Node-API and libuv) that starts a child, puts a uv_poll on its pidfd and, when the pidfd
// turns readable, reads CLOCK_MONOTONIC in the poll callback and tells JavaScript, either by
// calling a function (napi_make_callback, as any addon's callback) or by resolving a promise that
// the caller awaits; the child is reaped after that (or before, when asked). Compiled by the
// bench (bench/lib/cbin.mjs).
//
//   watch(argv, cb)     cb(nativeNs) is called from the poll callback
//   watchPromise(argv[, reapFirst])
//                       a promise resolved with nativeNs from the poll callback (reapFirst: the
//                       child is reaped before, as a spawn+exit+reap sample needs)
//
// nativeNs is the CLOCK_MONOTONIC reading (ns, as a double) at the top of the poll callback, so
// one sample gives both hops: exit -> uv_poll callback, and uv_poll callback -> JavaScript.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char** environ;

typedef struct {
  uv_poll_t poll;
  int pidfd;
  napi_env env;
  napi_ref cb;
  napi_deferred deferred;
  napi_async_context ctx;
  bool reap_first;
} Watch;

static void Reap(Watch* w) {
  siginfo_t si;
  while (waitid((idtype_t)P_PIDFD, (id_t)w->pidfd, &si, WEXITED) < 0 && errno == EINTR) {
  }
  close(w->pidfd);
  w->pidfd = -1;
}

static void Freed(uv_handle_t* h) { free(h->data); }

static void OnReadable(uv_poll_t* h, int status, int events) {
  (void)status;
  (void)events;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double ns = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
  Watch* w = h->data;
  uv_close((uv_handle_t*)h, Freed);
  if (w->reap_first) Reap(w);
  napi_env env = w->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value arg;
  napi_create_double(env, ns, &arg);
  if (w->deferred) {
    // A promise resolved outside any callback scope: open one, so that the microtasks (the
    // caller's await continuation) run when it closes, as they do after a make_callback.
    napi_value resource;
    napi_create_object(env, &resource);
    napi_callback_scope cs;
    napi_open_callback_scope(env, resource, w->ctx, &cs);
    napi_resolve_deferred(env, w->deferred, arg);
    napi_close_callback_scope(env, cs);
  } else {
    napi_value fn, global, ret;
    napi_get_reference_value(env, w->cb, &fn);
    napi_get_global(env, &global);
    napi_make_callback(env, w->ctx, global, fn, 1, &arg, &ret);
    napi_delete_reference(env, w->cb);
  }
  napi_async_destroy(env, w->ctx);
  napi_close_handle_scope(env, scope);
  // The reap after JavaScript was told (as procpin's caller reaps after `exited`): off the clock.
  if (w->pidfd >= 0) Reap(w);
}

// Starts argv[0] with stdio on /dev/null and watches its pidfd; NULL after throwing.
static Watch* Start(napi_env env, napi_value arr) {
  uint32_t n = 0;
  if (napi_get_array_length(env, arr, &n) != napi_ok || n == 0 || n > 15) {
    napi_throw_type_error(env, NULL, "argv: an array of 1-15 strings");
    return NULL;
  }
  char buf[4096];
  char* argv[16];
  size_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    size_t len = 0;
    napi_get_element(env, arr, i, &v);
    if (napi_get_value_string_utf8(env, v, buf + off, sizeof buf - off, &len) != napi_ok) {
      napi_throw_type_error(env, NULL, "argv: strings");
      return NULL;
    }
    argv[i] = buf + off;
    off += len + 1;
  }
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd < 3; fd++) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    napi_throw_error(env, NULL, strerror(rc));
    return NULL;
  }
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    napi_throw_error(env, NULL, strerror(errno));
    return NULL;
  }
  fcntl(pidfd, F_SETFD, FD_CLOEXEC);
  Watch* w = calloc(1, sizeof *w);
  w->pidfd = pidfd;
  w->env = env;
  uv_loop_t* loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_init(loop, &w->poll, pidfd);
  w->poll.data = w;
  uv_poll_start(&w->poll, UV_READABLE, OnReadable);
  napi_value resource, name;
  napi_create_object(env, &resource);
  napi_create_string_utf8(env, "pollfloor", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, resource, name, &w->ctx);
  return w;
}

// The arguments of watch and watchPromise: at least `need` of them, or a TypeError saying `usage`.
// Starts the watch on argument 0 (argv) and hands back argument 1 in *second (NULL when absent);
// NULL when nothing started (an exception is pending).
static Watch* StartFromArgs(napi_env env, napi_callback_info info, size_t need, const char* usage,
                            napi_value* second) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < need) {
    napi_throw_type_error(env, NULL, usage);
    return NULL;
  }
  *second = argc > 1 ? args[1] : NULL;
  return Start(env, args[0]);
}

static napi_value WatchCb(napi_env env, napi_callback_info info) {
  napi_value cb;
  Watch* w = StartFromArgs(env, info, 2, "watch(argv, cb)", &cb);
  if (w) napi_create_reference(env, cb, 1, &w->cb);
  return NULL;
}

static napi_value WatchPromise(napi_env env, napi_callback_info info) {
  napi_value reap_first;
  Watch* w = StartFromArgs(env, info, 1, "watchPromise(argv[, reapFirst])", &reap_first);
  if (!w) return NULL;
  if (reap_first) napi_get_value_bool(env, reap_first, &w->reap_first);
  napi_value promise;
  napi_create_promise(env, &w->deferred, &promise);
  return promise;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"watch", NULL, WatchCb, NULL, NULL, NULL, napi_default, NULL},
      {"watchPromise", NULL, WatchPromise, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, 2, props);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
