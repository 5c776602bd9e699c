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
//
// Identity is the pidfd. While one is held every wait is waitid(P_PIDFD) and every signal
// pidfd_send_signal, so a child that someone else reaped (a foreign waitpid(-1), SIGCHLD set to
// ignored) is seen as lost (ECHILD) and nothing ever reaches the process that got its number.
// The watched descriptor is private: Child.pidfd hands out a duplicate, so that closing it behind
// procpin's back can neither pull a descriptor from under libuv's epoll nor make procpin act on
// whatever descriptor got the number next (the duplicate is checked to still name this process
// before procpin closes it, and is made again when it does not).
#include <dirent.h>
#include <dlfcn.h>

#include "glibc_floor.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <atomic>
#include <cstdio>

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "endkill.h"
#include "glue.h"
#include "core/spawn.h"
#include "core/sys.h"

namespace procpin {

namespace {

// Whether waitid takes P_PIDFD (Linux 5.4); probed on first use. 0 unknown, 1 yes, 2 no.
std::atomic<int> g_wait_pidfd{0};

// waitid on our own child: through its pidfd when there is one (so that a number that was
// reaped by someone else and reissued can never answer), by pid otherwise (safe while the
// child is unreaped: we never install a SIGCHLD handler; libuv waits only for its own).
int WaitChild(int pidfd, pid_t pid, siginfo_t* si, int options) {
  memset(si, 0, sizeof *si);
  if (pidfd >= 0 && g_wait_pidfd.load(std::memory_order_relaxed) != 2) {
    int r = sys::Waitid(sys::kPIdfd, static_cast<unsigned>(pidfd), si, options);
    if (r != -EINVAL && r != -ENOSYS && r != -EPERM) {
      g_wait_pidfd.store(1, std::memory_order_relaxed);
      return r;
    }
    if (g_wait_pidfd.load(std::memory_order_relaxed) == 1) return r;  // a real EINVAL
    g_wait_pidfd.store(2, std::memory_order_relaxed);
    memset(si, 0, sizeof *si);
  }
  return sys::Waitid(P_PID, static_cast<unsigned>(pid), si, options);
}

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
    bool idle_readable = false;  // polled readable with nothing to reap (traced): use the timer
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
          int r = WaitChild(items_[i].pidfd, items_[i].pid, &si, WEXITED | WNOHANG);
          if (r < 0 || si.si_pid != 0) {  // reaped, or not ours to reap any more
            if (items_[i].pidfd >= 0) close(items_[i].pidfd);
            items_[i] = items_.back();
            items_.pop_back();
            continue;
          }
          if (items_[i].pidfd >= 0 && !items_[i].idle_readable) {
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
      if (r > 0) {
        // A pidfd that polls readable stays readable: one whose child cannot be reaped yet (a
        // tracer has not waited) is looked at on the timer from now on, not polled in a spin.
        std::lock_guard<std::mutex> g(mu_);
        for (const pollfd& p : fds) {
          if (!(p.revents & (POLLIN | POLLHUP))) continue;
          for (Item& it : items_) {
            if (it.pidfd != p.fd) continue;
            siginfo_t si;
            if (WaitChild(it.pidfd, it.pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == 0) {
              it.idle_readable = true;
            }
          }
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
  uintptr_t owner = 0;  // this environment, in the end-kill table
  uv_loop_t* loop = nullptr;
  bool main_thread = false;
  Napi::FunctionReference ctor;
  std::unordered_set<struct ChildState*> states;
};

struct ChildState {
  Registry* reg = nullptr;
  napi_env env = nullptr;
  pid_t pid = -1;
  int pidfd = -1;          // private: watched by libuv, used for every wait and signal
  int pub_fd = -1;         // the duplicate handed out as Child.pidfd, made on first use
  int end_slot = -1;       // the end-kill table entry of a group leader
  bool lost = false;       // someone else reaped it: its status is gone
  unsigned long long start = 0;  // without a pidfd: its start time, the identity of its number
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

// fstat through the raw call (glibc's struct stat is the kernel's on 64-bit targets): glibc 2.33
// moved fstat into libc proper, and calling it would raise the addon's glibc floor.
int FdStat(int fd, struct stat* st) {
#ifdef SYS_newfstatat
  return syscall(SYS_newfstatat, fd, "", st, AT_EMPTY_PATH) == 0 ? 0 : -errno;
#else
  return fstat(fd, st) == 0 ? 0 : -errno;
#endif
}

// Whether descriptor `fd` still names the same process as our private pidfd: the same inode
// (on 6.9+ a pidfd's inode identifies its process) and the same "Pid:" in its fdinfo (before
// 6.9 every pidfd shares one anonymous inode). Anything else is someone else's descriptor now.
bool SameProcessFd(const ChildState* s, int fd) {
  struct stat a, b;
  if (FdStat(fd, &a) != 0 || FdStat(s->pidfd, &b) != 0) return false;
  if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) return false;
  auto pid_line = [](int n, char* out, size_t len) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", n);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0) return false;
    char buf[1024];
    ssize_t r = read(f, buf, sizeof buf - 1);
    close(f);
    if (r <= 0) return false;
    buf[r] = '\0';
    const char* p = strstr(buf, "\nPid:");
    if (!p) return false;
    p += 1;
    size_t i = 0;
    while (p[i] && p[i] != '\n' && i + 1 < len) {
      out[i] = p[i];
      ++i;
    }
    out[i] = '\0';
    return true;
  };
  char la[64], lb[64];
  return pid_line(fd, la, sizeof la) && pid_line(s->pidfd, lb, sizeof lb) && strcmp(la, lb) == 0;
}

// Closes the handed-out duplicate, unless it was closed behind our back and the number now
// names something else (then it is not ours to close).
void ClosePublic(ChildState* s) {
  if (s->pub_fd < 0) return;
  if (s->pidfd >= 0 && SameProcessFd(s, s->pub_fd)) close(s->pub_fd);
  s->pub_fd = -1;
}

void ClosePidfd(ChildState* s) {
  CloseWatcher(s);  // never close a descriptor libuv still watches
  endkill::Remove(s->end_slot);  // before the descriptor it names is closed
  s->end_slot = -1;
  ClosePublic(s);
  if (s->pidfd >= 0) {
    close(s->pidfd);
    s->pidfd = -1;
  }
}

void ApplyRef(ChildState* s);

// No pidfd (or it cannot be polled, or it polls readable with nothing to wait for): look with
// WNOWAIT at a growing interval.
void StartTimer(ChildState* s) {
  s->timer = new uv_timer_t;
  uv_timer_init(s->reg->loop, s->timer);
  s->timer->data = s;
  s->interval = 1;
  uv_timer_start(s->timer, OnTimer, s->interval, 0);
  ApplyRef(s);
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
  StartTimer(s);
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

// The start time of process `pid` (/proc/PID/stat, field 22), or 0 when it cannot be read.
unsigned long long StartTime(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return 0;
  char buf[1024];
  ssize_t n = read(f, buf, sizeof buf - 1);
  close(f);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = strrchr(buf, ')');
  if (!p) return 0;
  for (int field = 2; field < 22 && *p; ++p) {
    if (*p == ' ') ++field;
  }
  return strtoull(p, nullptr, 10);
}

// A look at our own child (WNOWAIT), or its reap. Before any reap the end-kill table forgets
// the number; an ECHILD means someone else reaped it: lost, and the number forgotten too.
int Look(ChildState* s, siginfo_t* si, bool reap) {
  if (s->lost) {
    memset(si, 0, sizeof *si);
    return -ECHILD;
  }
  if (reap) endkill::ForgetNumber(s->end_slot);
  int r;
  if (s->pidfd < 0 && s->start != 0 && StartTime(s->pid) != s->start && StartTime(s->pid) != 0) {
    // No pidfd: the number names another process of ours now (ours was reaped by someone else
    // and the number reissued). Never wait for it, never signal it.
    memset(si, 0, sizeof *si);
    r = -ECHILD;
  } else {
    r = WaitChild(s->pidfd, s->pid, si, WEXITED | WNOHANG | (reap ? 0 : WNOWAIT));
  }
  if (r == -ECHILD) {
    s->lost = true;
    endkill::ForgetNumber(s->end_slot);
  }
  return r;
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
  } else if (s->poll) {
    // Readable, and nothing to wait for: the child exited but a tracer has not waited for it
    // yet. The pidfd stays readable (epoll is level-triggered): look on a timer instead.
    CloseWatcher(s);
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
                           InstanceMethod<&ChildHandle::SignalGroup>("signalGroup"),
                           InstanceMethod<&ChildHandle::InGroup>("inGroup"),
                           InstanceMethod<&ChildHandle::ArmEndKill>("armEndKill"),
                           InstanceMethod<&ChildHandle::KillAndReap>("killAndReap"),
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
  // The handed-out duplicate of the pidfd (see the top of this file): made on first use, and
  // again when the one handed out was closed and its number reused behind our back.
  Napi::Value Pidfd(const Napi::CallbackInfo& info) {
    ChildState* s = state_;
    if (!s || s->pidfd < 0) return Napi::Number::New(info.Env(), -1);
    if (s->pub_fd >= 0 && !SameProcessFd(s, s->pub_fd)) s->pub_fd = -1;
    // Numbered above the private one, so that the lowest free number after a close is not it.
    if (s->pub_fd < 0) s->pub_fd = fcntl(s->pidfd, F_DUPFD_CLOEXEC, s->pidfd + 1);
    return Napi::Number::New(info.Env(), s->pub_fd < 0 ? -1 : s->pub_fd);
  }

  // signalGroup(sig): 0 or -errno. A group signal through the leader's private pidfd
  // (PIDFD_SIGNAL_PROCESS_GROUP), bound to its group even after a reap. -ENOSYS when there is no
  // pidfd or the kernel refuses the flag (the caller may then use the number, while the leader
  // is provably unreaped).
  Napi::Value SignalGroup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t sig;
    if (!Int32Arg(info, 0, &sig)) return Napi::Value();
    ChildState* s = state_;
    if (!s || !s->own) return Result(env, -ESRCH);
    if (s->pidfd < 0) return Result(env, -ENOSYS);
    int r = sys::PidfdSendSignal(s->pidfd, sig, sys::kPidfdSignalProcessGroup);
    return Result(env, r == -EINVAL ? -ENOSYS : r);
  }

  // inGroup(): 1 while the unreaped leader is still in the group it leads, 0 once it left it
  // (setpgid), -errno when it cannot be told (reaped: its number is not ours).
  Napi::Value InGroup(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ChildState* s = state_;
    if (!s || !s->own || s->reaped || s->lost) return Result(env, -ESRCH);
    pid_t g = getpgid(s->pid);
    if (g < 0) return Result(env, -errno);
    return Result(env, g == s->pid ? 1 : 0);
  }

  // armEndKill(pidfdGroup): puts this leader in the end-kill table (its group dies with this
  // environment and with the process, however they end). 0, or -errno.
  Napi::Value ArmEndKill(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ChildState* s = state_;
    bool pidfd_group = BoolArg(info, 0);
    if (!s || !s->own || s->reaped) return Result(env, -ESRCH);
    if (s->end_slot >= 0) return Result(env, 0);
    s->end_slot = endkill::AddLeader(s->reg->owner, s->pidfd, s->pid, pidfd_group, !s->lost);
    return Result(env, s->end_slot < 0 ? -ENOSPC : 0);
  }

  // killAndReap(ms): for dispose. SIGKILL to a child that still runs, a wait of up to `ms`
  // for its exit (SIGKILL is not delayed but by the kernel), the reap. The raw info, or null
  // when it did not exit in time (it is then reaped at its exit), or -errno.
  Napi::Value KillAndReap(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t ms;
    if (!Int32Arg(info, 0, &ms)) return Napi::Value();
    ChildState* s = state_;
    if (!s || !s->own || s->reaped) return Result(env, -ECHILD);
    siginfo_t si;
    int r = Look(s, &si, false);
    if (r < 0) return Result(env, r);
    if (si.si_pid == 0) {
      if (s->pidfd >= 0) {
        sys::PidfdSendSignal(s->pidfd, SIGKILL, 0);
      } else {
        kill(s->pid, SIGKILL);
      }
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
        r = Look(s, &si, false);
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
    siginfo_t si;
    if (s->lost || Look(s, &si, false) < 0) return Result(env, -ESRCH);  // no longer provably ours
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
  if (own && pidfd < 0) s->start = StartTime(pid);
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
    case spawn::kStageSetgid:
      return "setgid";
    case spawn::kStageSetuid:
      return "setuid";
    case spawn::kStageNonblock:
      return "fcntl";
    case spawn::kStageCgroup:
      return "cgroup";
    default:
      return "spawn";
  }
}

// spawn(candidates, argv, env | null, cwd, stdio, group, pdeathsig, closeFds, onExit
//       [, cgroupProcs[, creds]])
//   -> { handle, pid, pidfd, fds } or { errno, stage }
// cgroupProcs: a descriptor of a cgroup's cgroup.procs open for writing, or -1.
// creds: [uid, gid], -1 = unchanged.
Napi::Value Spawn(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<Registry*>(info.Data());
  std::vector<std::string> candidates, argv, envv;
  // env is always a copy (lib/child/child.ts takes it from process.env): the CLONE_VM child never reads
  // the live environ, which a SHARE_ENV Worker may be reallocating meanwhile.
  if (info.Length() < 9 || !StringArray(env, info[0], "candidates", &candidates) ||
      !StringArray(env, info[1], "argv", &argv) || !StringArray(env, info[2], "env", &envv)) {
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
  req.envp = envp.data();
  req.cwd = has_cwd ? cwd.c_str() : nullptr;
  req.group = group;
  req.pdeathsig = pdeathsig;
  req.cgroup_procs = cgroup_procs;
  req.close_fds = info[7].As<Napi::Boolean>().Value();
  req.stdio = stdio.data();
  req.nstdio = static_cast<int>(stdio.size());
  if (info.Length() > 10 && !info[10].IsUndefined()) {
    Napi::Value u = info[10].IsArray() ? info[10].As<Napi::Array>().Get(0u) : Napi::Value();
    Napi::Value g = info[10].IsArray() ? info[10].As<Napi::Array>().Get(1u) : Napi::Value();
    if (u.IsEmpty() || g.IsEmpty() || !u.IsNumber() || !g.IsNumber()) {
      Napi::TypeError::New(env, "creds must be [uid, gid]").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    double ud = u.As<Napi::Number>().DoubleValue(), gd = g.As<Napi::Number>().DoubleValue();
    if (!(ud >= -1 && ud <= 4294967294.0 && ud == static_cast<long>(ud)) ||
        !(gd >= -1 && gd <= 4294967294.0 && gd == static_cast<long>(gd))) {
      Napi::RangeError::New(env, "bad uid or gid").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    req.uid = static_cast<long>(ud);
    req.gid = static_cast<long>(gd);
  }
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
  int fd = sys::OpenPidfd(pid);  // -ENOSYS where pidfds do not work (old kernel, seccomp)
  if (fd < 0) return Result(env, fd);
  Napi::Value h = Adopt(env, reg, pid, fd, false, info[1].As<Napi::Function>());
  return h;
}

// reapGroupOrphans(pgid, leader) -> children of ours still alive in group `pgid`, or -errno.
// For a supervisor that is a subreaper or PID 1: members re-parented to it become its zombies.
// Reaps every zombie child of this process in the group but its leader, whose zombie (unreaped
// until the group's own reap) pins the pgid, so that each waitid by pid names what we saw.
// Children are read from /proc/self/task/*/children (a re-parented child hangs off a thread).
Napi::Value ReapGroupOrphans(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t pgid, leader;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &leader)) return Napi::Value();
  DIR* task_dir = opendir("/proc/self/task");
  if (task_dir == nullptr) return Result(env, -errno);
  std::vector<pid_t> kids;
  std::vector<pid_t> tids;
  while (struct dirent* d = readdir(task_dir)) {
    if (d->d_name[0] >= '1' && d->d_name[0] <= '9') tids.push_back(static_cast<pid_t>(atoi(d->d_name)));
  }
  closedir(task_dir);
  for (pid_t tid : tids) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", tid);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0) continue;
    std::string text;
    char buf[4096];
    for (ssize_t r; (r = read(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(r));
    close(f);
    for (const char* p = text.c_str(); *p;) {
      char* end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      kids.push_back(static_cast<pid_t>(v));
      p = end;
    }
  }
  int alive = 0;
  for (pid_t kid : kids) {
    if (kid == leader || getpgid(kid) != pgid) continue;
    // Our child, unreaped (it is listed): its number is still its own.
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = sys::Waitid(P_PID, static_cast<unsigned>(kid), &si, WEXITED | WNOHANG);
    if (r == 0 && si.si_pid == 0) ++alive;
  }
  return Result(env, alive);
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
    if (s->own && !s->reaped) {
      siginfo_t si;
      int r = Look(s, &si, true);
      if (r == 0 && si.si_pid == 0 && !reg->main_thread) {
        // A Worker's child outlives the Worker: the process-wide reaper takes it (and its
        // pidfd), so that it does not stay a zombie of this process once it exits.
        CloseWatcher(s);
        endkill::Remove(s->end_slot);  // killed above; the reaper owns the descriptor now
        s->end_slot = -1;
        ClosePublic(s);
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
