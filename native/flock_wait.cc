// Asynchronous flock(2): each wait runs on a dedicated thread of its own, never on libuv's
// threadpool, where four blocked lock waiters would starve fs and dns. The thread blocks every
// signal but one wake signal, whose no-op handler is installed without SA_RESTART, so that
// pthread_kill makes the blocked flock return EINTR. A cancel sets a flag and keeps kicking the
// thread (a kick can land just before the thread enters flock) until the thread reports back.
// The thread locks a dup of the caller's fd (same open file description, so the same lock),
// which keeps the description alive even if the caller closes its fd mid-wait.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>
#include <uv.h>

#include <memory>
#include <mutex>
#include <thread>

#include "glue.h"
#include "sys.h"

namespace procpin {

namespace {

int WakeSignal() { return SIGRTMAX - 1; }

void NoopHandler(int) {}

// Installs the wake handler once for the process. false if the signal already belongs to
// someone else: the waiters then poll with LOCK_NB instead of blocking.
bool InstallWakeHandler() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    struct sigaction old;
    if (sigaction(WakeSignal(), nullptr, &old) != 0) return;
    if (old.sa_handler != SIG_DFL && old.sa_handler != NoopHandler) return;
    struct sigaction sa = {};
    sa.sa_handler = NoopHandler;
    sigfillset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: the blocked flock must return EINTR
    ok = sigaction(WakeSignal(), &sa, nullptr) == 0;
  });
  return ok;
}

struct Waiter {
  int fd = -1;  // our dup, closed by the thread
  int op = 0;
  bool blocking = true;
  std::mutex mu;
  pthread_t thread{};
  bool started = false;
  bool finished = false;  // set by the thread, under mu, before it stops being killable
  bool cancelled = false;
  int result = 0;
  uv_timer_t* kicker = nullptr;
  Napi::ThreadSafeFunction tsfn;
  uint32_t id = 0;
};

void Deliver(Napi::Env env, Napi::Function cb, Waiter* w);

void Kick(Waiter* w) {
  // Under w->mu: the thread is alive until it sets finished under the same mutex.
  if (w->started && !w->finished) pthread_kill(w->thread, WakeSignal());
}

void WaitThread(std::shared_ptr<Waiter> w) {
  sigset_t all;
  sigfillset(&all);
  sigdelset(&all, WakeSignal());
  pthread_sigmask(SIG_SETMASK, &all, nullptr);
  int r;
  for (;;) {
    {
      std::lock_guard<std::mutex> g(w->mu);
      if (w->cancelled) {
        r = -ECANCELED;
        break;
      }
    }
    if (w->blocking) {
      r = sys::Flock(w->fd, w->op);
      if (r == -EINTR) continue;
      break;
    }
    r = sys::Flock(w->fd, w->op | LOCK_NB);
    if (r != -EWOULDBLOCK) break;
    usleep(2000);
  }
  {
    std::lock_guard<std::mutex> g(w->mu);
    if (r == 0 && w->cancelled) {
      // Acquired just as the caller gave up: leave no lock taken.
      sys::Flock(w->fd, LOCK_UN);
      r = -ECANCELED;
    }
    w->result = r;
    w->finished = true;
  }
  close(w->fd);
  w->fd = -1;
  Waiter* raw = w.get();
  // napi_closing during teardown; nothing to deliver then.
  w->tsfn.BlockingCall(raw, [](Napi::Env env, Napi::Function cb, Waiter* ww) {
    Deliver(env, cb, ww);
  });
  w->tsfn.Release();
}

}  // namespace

struct FlockRegistry : std::enable_shared_from_this<FlockRegistry> {
  uint32_t next = 1;
  std::unordered_map<uint32_t, std::shared_ptr<Waiter>> waiters;
};

namespace {

void CloseKicker(Waiter* w) {
  if (!w->kicker) return;
  uv_timer_stop(w->kicker);
  uv_close(reinterpret_cast<uv_handle_t*>(w->kicker),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  w->kicker = nullptr;
}

// flockWait(fd, op, callback(result)) -> id. result is 0 (locked), -ECANCELED, or -errno.
Napi::Value FlockWait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t fd, op;
  if (!Int32Arg(info, 0, &fd) || !Int32Arg(info, 1, &op)) return Napi::Value();
  if (info.Length() < 3 || !info[2].IsFunction()) {
    Napi::TypeError::New(env, "argument 2 must be a function").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  std::shared_ptr<FlockRegistry> reg = GetAddonData(env)->flock->shared_from_this();
  int dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (dupfd < 0) return Result(env, -errno);
  auto w = std::make_shared<Waiter>();
  w->fd = dupfd;
  w->op = op & ~LOCK_NB;
  w->blocking = InstallWakeHandler();
  w->id = reg->next++;
  if (reg->next == 0) reg->next = 1;
  uint32_t id = w->id;
  w->tsfn = Napi::ThreadSafeFunction::New(
      env, info[2].As<Napi::Function>(), "procpin:flock", 0, 1,
      [reg, id](Napi::Env) {
        // All calls delivered (or the environment is going away): forget the waiter.
        auto it = reg->waiters.find(id);
        if (it != reg->waiters.end()) {
          CloseKicker(it->second.get());
          reg->waiters.erase(it);
        }
      });
  reg->waiters.emplace(id, w);
  {
    std::lock_guard<std::mutex> g(w->mu);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    auto* arg = new std::shared_ptr<Waiter>(w);
    int e = pthread_create(
        &w->thread, &attr,
        [](void* p) -> void* {
          auto* sp = static_cast<std::shared_ptr<Waiter>*>(p);
          std::shared_ptr<Waiter> mine = *sp;
          delete sp;
          WaitThread(mine);
          return nullptr;
        },
        arg);
    pthread_attr_destroy(&attr);
    if (e != 0) {
      delete arg;
      close(dupfd);
      w->fd = -1;
      w->tsfn.Release();
      return Result(env, -e);
    }
    w->started = true;
  }
  return Napi::Number::New(env, id);
}

// The TSFN's JS-side call: hand the result to the callback.
void Deliver(Napi::Env env, Napi::Function cb, Waiter* w) {
  if (env == nullptr || cb.IsEmpty()) return;
  int r;
  {
    std::lock_guard<std::mutex> g(w->mu);
    r = w->result;
  }
  CloseKicker(w);
  cb.Call({Napi::Number::New(env, r)});
}

// flockCancel(id) -> true if the wait was still pending (its callback will report -ECANCELED,
// or 0 if the lock was taken first; the caller unlocks then).
Napi::Value FlockCancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint32_t id;
  if (!Uint32Arg(info, 0, &id)) return Napi::Value();
  FlockRegistry* reg = GetAddonData(env)->flock;
  if (reg == nullptr) return Napi::Boolean::New(env, false);
  auto it = reg->waiters.find(id);
  if (it == reg->waiters.end()) return Napi::Boolean::New(env, false);
  Waiter* w = it->second.get();
  std::lock_guard<std::mutex> g(w->mu);
  if (w->finished) return Napi::Boolean::New(env, false);
  w->cancelled = true;
  Kick(w);
  if (w->blocking && !w->kicker) {
    uv_loop_t* loop = nullptr;
    napi_get_uv_event_loop(env, &loop);
    w->kicker = new uv_timer_t;
    uv_timer_init(loop, w->kicker);
    w->kicker->data = w;
    uv_timer_start(
        w->kicker,
        [](uv_timer_t* t) {
          Waiter* ww = static_cast<Waiter*>(t->data);
          std::lock_guard<std::mutex> gg(ww->mu);
          Kick(ww);
        },
        1, 1);
  }
  return Napi::Boolean::New(env, true);
}

void Teardown(void* arg) {
  // The environment is going away (process exit, Worker terminated): wake every waiter and wait
  // until each thread has let go of its descriptor, so none outlives the environment holding or
  // taking a lock.
  auto* holder = static_cast<std::shared_ptr<FlockRegistry>*>(arg);
  std::shared_ptr<FlockRegistry> reg = *holder;
  delete holder;
  for (auto& [id, w] : reg->waiters) {
    (void)id;
    for (int i = 0; i < 5000; ++i) {
      {
        std::lock_guard<std::mutex> g(w->mu);
        if (w->finished) break;
        w->cancelled = true;
        Kick(w.get());
      }
      usleep(200);
    }
  }
  for (auto& [id, w] : reg->waiters) {
    (void)id;
    CloseKicker(w.get());
  }
  reg->waiters.clear();
}

}  // namespace

void InitFlockWait(Napi::Env env, Napi::Object exports) {
  auto reg = std::make_shared<FlockRegistry>();
  GetAddonData(env)->flock = reg.get();
  napi_add_env_cleanup_hook(env, Teardown, new std::shared_ptr<FlockRegistry>(reg));
  exports.Set("flockWait", Napi::Function::New(env, FlockWait, "flockWait"));
  exports.Set("flockCancel", Napi::Function::New(env, FlockCancel, "flockCancel"));
}

}  // namespace procpin
