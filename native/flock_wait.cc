// Asynchronous flock(2). Each wait runs on a small thread of its own, never on libuv's
// threadpool, where four blocked lock waiters would starve fs and dns.
//
// Waking a blocked flock: the thread blocks every signal but one wake signal, whose no-op
// handler is installed without SA_RESTART, so a tgkill makes the blocked flock return EINTR.
// The wake signal is a real-time signal nobody else had (see AcquireWakeSignal); an
// application's handler is never replaced nor reset.
// A kick can land between the thread's look at `cancelled` and its entry into flock; the kick is
// then lost, so a cancel keeps kicking (a timer on the loop) until the thread reports back.
//
// Ownership, stated once:
//   (a) The thread locks a dup of the caller's fd (same open file description, same lock), so a
//       caller that closes its fd mid-wait cannot make the thread lock a recycled number.
//   (b) The dup is closed exactly once, under the waiter's mutex: by the thread when it ends
//       holding no lock; otherwise by the JS thread when it consumes the result (delivery or
//       environment teardown). A wait cancelled before its result was consumed never leaves the
//       lock taken: whoever sees both "taken" and "cancelled" unlocks through the dup.
//   (c) The thread touches only what it co-owns (Waiter and Mailbox, reference-counted), never
//       the environment: it may outlive a terminated Worker without touching freed memory.
//   (d) The environment's teardown (an async cleanup hook) cancels every wait, waits for each
//       thread to let go, closes its libuv handles and only then lets Node go on.
//   (e) Every thread is joined on the JS thread (after its delivery, or at teardown), so none is
//       still running this module's code when Node unloads the module after the last
//       environment that loaded it (a Worker) is gone.
// Threads are libuv's (uv_thread_*, exported by node) and are woken with a raw tgkill, and
// shared state is counted by hand rather than with std::shared_ptr: glibc 2.34 gave the
// pthread_* calls new symbol versions and libstdc++'s shared_ptr reads __libc_single_threaded
// (2.32), either of which would raise the addon's glibc floor above 2.28.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/sys.h"
#include "glue.h"

namespace procpin {

namespace {

void NoopHandler(int) {}

// The wake signal: a real-time signal whose disposition was the default (nobody's) when the first
// wait needed one, from SIGRTMAX-1 downwards. Chosen once for the process, and never given back:
// the handler lives in this library, which child/handle.cc pins for the life of the process, so it
// can stay installed, and restoring SIG_DFL later could overwrite a handler that the application
// set meanwhile. A signal that somebody else took after we chose it is left to them (the waits then
// poll with LOCK_NB). When every candidate is taken, the waits poll too.
std::mutex g_wake_mu;
int g_wake_sig = 0;          // 0: not chosen yet; -1: none free
std::atomic<int> g_wake{0};  // g_wake_sig, for the kick (read without the lock)

bool IsOurs(const struct sigaction& sa) {
  return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == NoopHandler;
}

// The wake signal, or 0 when the waits must poll.
int AcquireWakeSignal() {
  std::lock_guard<std::mutex> g(g_wake_mu);
  if (g_wake_sig == 0) {
    g_wake_sig = -1;
    for (int sig = SIGRTMAX - 1; sig >= SIGRTMIN + 2; --sig) {
      struct sigaction old;
      if (sigaction(sig, nullptr, &old) != 0) continue;
      if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue;
      struct sigaction sa = {};
      sa.sa_handler = NoopHandler;
      sigfillset(&sa.sa_mask);
      sa.sa_flags = 0;  // no SA_RESTART: the blocked flock must return EINTR
      if (sigaction(sig, &sa, nullptr) == 0) {
        g_wake_sig = sig;
        g_wake.store(sig, std::memory_order_relaxed);
        break;
      }
    }
  }
  if (g_wake_sig < 0) return 0;
  // Still ours? Someone may have installed a handler of their own over it since.
  struct sigaction cur;
  if (sigaction(g_wake_sig, nullptr, &cur) != 0 || !IsOurs(cur)) return 0;
  return g_wake_sig;
}

void SleepMicros(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// Intrusive reference count: the JS thread and the waiting thread each hold one.
template <typename T>
struct Counted {
  std::atomic<int> refs{1};
  void Ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete static_cast<T*>(this);
  }
};

// One wait. Shared by the JS thread and the waiting thread; every field below `op` is guarded
// by `mu`.
struct Waiter : Counted<Waiter> {
  int op = 0;
  bool blocking = true;  // false: no wake signal of ours, poll with LOCK_NB
  int wake_sig = 0;      // the signal that interrupts a blocked flock (when blocking)
  uv_thread_t thread{};  // joinable: joined on the JS thread, see (e)
  std::mutex mu;
  int fd = -1;    // our dup; see (b)
  pid_t tid = 0;  // the thread's id for tgkill, set by the thread itself
  bool started = false;
  bool finished = false;  // the thread has its result and will not touch the lock again
  bool cancelled = false;
  // Given up on while still blocked: the wake signal stopped being ours (the application set a
  // disposition of its own for it meanwhile), so no kick can interrupt this flock. The caller is
  // told ECANCELED at once; the thread unlocks and closes the dup itself whenever flock returns
  // (it sees `cancelled`), and is never joined: this library is pinned for the life of the
  // process (child/handle.cc), so the thread can never run unmapped code.
  bool abandoned = false;
  int result = 0;

  // Unlocks (when `unlock`) and closes the dup if it is still open. Caller holds mu.
  void ReleaseFd(bool unlock) {
    if (fd < 0) return;
    if (unlock) sys::FlockOnce(fd, LOCK_UN);
    close(fd);
    fd = -1;
  }
  // Whether a kick can still interrupt a blocked flock. Caller holds mu.
  bool Kickable() const {
    struct sigaction cur;
    return blocking && sigaction(wake_sig, nullptr, &cur) == 0 && IsOurs(cur);
  }
  // Interrupts a blocked flock. Caller holds mu; the thread is not joined before `finished`,
  // so its id cannot have been reused here.
  void Kick() {
    // Never a signal for the application's own handler: only while the wake signal is ours.
    if (blocking && started && !finished && tid > 0 && Kickable()) {
      syscall(SYS_tgkill, getpid(), tid, wake_sig);
    }
  }
  ~Waiter() { ReleaseFd(false); }
};

// Where finished threads leave their ids for the JS thread. `open` turns false (under mu)
// before the async handle is closed, so no thread signals a closed handle.
struct Mailbox : Counted<Mailbox> {
  std::mutex mu;
  bool open = true;
  uv_async_t* async = nullptr;
  std::vector<uint32_t> done;
};

// Every wait not yet delivered, in every environment of the process (JS threads only), so that a
// second wait on an open file description that already has one is refused: flock(2) grants a
// description that holds the lock at once, so an abort of the second wait, which must leave no
// lock taken, would drop the lock the first one was granted.
std::mutex g_pending_mu;
std::vector<Waiter*> g_pending;

// Whether descriptors a and b share one open file description. kcmp(2) says so exactly; where
// it is missing or refused (CONFIG_KCMP off, a seccomp policy: it belongs to the ptrace family),
// the same file counts as the same description, which refuses more than it must, never less.
bool SameDescription(int a, int b) {
  pid_t me = getpid();
  long r = syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, a, b);
  if (r >= 0) return r == 0;
  struct stat sa, sb;  // the raw call: glibc 2.33's fstat would raise the addon's glibc floor
  if (syscall(SYS_fstat, a, &sa) != 0 || syscall(SYS_fstat, b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// A wait that is still pending on the description behind `fd`. Caller holds g_pending_mu.
bool PendingOn(int fd) {
  for (Waiter* w : g_pending) {
    std::lock_guard<std::mutex> wg(w->mu);
    if (w->fd >= 0 && SameDescription(fd, w->fd)) return true;
  }
  return false;
}

void RemovePending(Waiter* w) {
  std::lock_guard<std::mutex> g(g_pending_mu);
  g_pending.erase(std::remove(g_pending.begin(), g_pending.end(), w), g_pending.end());
}

// What a thread is started with; it owns one reference to each.
struct Job {
  Waiter* waiter;
  Mailbox* mailbox;
  uint32_t id;
};

void WaitThread(void* arg) {
  Job job = *static_cast<Job*>(arg);
  delete static_cast<Job*>(arg);
  Waiter* w = job.waiter;
  // Created with every signal blocked; let only the wake signal in. (sigprocmask acts on the
  // calling thread on Linux.)
  sigset_t wake;
  sigemptyset(&wake);
  if (w->blocking) sigaddset(&wake, w->wake_sig);
  if (w->blocking) sigprocmask(SIG_UNBLOCK, &wake, nullptr);
  {
    std::lock_guard<std::mutex> g(w->mu);
    w->tid = static_cast<pid_t>(syscall(SYS_gettid));
  }
  int r;
  for (;;) {
    int fd;
    {
      std::lock_guard<std::mutex> g(w->mu);
      if (w->cancelled) {
        r = -ECANCELED;
        break;
      }
      fd = w->fd;  // stays open until this thread sets `finished`
    }
    if (w->blocking) {
      r = sys::FlockOnce(fd, w->op);
      if (r == -EINTR) continue;
      break;
    }
    r = sys::FlockOnce(fd, w->op | LOCK_NB);
    if (r != -EWOULDBLOCK && r != -EINTR) break;
    SleepMicros(2000);
  }
  {
    std::lock_guard<std::mutex> g(w->mu);
    if (r == 0 && w->cancelled) {
      // Taken just as the caller gave up: give it back.
      w->ReleaseFd(true);
      r = -ECANCELED;
    } else if (r != 0) {
      w->ReleaseFd(false);
    }
    w->result = r;
    w->finished = true;
  }
  Mailbox* m = job.mailbox;
  {
    std::lock_guard<std::mutex> g(m->mu);
    if (m->open) {
      m->done.push_back(job.id);
      uv_async_send(m->async);
    }
  }
  m->Unref();
  w->Unref();
}

}  // namespace

// Per-environment state, used on the JS thread only (threads see the Mailbox).
struct FlockRegistry {
  struct Pending {
    Waiter* waiter = nullptr;  // one reference, dropped after the join
    napi_ref callback = nullptr;
  };
  napi_env env = nullptr;
  uv_async_t* async = nullptr;
  uv_timer_t* kicker = nullptr;
  Mailbox* mailbox = new Mailbox();  // one reference, dropped when the registry goes
  std::unordered_map<uint32_t, Pending> pending;
  uint32_t next = 1;
  napi_async_cleanup_hook_handle hook = nullptr;
  int open_handles = 0;
  bool torn_down = false;
};

namespace {

// The async handle keeps the loop alive exactly while a wait is pending.
void UpdateRef(FlockRegistry* reg) {
  if (reg->pending.empty()) {
    uv_unref(reinterpret_cast<uv_handle_t*>(reg->async));
  } else {
    uv_ref(reinterpret_cast<uv_handle_t*>(reg->async));
  }
}

void CallBack(napi_env env, napi_ref ref, int result) {
  napi_value cb = nullptr, recv = nullptr, arg = nullptr, ignored = nullptr;
  if (napi_get_reference_value(env, ref, &cb) != napi_ok || cb == nullptr) return;
  if (napi_get_global(env, &recv) != napi_ok || napi_create_int32(env, result, &arg) != napi_ok) {
    return;
  }
  // No async context: the callback is the module's own promise plumbing.
  napi_status s = napi_make_callback(env, nullptr, recv, cb, 1, &arg, &ignored);
  if (s == napi_pending_exception) {
    napi_value err;
    if (napi_get_and_clear_last_exception(env, &err) == napi_ok) napi_fatal_exception(env, err);
  }
}

void OnDone(uv_async_t* handle) {
  auto* reg = static_cast<FlockRegistry*>(handle->data);
  if (reg->torn_down) return;
  std::vector<uint32_t> done;
  {
    std::lock_guard<std::mutex> g(reg->mailbox->mu);
    done.swap(reg->mailbox->done);
  }
  napi_env env = reg->env;
  for (uint32_t id : done) {
    auto it = reg->pending.find(id);
    if (it == reg->pending.end()) continue;
    FlockRegistry::Pending p = it->second;
    reg->pending.erase(it);
    int r;
    {
      std::lock_guard<std::mutex> g(p.waiter->mu);
      r = p.waiter->result;
      if (r == 0 && p.waiter->cancelled) {
        // The cancel came after the thread took the lock but before this delivery.
        p.waiter->ReleaseFd(true);
        r = -ECANCELED;
      }
      // Locked: the caller's descriptor holds the lock now (same open file description).
      p.waiter->ReleaseFd(false);
    }
    RemovePending(p.waiter);
    // The thread is past its last look at the waiter; it only has to return.
    uv_thread_join(&p.waiter->thread);
    p.waiter->Unref();
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    CallBack(env, p.callback, r);
    napi_close_handle_scope(env, scope);
    napi_delete_reference(env, p.callback);
  }
  if (!reg->torn_down) UpdateRef(reg);
}

void OnKick(uv_timer_t* t) {
  auto* reg = static_cast<FlockRegistry*>(t->data);
  bool more = false;
  std::vector<uint32_t> given_up;
  for (auto& [id, p] : reg->pending) {
    std::lock_guard<std::mutex> g(p.waiter->mu);
    if (p.waiter->cancelled && !p.waiter->finished && p.waiter->blocking) {
      if (p.waiter->Kickable()) {
        p.waiter->Kick();
        more = true;
      } else {
        p.waiter->abandoned = true;
        given_up.push_back(id);
      }
    }
  }
  if (!more) uv_timer_stop(t);
  napi_env env = reg->env;
  for (uint32_t id : given_up) {
    auto it = reg->pending.find(id);
    FlockRegistry::Pending p = it->second;
    reg->pending.erase(it);
    RemovePending(p.waiter);
    p.waiter->Unref();  // the thread keeps its own reference
    napi_handle_scope scope;
    napi_open_handle_scope(env, &scope);
    CallBack(env, p.callback, -ECANCELED);
    napi_close_handle_scope(env, scope);
    napi_delete_reference(env, p.callback);
  }
  if (!given_up.empty() && !reg->torn_down) UpdateRef(reg);
}

void OnHandleClosed(uv_handle_t* h) {
  auto* reg = static_cast<FlockRegistry*>(h->data);
  if (h->type == UV_ASYNC) {
    delete reinterpret_cast<uv_async_t*>(h);
  } else {
    delete reinterpret_cast<uv_timer_t*>(h);
  }
  if (--reg->open_handles == 0) {
    napi_remove_async_cleanup_hook(reg->hook);
    reg->mailbox->Unref();
    delete reg;
  }
}

// The environment is going away (process exit, Worker terminated): cancel every wait and wait
// for each thread to let go of its descriptor and end, so none goes on waiting for, or holding,
// a lock nobody will ever hear about. A kicked flock returns in microseconds; in polling mode a
// thread looks at `cancelled` every 2 ms.
void Teardown(napi_async_cleanup_hook_handle hook, void* arg) {
  auto* reg = static_cast<FlockRegistry*>(arg);
  reg->hook = hook;
  reg->torn_down = true;
  {
    std::lock_guard<std::mutex> g(reg->mailbox->mu);
    reg->mailbox->open = false;
  }
  for (auto& [id, p] : reg->pending) {
    (void)id;
    std::lock_guard<std::mutex> g(p.waiter->mu);
    p.waiter->cancelled = true;
  }
  for (;;) {
    bool all = true;
    for (auto& [id, p] : reg->pending) {
      (void)id;
      std::lock_guard<std::mutex> g(p.waiter->mu);
      if (p.waiter->finished || p.waiter->abandoned) continue;
      if (p.waiter->blocking && !p.waiter->Kickable()) {
        p.waiter->abandoned = true;  // no kick can reach it: see Waiter::abandoned
        continue;
      }
      all = false;
      p.waiter->Kick();
    }
    if (all) break;
    SleepMicros(100);
  }
  for (auto& [id, p] : reg->pending) {
    (void)id;
    {
      std::lock_guard<std::mutex> g(p.waiter->mu);
      // Finished holding the lock before it saw the cancel: nobody will be told, give it back.
      // (A thread still running will see `cancelled` and do the same itself.)
      if (p.waiter->finished) p.waiter->ReleaseFd(true);
    }
    RemovePending(p.waiter);
    bool abandoned;
    {
      std::lock_guard<std::mutex> g(p.waiter->mu);
      abandoned = p.waiter->abandoned;
    }
    if (!abandoned) uv_thread_join(&p.waiter->thread);
    p.waiter->Unref();
    napi_delete_reference(reg->env, p.callback);
  }
  reg->pending.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(reg->async), OnHandleClosed);
  uv_close(reinterpret_cast<uv_handle_t*>(reg->kicker), OnHandleClosed);
}

// flockWait(fd, op, callback(result)) -> id (> 0), 0 when granted at once (no callback then),
// -EALREADY when a wait is pending on the same open file description, or -errno when the wait
// could not start.
// result is 0 (locked), -ECANCELED (flockCancel), or -errno.
Napi::Value FlockWait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, op;
  if (!Int32Arg(info, 0, &fd) || !Int32Arg(info, 1, &op)) return Napi::Value();
  if (info.Length() < 3 || !info[2].IsFunction()) {
    Napi::TypeError::New(env, "argument 2 must be a function").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  FlockRegistry* reg = GetAddonData(env)->flock;
  if (reg == nullptr || reg->torn_down) return Result(env, -ECANCELED);
  int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (dupfd < 0) return Result(env, -errno);
  // From the look at pending waits to this wait's registration, under one lock: two JS threads
  // cannot both start a wait on one description.
  std::unique_lock<std::mutex> pending_lock(g_pending_mu);
  if (PendingOn(dupfd)) {
    close(dupfd);
    return Result(env, -EALREADY);  // lib/primitives.ts: ERR_PROCPIN_FLOCK_PENDING
  }
  // First without waiting: a description that already holds this lock gets it at once, and no
  // abort can come between that grant and its delivery (whose LOCK_UN would drop a lock the
  // description held before the call).
  int now = sys::FlockOnce(dupfd, (op & ~LOCK_NB) | LOCK_NB);
  if (now != -EWOULDBLOCK) {
    close(dupfd);
    return Result(env, now);  // 0: granted at once
  }
  Waiter* w = new Waiter();  // the registry's reference
  w->fd = dupfd;
  w->op = op & ~LOCK_NB;
  w->wake_sig = AcquireWakeSignal();
  w->blocking = w->wake_sig != 0;
  uint32_t id = reg->next++;
  if (reg->next == 0) reg->next = 1;

  w->Ref();  // the thread's
  reg->mailbox->Ref();
  auto* job = new Job{w, reg->mailbox, id};
  int e;
  {
    std::lock_guard<std::mutex> g(w->mu);
    uv_thread_options_t opts;
    opts.flags = UV_THREAD_HAS_STACK_SIZE;
    opts.stack_size = 128 * 1024;
    // The thread starts with every signal blocked (glibc's sigfillset leaves out its own
    // internal signals): no process-directed signal meant for the JS thread lands on it.
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    e = uv_thread_create_ex(&w->thread, &opts, WaitThread, job);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    if (e == 0) w->started = true;
  }
  if (e != 0) {
    delete job;
    reg->mailbox->Unref();
    w->Unref();
    w->Unref();             // the last reference: the destructor closes the dup
    return Result(env, e);  // libuv errors are -errno
  }
  napi_ref ref;
  napi_create_reference(env, info[2], 1, &ref);
  reg->pending.emplace(id, FlockRegistry::Pending{w, ref});
  g_pending.push_back(w);
  pending_lock.unlock();
  UpdateRef(reg);
  return Napi::Number::New(env, id);
}

// flockCancel(id) -> true while the wait's result is still to be delivered: it will then be
// -ECANCELED, with no lock left taken. false for an unknown or already delivered id.
Napi::Value FlockCancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t id;
  if (!Uint32Arg(info, 0, &id)) return Napi::Value();
  FlockRegistry* reg = GetAddonData(env)->flock;
  if (reg == nullptr || reg->torn_down) return Napi::Boolean::New(env, false);
  auto it = reg->pending.find(id);
  if (it == reg->pending.end()) return Napi::Boolean::New(env, false);
  Waiter* w = it->second.waiter;
  std::lock_guard<std::mutex> g(w->mu);
  w->cancelled = true;
  if (!w->finished && w->blocking) {
    w->Kick();
    if (!uv_is_active(reinterpret_cast<uv_handle_t*>(reg->kicker))) {
      uv_timer_start(reg->kicker, OnKick, 1, 1);
    }
  }
  return Napi::Boolean::New(env, true);
}

}  // namespace

void InitFlockWait(Napi::Env env, Napi::Object exports) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) {
    Napi::Error::New(env, "procpin: no event loop").ThrowAsJavaScriptException();
    return;
  }
  auto* reg = new FlockRegistry();
  reg->env = env;
  reg->async = new uv_async_t;
  uv_async_init(loop, reg->async, OnDone);
  reg->async->data = reg;
  uv_unref(reinterpret_cast<uv_handle_t*>(reg->async));
  reg->kicker = new uv_timer_t;
  uv_timer_init(loop, reg->kicker);
  reg->kicker->data = reg;
  uv_unref(reinterpret_cast<uv_handle_t*>(reg->kicker));
  reg->open_handles = 2;
  reg->mailbox->async = reg->async;
  GetAddonData(env)->flock = reg;
  napi_add_async_cleanup_hook(env, Teardown, reg, nullptr);
  SetFunction(env, exports, "flockWait", FlockWait);
  SetFunction(env, exports, "flockCancel", FlockCancel);
}

}  // namespace procpin
