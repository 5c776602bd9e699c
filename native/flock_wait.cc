// Asynchronous flock(2). Each wait runs on a small thread of its own, never on libuv's
// threadpool, where four blocked lock waiters would starve fs and dns.
//
// Waking a blocked flock: the thread blocks every signal but one wake signal, whose no-op
// handler is installed without SA_RESTART, so a tgkill makes the blocked flock return EINTR.
// The wake signal is a real-time signal nobody else had (see AcquireWakeSignal in
// core/flock_wake.h); an application's handler is never replaced nor reset. The waiter and its
// thread are in flock/waiter.h; this file is the JS binding and the environment's teardown.
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
#include <unistd.h>
#include <uv.h>

#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/flock_wake.h"
#include "core/sys.h"
#include "flock/waiter.h"
#include "glue.h"

namespace procpin {

using flock::AcquireWakeSignal;
using flock::g_pending;
using flock::g_pending_mu;
using flock::Job;
using flock::Mailbox;
using flock::PendingOn;
using flock::RemovePending;
using flock::SleepMicros;
using flock::Waiter;
using flock::WaitThread;

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
