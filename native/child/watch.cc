// The exit watch, on the event loop: a uv_poll on the pidfd, which the kernel makes readable
// when the process exits (while a child is still an unreaped zombie). No thread per child, no
// threadpool, no SIGCHLD handler. Without pidfds (Linux < 5.3), or when the pidfd polls readable
// with nothing to wait for yet (a tracer has not waited), a uv_timer looks with
// waitid(WEXITED | WNOHANG | WNOWAIT) at a growing interval instead.
#include <fcntl.h>
#include <string.h>

#include <utility>

#include "state.h"

namespace procpin::child {

namespace {

void OnPoll(uv_poll_t* h, int, int);
void OnTimer(uv_timer_t* h);

uv_handle_t* WatchHandle(ChildState* s) {
  if (s->watch.poll) return reinterpret_cast<uv_handle_t*>(s->watch.poll);
  if (s->watch.timer) return reinterpret_cast<uv_handle_t*>(s->watch.timer);
  return nullptr;
}

void StartTimer(ChildState* s) {
  s->watch.timer = new uv_timer_t;
  uv_timer_init(s->reg->loop, s->watch.timer);
  s->watch.timer->data = s;
  s->watch.interval = 1;
  uv_timer_start(s->watch.timer, OnTimer, s->watch.interval, 0);
  ApplyRef(s);
}

// Calls onExit(result, status, pid, uid, reaped) once: for a child's exit result is si_code (> 0)
// and the rest its siginfo; for openProcess result is 0; for a lost status -errno (the rest 0).
// Plain numbers, not an object: creating an object and four named properties through Node-API
// was the largest part of the exit notice after the loop woke (lib/child/child.ts builds the
// WaitInfo). Raw Node-API calls: this can run while a Worker is being terminated, when calls fail,
// and node-addon-api's error wrappers would abort on that. A throwing callback becomes an
// uncaught exception.
void Tell(ChildState* s, int result, const siginfo_t* si, bool reaped) {
  if (s->cb.IsEmpty()) return;
  napi_env env = s->env;
  Napi::FunctionReference cb = std::move(s->cb);
  std::unique_ptr<Napi::AsyncContext> ctx = std::move(s->ctx);
  const bool info = result >= 0 && si != nullptr;
  napi_value argv[5] = {};
  bool made = napi_create_int32(env, info ? si->si_code : result, &argv[0]) == napi_ok &&
              napi_create_int32(env, info ? si->si_status : 0, &argv[1]) == napi_ok &&
              napi_create_int32(env, info ? si->si_pid : 0, &argv[2]) == napi_ok &&
              napi_create_uint32(env, info ? si->si_uid : 0, &argv[3]) == napi_ok &&
              napi_get_boolean(env, reaped, &argv[4]) == napi_ok;
  napi_value fn = nullptr, global = nullptr, ret = nullptr;
  if (made && napi_get_reference_value(env, cb, &fn) == napi_ok && fn &&
      napi_get_global(env, &global) == napi_ok &&
      napi_make_callback(env, *ctx, global, fn, 5, argv, &ret) != napi_ok) {
    // "Pending" with no exception means the environment is shutting down: nothing to report.
    bool pending = false;
    napi_value exc;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
        napi_get_and_clear_last_exception(env, &exc) == napi_ok) {
      napi_fatal_exception(env, exc);
    }
  }
}

// The exit was seen (result 0 with si filled for a child, 0 alone for openProcess, or -errno
// when the status was lost). A child that was let go is reaped now. Tells JavaScript once.
// The watch of an exit told to JavaScript is closed after the call, not before: its epoll_ctl
// is then off the path to the caller's continuation (which commonly reaps, and so closes it
// itself). The poll cannot fire again meanwhile: this is its callback, and the loop dispatches
// it again only in a later turn. Nothing touches `s` after the call: the callback may close and
// free it (freeing closes the watch first; the handle's own memory lives until its close callback,
// in a later phase of the loop, so it can still be looked at here).
void Deliver(ChildState* s, int result, const siginfo_t* si) {
  bool reaped_now = false;
  siginfo_t reaped_si;
  if (result < 0) {
    // ECHILD (the kernel, SIGCHLD ignored, or someone else reaped it), or a wait that failed:
    // nothing left to reap either way.
    CloseWatch(s);
    if (s->state != State::kLost) s->state = State::kReaped;
  } else if (s->state == State::kLetGo) {
    reaped_now = Reap(s, &reaped_si) == 0 && reaped_si.si_pid != 0;
    if (s->unreaped()) s->state = State::kReaped;  // a failed reap: not ours to try again
    ClosePidfd(s);
  } else {
    s->state = State::kExited;
  }
  if (s->wrap == nullptr) {  // nobody left to tell
    Dispose(s);
    return;
  }
  uv_handle_t* watch = WatchHandle(s);
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) == napi_ok) {
    Tell(s, result, s->child() ? (reaped_now ? &reaped_si : si) : nullptr, reaped_now);
    napi_close_handle_scope(env, scope);
  }
  if (watch != nullptr && !uv_is_closing(watch)) CloseWatch(static_cast<ChildState*>(watch->data));
}

void Check(ChildState* s) {
  if (!s->child()) {
    Deliver(s, 0, nullptr);
    return;
  }
  siginfo_t si;
  int r = Peek(s, &si);
  if (r < 0) {
    Deliver(s, r, nullptr);
  } else if (si.si_pid != 0) {
    Deliver(s, 0, &si);
  } else if (s->watch.timer) {
    s->watch.interval = s->watch.interval * 2 > 25 ? 25 : s->watch.interval * 2;
    uv_timer_start(s->watch.timer, OnTimer, s->watch.interval, 0);
  } else if (s->watch.poll) {
    // Readable, and nothing to wait for: the child exited but a tracer has not waited for it
    // yet. The pidfd stays readable (epoll is level-triggered): look on a timer instead.
    CloseWatch(s);
    StartTimer(s);
  }
}

void OnPoll(uv_poll_t* h, int, int) {
  auto* s = static_cast<ChildState*>(h->data);
  if (s) Check(s);
}

void OnTimer(uv_timer_t* h) {
  auto* s = static_cast<ChildState*>(h->data);
  if (s) Check(s);
}

}  // namespace

// uv_close stops the poll at once (libuv forgets the descriptor now), so the pidfd may be closed
// right after; the handle's memory is freed by its own close callback.
void CloseWatch(ChildState* s) {
  if (s->watch.poll) {
    s->watch.poll->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(s->watch.poll),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    s->watch.poll = nullptr;
  }
  if (s->watch.timer) {
    s->watch.timer->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(s->watch.timer),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    s->watch.timer = nullptr;
  }
}

int StartWatch(ChildState* s) {
  if (s->pidfd >= 0) {
    // uv_poll_init puts the descriptor in non-blocking mode. A pidfd's O_NONBLOCK changes
    // waitid(P_PIDFD) (EAGAIN instead of waiting), and the caller may use child.pidfd that way:
    // give the flags back. epoll does not need them.
    int fl = fcntl(s->pidfd, F_GETFL);
    s->watch.poll = new uv_poll_t;
    int r = uv_poll_init(s->reg->loop, s->watch.poll, s->pidfd);
    if (fl >= 0) fcntl(s->pidfd, F_SETFL, fl);
    if (r == 0) {
      s->watch.poll->data = s;
      r = uv_poll_start(s->watch.poll, UV_READABLE, OnPoll);
      if (r == 0) return 0;
      CloseWatch(s);
    } else {
      delete s->watch.poll;
      s->watch.poll = nullptr;
    }
    if (!s->child()) return r;
  }
  StartTimer(s);
  return 0;
}

void ApplyRef(ChildState* s) {
  uv_handle_t* h = WatchHandle(s);
  if (!h) return;
  if (s->watch.refed) {
    uv_ref(h);
  } else {
    uv_unref(h);
  }
}

}  // namespace procpin::child
