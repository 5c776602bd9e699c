// The handle's life: made by spawn or openProcess (Adopt), asked by JavaScript, let go when
// nobody will ask any more (close(), garbage collection, an environment that ends), and freed.
#include "handle.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/sys.h"
#include "../endkill.h"
#include "../glibc_floor.h"  // before any call to dlopen or dladdr
#include "../glue.h"

namespace procpin::child {

void Dispose(ChildState* s) {
  if (s->reg) s->reg->states.erase(s);
  ClosePidfd(s);
  s->cb.Reset();
  s->ctx.reset();
  if (s->wrap) s->wrap->Detach();
  delete s;
}

// The one place that decides what becomes of an unreaped child nobody will ask about any more
// (close(), the wrapper collected or never made, the environment ending): an exited child is
// reaped now (0, si->si_pid != 0); a running one is reaped the moment it exits, by this
// environment's watch, unref'd (0, si_pid 0, state kLetGo). When the environment itself ends,
// a Worker's running child goes to the process-wide orphan reaper with its pidfd (it would stay
// a zombie of this process once it exits), and the main thread's is left to the ending process;
// either way it is no longer ours (kReaped). -errno when there was nothing to reap (lost).
int LetGo(ChildState* s, siginfo_t* si, bool env_ending) {
  if (!s->unreaped()) {
    memset(si, 0, sizeof *si);
    return -ECHILD;
  }
  int r = Reap(s, si);
  if (r == 0 && si->si_pid == 0) {
    if (!env_ending) {
      s->state = State::kLetGo;
      s->watch.refed = false;
      ApplyRef(s);
      return 0;
    }
    if (!s->reg->main_thread) {
      CloseWatch(s);
      endkill::Remove(s->end_slot);  // killed by the teardown; the reaper owns the descriptor now
      s->end_slot = -1;
      ClosePublic(s);
      AdoptOrphan(s->pid, s->pidfd);
      s->pidfd = -1;
    }
  }
  if (s->unreaped()) s->state = State::kReaped;  // not ours any more, or a wait that failed
  return r;
}

Napi::Function ChildHandle::Define(Napi::Env env, Registry* reg) {
#define PROCPIN_METHOD(member, name) InstanceMethod<&ChildHandle::member>(name),
  return DefineClass(env, "ChildHandle", {PROCPIN_CHILD_HANDLE_METHODS(PROCPIN_METHOD)}, reg);
#undef PROCPIN_METHOD
}

ChildHandle::ChildHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ChildHandle>(info) {
  if (info.Length() < 1 || !info[0].IsExternal()) {
    Napi::TypeError::New(info.Env(), "ChildHandle is made by spawn and openProcess")
        .ThrowAsJavaScriptException();
    return;
  }
  state_ = info[0].As<Napi::External<ChildState>>().Data();
  state_->wrap = this;
}

ChildHandle::~ChildHandle() {
  ChildState* s = state_;
  if (!s) return;
  state_ = nullptr;
  s->wrap = nullptr;
  s->cb.Reset();
  s->ctx.reset();
  siginfo_t si;
  if (s->unreaped()) LetGo(s, &si, false);
  if (s->state == State::kLetGo) return;  // still runs: reaped at its exit
  Dispose(s);
}

Napi::Value ChildHandle::Pidfd(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), state_ ? PublicPidfd(state_) : -1);
}

// A WNOHANG | WNOWAIT look: the raw info, null while running, or -errno.
Napi::Value ChildHandle::Poll(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!state_ || !state_->unreaped()) return Result(env, -ECHILD);
  siginfo_t si;
  int r = Peek(state_, &si);
  if (r < 0) return Result(env, r);
  if (si.si_pid == 0) return env.Null();
  return RawInfo(env, si);
}

// reap(): the reaping wait, WNOHANG. Null while running. Afterwards the exit is no longer
// watched and the pidfd is closed.
Napi::Value ChildHandle::Reap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ChildState* s = state_;
  if (!s || !s->unreaped()) return Result(env, -ECHILD);
  siginfo_t si;
  int r = child::Reap(s, &si);
  if (r < 0) return Result(env, r);
  if (si.si_pid == 0) return env.Null();
  s->cb.Reset();
  s->ctx.reset();
  ClosePidfd(s);
  return RawInfo(env, si);
}

// kill(sig): 0, or -errno; -ESRCH once reaped (the pid may name a stranger now).
Napi::Value ChildHandle::Kill(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t sig;
  if (!Int32Arg(info, 0, &sig)) return Napi::Value();
  if (!state_) return Result(env, -ESRCH);
  return Result(env, SignalProcess(state_, sig));
}

// killAndReap(ms): for dispose. SIGKILL to a child that still runs, a wait of up to `ms` for its
// exit (SIGKILL is not delayed but by the kernel), the reap. The raw info, or null when it did
// not exit in time (it is then reaped at its exit), or -errno.
Napi::Value ChildHandle::KillAndReap(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t ms;
  if (!Int32Arg(info, 0, &ms)) return Napi::Value();
  ChildState* s = state_;
  if (!s || !s->unreaped()) return Result(env, -ECHILD);
  siginfo_t si;
  int r = Peek(s, &si);
  if (r < 0) return Result(env, r);
  if (si.si_pid == 0) {
    SignalProcess(s, SIGKILL);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int delay_us = 50;;) {
      if (s->pidfd >= 0) {
        pollfd p = {s->pidfd, POLLIN, 0};
        ::poll(&p, 1, ms > 0 ? 1 : 0);
      } else {
        usleep(delay_us);
        delay_us = delay_us * 2 > 5000 ? 5000 : delay_us * 2;
      }
      r = Peek(s, &si);
      if (r < 0) return Result(env, r);
      if (si.si_pid != 0) break;
      struct timespec t;
      clock_gettime(CLOCK_MONOTONIC, &t);
      if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms) {
        return env.Null();
      }
    }
  }
  return Reap(info);
}

// For openProcess: whether the pidfd polls readable (the process has exited).
Napi::Value ChildHandle::HasExited(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ChildState* s = state_;
  bool seen = s && s->state != State::kRunning && s->state != State::kLetGo;
  if (!s || s->pidfd < 0) return Napi::Boolean::New(env, s ? seen : true);
  pollfd p = {s->pidfd, POLLIN, 0};
  int r = ::poll(&p, 1, 0);
  return Napi::Boolean::New(env, seen || (r > 0 && (p.revents & POLLIN)));
}

Napi::Value ChildHandle::Ref(const Napi::CallbackInfo& info) {
  if (state_) {
    state_->watch.refed = true;
    ApplyRef(state_);
  }
  return info.Env().Undefined();
}

Napi::Value ChildHandle::Unref(const Napi::CallbackInfo& info) {
  if (state_) {
    state_->watch.refed = false;
    ApplyRef(state_);
  }
  return info.Env().Undefined();
}

// close(): for a child, reaps it if it has exited (returning the raw info), or, while it runs,
// lets it go (returns null; the exit callback still fires, with reaped = true); -ECHILD for one
// that was lost. For openProcess, closes the pidfd. Idempotent: undefined when already closed.
Napi::Value ChildHandle::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ChildState* s = state_;
  if (!s) return env.Undefined();
  Napi::Value out = env.Undefined();
  if (s->unreaped()) {
    siginfo_t si;
    int r = LetGo(s, &si, false);
    if (s->state == State::kLetGo) return env.Null();
    out = r < 0 ? Result(env, r) : RawInfo(env, si);
  } else if (s->state == State::kLost) {
    out = Result(env, -ECHILD);
  }
  state_ = nullptr;
  s->wrap = nullptr;
  Dispose(s);
  return out;
}

Napi::Value Adopt(Napi::Env env, Registry* reg, pid_t pid, int pidfd, Kind kind, Napi::Function cb,
                  int end_kill) {
  auto* s = new ChildState();
  s->reg = reg;
  s->env = env;
  s->kind = kind;
  s->pid = pid;
  s->pidfd = pidfd;
  if (s->child() && pidfd < 0) TakeIdentity(s);
  s->cb = Napi::Persistent(cb);
  s->ctx =
      std::make_unique<Napi::AsyncContext>(env, s->child() ? "procpin:child" : "procpin:process");
  reg->states.insert(s);
  int r = StartWatch(s);
  if (r == 0 && end_kill >= 0) r = ArmEndKill(s, end_kill == 1);
  if (r < 0) {
    if (s->child()) {  // nobody will have it: it must not run on, nor stay a zombie
      SignalProcess(s, SIGKILL);
      siginfo_t si;
      WaitChild(s->pidfd, s->pid, &si, WEXITED);
    }
    Dispose(s);
    return Result(env, r);
  }
  Napi::Object h = reg->ctor.New({Napi::External<ChildState>::New(env, s)});
  if (env.IsExceptionPending() || h.IsEmpty()) {
    // No wrapper (the environment is terminating, or out of memory): nobody will ask. The child
    // is still reaped; a leader's group, which no group will ever clean, is killed first, while
    // the leader is unreaped and its group is still its own.
    s->cb.Reset();
    s->ctx.reset();
    if (end_kill >= 0) {
      SignalGroup(s, SIGKILL, end_kill == 1);
      SignalProcess(s, SIGKILL);
    }
    siginfo_t si;
    if (s->unreaped()) LetGo(s, &si, false);
    if (s->state != State::kLetGo) Dispose(s);
    return Napi::Value();
  }
  return h;
}

namespace {

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
  int fd = sys::OpenPidfd(pid);  // -ENOSYS where pidfds do not work (old kernel, seccomp)
  if (fd < 0) return Result(env, fd);
  return Adopt(env, reg, pid, fd, Kind::kProcess, info[1].As<Napi::Function>());
}

// The environment is going away (process exit or Worker teardown). Its groups are killed first,
// while their leaders are still unreaped (a Worker's terminate() included): nothing it started
// outlives it.
void Teardown(void* arg) {
  auto* reg = static_cast<Registry*>(arg);
  endkill::KillOwner(reg->owner);
  std::vector<ChildState*> states(reg->states.begin(), reg->states.end());
  for (ChildState* s : states) {
    if (s->wrap) {
      s->wrap->Detach();
      s->wrap = nullptr;
    }
    s->cb.Reset();
    s->ctx.reset();
    siginfo_t si;
    LetGo(s, &si, true);
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

}  // namespace procpin::child

namespace procpin {

void InitChild(Napi::Env env, Napi::Object exports) {
  using namespace child;
  PinLibrary();
  auto* reg = new Registry();
  reg->owner = reinterpret_cast<uintptr_t>(GetAddonData(env));
  napi_get_uv_event_loop(env, &reg->loop);
  reg->main_thread = reg->loop == uv_default_loop();
  reg->ctor = Napi::Persistent(ChildHandle::Define(env, reg));
  napi_add_env_cleanup_hook(env, Teardown, reg);
  exports.Set("spawn", Napi::Function::New(env, Spawn, "spawn", reg));
  exports.Set("openProcess", Napi::Function::New(env, OpenProcess, "openProcess", reg));
  exports.Set("reapGroupOrphans", Napi::Function::New(env, ReapGroupOrphans, "reapGroupOrphans"));
  exports.Set("ChildHandle", reg->ctor.Value());
}

}  // namespace procpin
