// Glue for SPEC Layer 2: the spawn entry point and the handle that holds a child (or, for
// openProcess, any process) through its pidfd.
//
// Exit notification is event-loop driven: a uv_poll on the pidfd, which the kernel makes
// readable when the process exits (while a child is still an unreaped zombie). No thread per
// child, no threadpool, no SIGCHLD handler. Without pidfds (Linux < 5.3) a uv_timer looks with
// waitid(WEXITED | WNOWAIT | WNOHANG) at a growing interval instead.
//
// Ownership. A ChildState is owned by its environment's registry; the JavaScript wrapper
// (ChildHandle) points at it and it points back. The exit callback is held strongly until it
// has been delivered, so a caller awaiting `exited` keeps the Child alive. When the wrapper is
// collected, or close() is called on a running child, the state turns to auto-reap: the exit is
// still watched (unref'd) and the child is reaped the moment it exits, so an unreachable child
// never stays a zombie. The environment's cleanup hook (process exit, Worker teardown) releases
// everything; a Worker's children that still run are handed to a process-wide reaper thread (one
// for the whole process, created on first use), since after the Worker is gone nobody else
// would ever reap them.
#include <dlfcn.h>

#include "glibc_floor.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "glue.h"
#include "spawn_core.h"
#include "sys.h"

namespace procpin {

namespace {

// ---------------------------------------------------------------------------------------------
// The process-wide reaper of children whose environment is gone (a terminated Worker's).

class Orphanage {
 public:
  static Orphanage& Get() {
    static Orphanage* instance = new Orphanage();  // never destroyed: the thread may outlive exit
    return *instance;
  }

  // Takes ownership of pidfd (may be -1).
  void Adopt(pid_t pid, int pidfd) {
    std::lock_guard<std::mutex> g(mu_);
    items_.push_back({pid, pidfd});
    if (!started_) {
      if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) < 0) wake_[0] = wake_[1] = -1;
      started_ = true;
      std::thread([this] { Run(); }).detach();
    } else if (wake_[1] >= 0) {
      char c = 1;
      ssize_t w = write(wake_[1], &c, 1);
      (void)w;
    }
  }

 private:
  struct Item {
    pid_t pid;
    int pidfd;
  };

  void Run() {
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);  // this thread only, on Linux
    std::vector<pollfd> fds;
    for (;;) {
      bool need_timer = false;
      fds.clear();
      {
        std::lock_guard<std::mutex> g(mu_);
        for (size_t i = 0; i < items_.size();) {
          siginfo_t si;
          int r = sys::Waitid(P_PID, static_cast<unsigned>(items_[i].pid), &si, WEXITED | WNOHANG);
          if (r < 0 || si.si_pid != 0) {  // reaped, or not ours to reap any more
            if (items_[i].pidfd >= 0) close(items_[i].pidfd);
            items_[i] = items_.back();
            items_.pop_back();
            continue;
          }
          if (items_[i].pidfd >= 0) {
            fds.push_back({items_[i].pidfd, POLLIN, 0});
          } else {
            need_timer = true;
          }
          ++i;
        }
      }
      if (wake_[0] >= 0) fds.push_back({wake_[0], POLLIN, 0});
      int r = poll(fds.data(), fds.size(), need_timer || wake_[0] < 0 ? 50 : -1);
      if (r > 0 && wake_[0] >= 0 && (fds.back().revents & POLLIN)) {
        char buf[64];
        while (read(wake_[0], buf, sizeof buf) > 0) {
        }
      }
    }
  }

  std::mutex mu_;
  std::vector<Item> items_;
  int wake_[2] = {-1, -1};
  bool started_ = false;
};

// ---------------------------------------------------------------------------------------------

class ChildHandle;

struct Registry {
  uv_loop_t* loop = nullptr;
  bool main_thread = false;
  Napi::FunctionReference ctor;
  std::unordered_set<struct ChildState*> states;
};

struct ChildState {
  Registry* reg = nullptr;
  napi_env env = nullptr;
  pid_t pid = -1;
  int pidfd = -1;
  bool own = true;         // our child (waitable); false for openProcess
  bool exited = false;     // the exit was seen
  bool reaped = false;     // reaped (or gone: nothing left to reap)
  bool auto_reap = false;  // reap as soon as the exit is seen
  bool refed = true;
  uv_poll_t* poll = nullptr;
  uv_timer_t* timer = nullptr;
  uint64_t interval = 1;
  Napi::FunctionReference cb;  // the exit callback, until delivered
  std::unique_ptr<Napi::AsyncContext> ctx;
  ChildHandle* wrap = nullptr;
};

void OnPoll(uv_poll_t* h, int status, int events);
void OnTimer(uv_timer_t* h);

uv_handle_t* WatchHandle(ChildState* s) {
  if (s->poll) return reinterpret_cast<uv_handle_t*>(s->poll);
  if (s->timer) return reinterpret_cast<uv_handle_t*>(s->timer);
  return nullptr;
}

// Stops watching. uv_close stops the poll at once (libuv forgets the descriptor now), so the
// pidfd may be closed right after; the handle's memory is freed by its own close callback.
void CloseWatcher(ChildState* s) {
  if (s->poll) {
    s->poll->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(s->poll),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    s->poll = nullptr;
  }
  if (s->timer) {
    s->timer->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(s->timer),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    s->timer = nullptr;
  }
}

void ClosePidfd(ChildState* s) {
  CloseWatcher(s);  // never close a descriptor libuv still watches
  if (s->pidfd >= 0) {
    close(s->pidfd);
    s->pidfd = -1;
  }
}

int StartWatch(ChildState* s) {
  if (s->pidfd >= 0) {
    // uv_poll_init puts the descriptor in non-blocking mode. A pidfd's O_NONBLOCK changes
    // waitid(P_PIDFD) (EAGAIN instead of waiting), and the caller may use child.pidfd that way:
    // give the flags back. epoll does not need them.
    int fl = fcntl(s->pidfd, F_GETFL);
    s->poll = new uv_poll_t;
    int r = uv_poll_init(s->reg->loop, s->poll, s->pidfd);
    if (fl >= 0) fcntl(s->pidfd, F_SETFL, fl);
    if (r == 0) {
      s->poll->data = s;
      r = uv_poll_start(s->poll, UV_READABLE, OnPoll);
      if (r == 0) return 0;
      CloseWatcher(s);
    } else {
      delete s->poll;
      s->poll = nullptr;
    }
    if (!s->own) return r;
  }
  // No pidfd (or it cannot be polled): look with WNOWAIT at a growing interval.
  s->timer = new uv_timer_t;
  uv_timer_init(s->reg->loop, s->timer);
  s->timer->data = s;
  s->interval = 1;
  uv_timer_start(s->timer, OnTimer, s->interval, 0);
  return 0;
}

void ApplyRef(ChildState* s) {
  uv_handle_t* h = WatchHandle(s);
  if (!h) return;
  if (s->refed) {
    uv_ref(h);
  } else {
    uv_unref(h);
  }
}

// waitid on our own child by pid. Safe while the child is unreaped: its pid cannot be reused
// and nobody else reaps it (we never install a SIGCHLD handler; libuv waits only for its own).
int Look(ChildState* s, siginfo_t* si, bool reap) {
  memset(si, 0, sizeof *si);
  return sys::Waitid(P_PID, static_cast<unsigned>(s->pid), si,
                     WEXITED | WNOHANG | (reap ? 0 : WNOWAIT));
}

Napi::Value RawInfo(Napi::Env env, const siginfo_t& si) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("pid", Napi::Number::New(env, si.si_pid));
  o.Set("uid", Napi::Number::New(env, si.si_uid));
  o.Set("code", Napi::Number::New(env, si.si_code));
  o.Set("status", Napi::Number::New(env, si.si_status));
  return o;
}

// The same with raw Node-API calls, for the exit callback: it can run while a Worker is being
// terminated, when calls fail, and node-addon-api's error wrappers would abort on that.
napi_value RawInfoUnchecked(napi_env env, const siginfo_t& si) {
  napi_value o = nullptr, v = nullptr;
  if (napi_create_object(env, &o) != napi_ok) return nullptr;
  const std::pair<const char*, double> fields[] = {
      {"pid", si.si_pid}, {"uid", si.si_uid}, {"code", si.si_code}, {"status", si.si_status}};
  for (const auto& [name, value] : fields) {
    if (napi_create_double(env, value, &v) == napi_ok) napi_set_named_property(env, o, name, v);
  }
  return o;
}

void Dispose(ChildState* s);

// The exit was seen (result 0 with si filled for a child, 0 alone for openProcess, or -errno
// when the status was lost). Tells JavaScript once. Nothing touches `s` after the call: the
// callback may close and free it.
void Deliver(ChildState* s, int result, const siginfo_t* si) {
  CloseWatcher(s);
  s->exited = true;
  bool reaped_now = false;
  siginfo_t reaped_si;
  if (result < 0) {
    s->reaped = true;  // ECHILD: the kernel (SIGCHLD ignored) or someone else reaped it
  } else if (s->own && s->auto_reap && !s->reaped) {
    if (Look(s, &reaped_si, true) == 0 && reaped_si.si_pid != 0) reaped_now = true;
    s->reaped = true;
    ClosePidfd(s);
  }
  if (s->wrap == nullptr) {  // nobody left to tell
    Dispose(s);
    return;
  }
  if (s->cb.IsEmpty()) return;
  napi_env env = s->env;
  Napi::FunctionReference cb = std::move(s->cb);
  std::unique_ptr<Napi::AsyncContext> ctx = std::move(s->ctx);
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value argv[2] = {nullptr, nullptr};
  if (result < 0 || !s->own) {
    napi_create_int32(env, result < 0 ? result : 0, &argv[0]);
  } else {
    argv[0] = RawInfoUnchecked(env, reaped_now ? reaped_si : *si);
  }
  napi_get_boolean(env, reaped_now, &argv[1]);
  napi_value fn = nullptr, global = nullptr, ret = nullptr;
  if (argv[0] && argv[1] && napi_get_reference_value(env, cb, &fn) == napi_ok && fn &&
      napi_get_global(env, &global) == napi_ok &&
      napi_make_callback(env, *ctx, global, fn, 2, argv, &ret) != napi_ok) {
    // A throwing callback becomes an uncaught exception. "Pending" with no exception means
    // the environment is shutting down: nothing to report then.
    bool pending = false;
    napi_value exc;
    if (napi_is_exception_pending(env, &pending) == napi_ok && pending &&
        napi_get_and_clear_last_exception(env, &exc) == napi_ok) {
      napi_fatal_exception(env, exc);
    }
  }
  napi_close_handle_scope(env, scope);
}

void Check(ChildState* s) {
  if (!s->own) {
    Deliver(s, 0, nullptr);
    return;
  }
  siginfo_t si;
  int r = Look(s, &si, false);
  if (r < 0) {
    Deliver(s, r, nullptr);
  } else if (si.si_pid != 0) {
    Deliver(s, 0, &si);
  } else if (s->timer) {
    s->interval = s->interval * 2 > 25 ? 25 : s->interval * 2;
    uv_timer_start(s->timer, OnTimer, s->interval, 0);
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

// ---------------------------------------------------------------------------------------------

class ChildHandle : public Napi::ObjectWrap<ChildHandle> {
 public:
  static Napi::Function Define(Napi::Env env, Registry* reg) {
    return DefineClass(env, "ChildHandle",
                       {
                           InstanceMethod<&ChildHandle::Pidfd>("pidfd"),
                           InstanceMethod<&ChildHandle::Poll>("poll"),
                           InstanceMethod<&ChildHandle::Reap>("reap"),
                           InstanceMethod<&ChildHandle::Kill>("kill"),
                           InstanceMethod<&ChildHandle::HasExited>("hasExited"),
                           InstanceMethod<&ChildHandle::Ref>("ref"),
                           InstanceMethod<&ChildHandle::Unref>("unref"),
                           InstanceMethod<&ChildHandle::Close>("close"),
                       },
                       reg);
  }

  ChildHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChildHandle>(info) {
    if (info.Length() < 1 || !info[0].IsExternal()) {
      Napi::TypeError::New(info.Env(), "ChildHandle is made by spawn and openProcess")
          .ThrowAsJavaScriptException();
      return;
    }
    state_ = info[0].As<Napi::External<ChildState>>().Data();
    state_->wrap = this;
  }

  // Garbage-collected: the descriptor and the zombie must not outlive us.
  ~ChildHandle() override {
    ChildState* s = state_;
    if (!s) return;
    state_ = nullptr;
    s->wrap = nullptr;
    s->cb.Reset();
    s->ctx.reset();
    if (s->own && !s->reaped) {
      siginfo_t si;
      int r = Look(s, &si, true);
      if (r == 0 && si.si_pid == 0) {  // still running: reap it when it exits
        s->auto_reap = true;
        s->refed = false;
        ApplyRef(s);
        return;
      }
      s->reaped = true;
    }
    Dispose(s);
  }

  void Detach() { state_ = nullptr; }

 private:
  Napi::Value Pidfd(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), state_ ? state_->pidfd : -1);
  }

  // A WNOHANG | WNOWAIT look: the raw info, null while running, or -errno.
  Napi::Value Poll(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!state_ || !state_->own || state_->reaped) return Result(env, -ECHILD);
    siginfo_t si;
    int r = Look(state_, &si, false);
    if (r < 0) return Result(env, r);
    if (si.si_pid == 0) return env.Null();
    return RawInfo(env, si);
  }

  // reap(keepPidfd): the reaping wait, WNOHANG. Null while running. Afterwards the exit is no
  // longer watched and (unless keepPidfd) the pidfd is closed.
  Napi::Value Reap(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ChildState* s = state_;
    if (!s || !s->own || s->reaped) return Result(env, -ECHILD);
    bool keep = info.Length() > 0 && info[0].IsBoolean() && info[0].As<Napi::Boolean>().Value();
    siginfo_t si;
    int r = Look(s, &si, true);
    if (r < 0) {
      if (r == -ECHILD) s->reaped = true;
      return Result(env, r);
    }
    if (si.si_pid == 0) return env.Null();
    s->exited = true;
    s->reaped = true;
    s->cb.Reset();
    s->ctx.reset();
    if (keep) {
      CloseWatcher(s);
    } else {
      ClosePidfd(s);
    }
    return RawInfo(env, si);
  }

  // kill(sig): 0, or -errno; -ESRCH once reaped (the pid may name a stranger now). Through the
  // pidfd when there is one; by pid otherwise, which is safe only because the child is unreaped.
  Napi::Value Kill(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t sig;
    if (!Int32Arg(info, 0, &sig)) return Napi::Value();
    ChildState* s = state_;
    if (!s || s->reaped) return Result(env, -ESRCH);
    if (s->pidfd >= 0) {
      int r = sys::PidfdSendSignal(s->pidfd, sig, 0);
      if (r != -ENOSYS) return Result(env, r);
    }
    if (!s->own) return Result(env, -ENOSYS);  // a stranger's pid is never signalled by number
    return Result(env, kill(s->pid, sig) < 0 ? -errno : 0);
  }

  // For openProcess: whether the pidfd polls readable (the process has exited).
  Napi::Value HasExited(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ChildState* s = state_;
    if (!s || s->pidfd < 0) return Napi::Boolean::New(env, s ? s->exited : true);
    pollfd p = {s->pidfd, POLLIN, 0};
    int r = ::poll(&p, 1, 0);
    return Napi::Boolean::New(env, s->exited || (r > 0 && (p.revents & POLLIN)));
  }

  Napi::Value Ref(const Napi::CallbackInfo& info) {
    if (state_) {
      state_->refed = true;
      ApplyRef(state_);
    }
    return info.Env().Undefined();
  }

  Napi::Value Unref(const Napi::CallbackInfo& info) {
    if (state_) {
      state_->refed = false;
      ApplyRef(state_);
    }
    return info.Env().Undefined();
  }

  // close(): for a child, reaps it if it has exited (returning the raw info), or, while it runs,
  // leaves it to be reaped at its exit without keeping the loop alive (returns null; the exit
  // callback still fires, with reaped = true). For openProcess, closes the pidfd. Idempotent:
  // returns undefined when already closed.
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ChildState* s = state_;
    if (!s) return env.Undefined();
    if (s->own && !s->reaped) {
      siginfo_t si;
      int r = Look(s, &si, true);
      if (r == 0 && si.si_pid == 0) {
        s->auto_reap = true;
        s->refed = false;
        ApplyRef(s);
        return env.Null();
      }
      s->reaped = true;
      state_ = nullptr;
      s->wrap = nullptr;
      Dispose(s);
      return r < 0 ? Result(env, r) : RawInfo(env, si);
    }
    state_ = nullptr;
    s->wrap = nullptr;
    Dispose(s);
    return env.Undefined();
  }

  ChildState* state_ = nullptr;
};

void Dispose(ChildState* s) {
  if (s->reg) s->reg->states.erase(s);
  ClosePidfd(s);
  s->cb.Reset();
  s->ctx.reset();
  if (s->wrap) s->wrap->Detach();
  delete s;
}

// Makes the state, starts the watch and wraps it. On failure to wrap, the state turns to
// auto-reap so that the child is still reaped.
Napi::Value Adopt(Napi::Env env, Registry* reg, pid_t pid, int pidfd, bool own,
                  Napi::Function cb) {
  auto* s = new ChildState();
  s->reg = reg;
  s->env = env;
  s->pid = pid;
  s->pidfd = pidfd;
  s->own = own;
  s->cb = Napi::Persistent(cb);
  s->ctx = std::make_unique<Napi::AsyncContext>(env, own ? "procpin:child" : "procpin:process");
  reg->states.insert(s);
  int r = StartWatch(s);
  if (r < 0) {
    Dispose(s);
    return Result(env, r);
  }
  Napi::Object h = reg->ctor.New({Napi::External<ChildState>::New(env, s)});
  if (env.IsExceptionPending() || h.IsEmpty()) {
    s->cb.Reset();
    s->ctx.reset();
    if (s->own) {
      s->auto_reap = true;
      s->refed = false;
      ApplyRef(s);
    } else {
      Dispose(s);
    }
    return Napi::Value();
  }
  return h;
}

bool StringArray(Napi::Env env, Napi::Value v, const char* what, std::vector<std::string>* out) {
  if (!v.IsArray()) {
    Napi::TypeError::New(env, std::string(what) + " must be an array").ThrowAsJavaScriptException();
    return false;
  }
  Napi::Array a = v.As<Napi::Array>();
  uint32_t n = a.Length();
  out->reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value e = a.Get(i);
    if (!e.IsString()) {
      Napi::TypeError::New(env, std::string(what) + " must hold strings")
          .ThrowAsJavaScriptException();
      return false;
    }
    out->push_back(e.As<Napi::String>().Utf8Value());
    if (out->back().find('\0') != std::string::npos) {
      Napi::TypeError::New(env, std::string(what) + " must not hold NUL bytes")
          .ThrowAsJavaScriptException();
      return false;
    }
  }
  return true;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

const char* StageName(int stage) {
  switch (stage) {
    case spawn::kStageChdir:
      return "chdir";
    case spawn::kStageExecve:
      return "execve";
    case spawn::kStageSetpgid:
      return "setpgid";
    case spawn::kStageSetsid:
      return "setsid";
    case spawn::kStagePdeathsig:
      return "prctl";
    case spawn::kStageStdio:
      return "dup3";
    case spawn::kStageCloseFds:
      return "close_range";
    case spawn::kStageSignals:
      return "sigaction";
    case spawn::kStageCgroup:
      return "cgroup";
    default:
      return "spawn";
  }
}

// spawn(candidates, argv, env | null, cwd, stdio, group, pdeathsig, closeFds, onExit
//       [, cgroupProcs])
//   -> { handle, pid, pidfd, fds } or { errno, stage }
// cgroupProcs: a descriptor of a cgroup's cgroup.procs open for writing, or -1.
Napi::Value Spawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<Registry*>(info.Data());
  std::vector<std::string> candidates, argv, envv;
  // env null: the process's own environment (environ), which Node's main thread keeps equal to
  // process.env (its setter calls setenv); it saves copying every variable through JavaScript.
  const bool own_environ = info.Length() > 2 && info[2].IsNull();
  if (info.Length() < 9 || !StringArray(env, info[0], "candidates", &candidates) ||
      !StringArray(env, info[1], "argv", &argv) ||
      (!own_environ && !StringArray(env, info[2], "env", &envv))) {
    if (!env.IsExceptionPending()) {
      Napi::TypeError::New(env, "spawn takes 9 arguments").ThrowAsJavaScriptException();
    }
    return Napi::Value();
  }
  std::string cwd;
  bool has_cwd = info[3].IsString();
  if (has_cwd) {
    cwd = info[3].As<Napi::String>().Utf8Value();
    if (cwd.find('\0') != std::string::npos) {
      Napi::TypeError::New(env, "cwd must not hold NUL bytes").ThrowAsJavaScriptException();
      return Napi::Value();
    }
  } else if (!info[3].IsNull()) {
    Napi::TypeError::New(env, "cwd must be a string or null").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  if (!info[4].IsArray()) {
    Napi::TypeError::New(env, "stdio must be an array").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  Napi::Array stdio_a = info[4].As<Napi::Array>();
  std::vector<int> stdio(stdio_a.Length());
  for (uint32_t i = 0; i < stdio.size(); ++i) {
    Napi::Value e = stdio_a.Get(i);
    double d = e.IsNumber() ? e.As<Napi::Number>().DoubleValue() : -1e18;
    if (!(d >= spawn::kStdioClose && d <= INT32_MAX) || d != static_cast<int>(d)) {
      Napi::TypeError::New(env, "stdio entries must be descriptors or kinds")
          .ThrowAsJavaScriptException();
      return Napi::Value();
    }
    stdio[i] = static_cast<int>(d);
  }
  int32_t group, pdeathsig;
  if (!Int32Arg(info, 5, &group) || !Int32Arg(info, 6, &pdeathsig)) return Napi::Value();
  if (!info[7].IsBoolean() || !info[8].IsFunction()) {
    Napi::TypeError::New(env, "closeFds must be a boolean and onExit a function")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  int32_t cgroup_procs = -1;
  if (info.Length() > 9 && !info[9].IsUndefined() && !Int32Arg(info, 9, &cgroup_procs)) {
    return Napi::Value();
  }
  if (group < spawn::kGroupNew || group > spawn::kGroupInherit || pdeathsig < 0 ||
      pdeathsig > 64 || cgroup_procs < -1) {
    Napi::RangeError::New(env, "bad group or signal").ThrowAsJavaScriptException();
    return Napi::Value();
  }

  std::vector<const char*> cand;
  for (auto& c : candidates) cand.push_back(c.c_str());
  std::vector<char*> argvp = CStrings(argv), envp = CStrings(envv);
  std::vector<int> parent_fds(stdio.size(), -1);

  spawn::Request req;
  req.candidates = cand.data();
  req.ncandidates = cand.size();
  req.argv = argvp.data();
  // ["/bin/sh", <candidate>, argv[1], ..., nullptr]
  static char kSh[] = "/bin/sh";
  std::vector<char*> sh_argv;
  sh_argv.reserve(argvp.size() + 1);
  sh_argv.push_back(kSh);
  sh_argv.push_back(nullptr);
  for (size_t i = 1; i < argvp.size(); ++i) sh_argv.push_back(argvp[i]);  // ends with nullptr
  if (argvp.size() <= 1) sh_argv.push_back(nullptr);
  req.sh_argv = sh_argv.data();
  req.envp = own_environ ? environ : envp.data();
  req.cwd = has_cwd ? cwd.c_str() : nullptr;
  req.group = group;
  req.pdeathsig = pdeathsig;
  req.cgroup_procs = cgroup_procs;
  req.close_fds = info[7].As<Napi::Boolean>().Value();
  req.stdio = stdio.data();
  req.nstdio = static_cast<int>(stdio.size());
  spawn::Outcome out;
  out.parent_fds = parent_fds.data();
  int r = spawn::Spawn(req, &out);
  if (r < 0) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("errno", Napi::Number::New(env, r));
    o.Set("stage", Napi::String::New(env, StageName(out.stage)));
    return o;
  }
  Napi::Value h = Adopt(env, reg, out.pid, out.pidfd, true, info[8].As<Napi::Function>());
  if (h.IsEmpty() || h.IsNumber()) {
    for (int fd : parent_fds) {
      if (fd >= 0) close(fd);
    }
    if (h.IsNumber()) {  // could not watch it at all (out of memory): do not leave it running
      if (out.pidfd >= 0) {
        sys::PidfdSendSignal(out.pidfd, SIGKILL, 0);
      } else {
        kill(out.pid, SIGKILL);
      }
      siginfo_t si;
      sys::Waitid(P_PID, static_cast<unsigned>(out.pid), &si, WEXITED);
    }
    return h;
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("handle", h);
  o.Set("pid", Napi::Number::New(env, out.pid));
  Napi::Array fds = Napi::Array::New(env, parent_fds.size());
  for (uint32_t i = 0; i < parent_fds.size(); ++i) fds.Set(i, Napi::Number::New(env, parent_fds[i]));
  o.Set("fds", fds);
  return o;
}

// openProcess(pid, onExit) -> handle or -errno. onExit(0) when the process exits.
Napi::Value OpenProcess(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<Registry*>(info.Data());
  int32_t pid;
  if (!Int32Arg(info, 0, &pid)) return Napi::Value();
  if (info.Length() < 2 || !info[1].IsFunction()) {
    Napi::TypeError::New(env, "argument 1 must be a function").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  if (pid <= 0) return Result(env, -ESRCH);
  int fd = sys::PidfdOpen(pid, 0);
  if (fd < 0) return Result(env, fd);
  Napi::Value h = Adopt(env, reg, pid, fd, false, info[1].As<Napi::Function>());
  return h;
}

// The environment is going away (process exit or Worker teardown).
void Teardown(void* arg) {
  auto* reg = static_cast<Registry*>(arg);
  std::vector<ChildState*> states(reg->states.begin(), reg->states.end());
  for (ChildState* s : states) {
    if (s->wrap) {
      s->wrap->Detach();
      s->wrap = nullptr;
    }
    s->cb.Reset();
    s->ctx.reset();
    if (s->own && !s->reaped) {
      siginfo_t si;
      int r = Look(s, &si, true);
      if (r == 0 && si.si_pid == 0 && !reg->main_thread) {
        // A Worker's child outlives the Worker: the process-wide reaper takes it (and its
        // pidfd), so that it does not stay a zombie of this process once it exits.
        CloseWatcher(s);
        Orphanage::Get().Adopt(s->pid, s->pidfd);
        s->pidfd = -1;
      }
      s->reaped = true;
    }
    Dispose(s);
  }
  reg->ctor.Reset();
  delete reg;
}

// Node unloads an addon when the last environment that loaded it goes away (a Worker's), but
// libuv may still call a close callback of ours after that, and the reaper thread runs our code
// for the life of the process: keep this library mapped for good.
void PinLibrary() {
  // A function-local static runs once (and, unlike std::call_once, needs no pthread_once, which
  // glibc 2.34 moved into libc under a new version).
  static const bool pinned = [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&PinLibrary), &info) && info.dli_fname) {
      return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) != nullptr;
    }
    return false;
  }();
  (void)pinned;
}

}  // namespace

void InitChild(Napi::Env env, Napi::Object exports) {
  PinLibrary();
  auto* reg = new Registry();
  napi_get_uv_event_loop(env, &reg->loop);
  reg->main_thread = reg->loop == uv_default_loop();
  reg->ctor = Napi::Persistent(ChildHandle::Define(env, reg));
  napi_add_env_cleanup_hook(env, Teardown, reg);
  exports.Set("spawn", Napi::Function::New(env, Spawn, "spawn", reg));
  exports.Set("openProcess", Napi::Function::New(env, OpenProcess, "openProcess", reg));
  exports.Set("ChildHandle", reg->ctor.Value());
}

}  // namespace procpin
