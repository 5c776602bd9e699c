// A descriptor the addon made that JavaScript keeps for a while (procpin-init's streams, see
// lib/contain/pidns.ts), owned by a handle that closes it exactly once: by close(), by garbage
// collection, or by the end of its environment. The last matters for a Worker: its teardown
// (worker.terminate() included) runs no JavaScript, so a descriptor only JavaScript would have
// closed stayed open in the process for good.
//
// holdFd(fd) -> handle, or -errno (-EBADF: not an open descriptor). The handle takes the
// descriptor over (close-on-exec and non-blocking from then on: it is the parent's own end, no
// other process shares its open file description):
//   read(max, ms) -> a Buffer of at most max (<= 4096) bytes (empty at end of file), null when
//                    nothing came within `ms` (0: a look; poll(2) waits, read(2) never does),
//                    or -errno
//   close()       -> 0 the first time, then -EBADF; the descriptor is closed once
//   closeOffLoop() -> the same, the close(2) itself made by a thread of the addon's (the last
//                    reference to a namespace makes close(2) wait for its teardown)
// openHeld(path) -> a handle of open(path, O_RDONLY | O_CLOEXEC), or -errno.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "glue.h"

namespace procpin {

namespace {

class HeldFd;

// The process-wide closer: one thread, made on first use, all signals blocked, that closes what
// it is handed. The handing over is one call, so no descriptor is ever in nobody's hands (a
// close queued on the libuv threadpool is cancelled when a Worker ends first).
class Closer {
 public:
  static void Close(int fd) {
    static Closer* instance = new Closer();  // never destroyed: the thread may outlive exit
    instance->Push(fd);
  }

 private:
  void Push(int fd) {
    std::lock_guard<std::mutex> g(mu_);
    fds_.push_back(fd);
    if (!started_) {
      started_ = true;
      sigset_t all, old;
      sigfillset(&all);
      // The thread starts with every signal blocked. sigprocmask acts on the calling thread on
      // Linux, as pthread_sigmask does, and keeps the addon at the glibc floor (glibc 2.32 moved
      // pthread_sigmask into libc under a new version).
      sigprocmask(SIG_SETMASK, &all, &old);
      std::thread([this] { Run(); }).detach();
      sigprocmask(SIG_SETMASK, &old, nullptr);
    }
    cv_.notify_one();
  }

  [[noreturn]] void Run() {
    for (;;) {
      int fd;
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [this] { return !fds_.empty(); });
        fd = fds_.front();
        fds_.pop_front();
      }
      close(fd);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> fds_;
  bool started_ = false;
};

// One per environment: the handles whose descriptor is still open.
struct HeldRegistry {
  Napi::FunctionReference ctor;
  std::unordered_set<HeldFd*> open;
};

class HeldFd : public Napi::ObjectWrap<HeldFd> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "HeldFd",
        {InstanceMethod<&HeldFd::Read>("read"), InstanceMethod<&HeldFd::Close>("close"),
         InstanceMethod<&HeldFd::CloseOffLoop>("closeOffLoop")});
  }

  // Made by holdFd only, which passes the registry and the descriptor as externals (a caller of
  // the class itself can hand it no descriptor to close).
  explicit HeldFd(const Napi::CallbackInfo& info) : Napi::ObjectWrap<HeldFd>(info) {
    if (info.Length() < 2 || !info[0].IsExternal() || !info[1].IsNumber()) {
      Napi::TypeError::New(info.Env(), "HeldFd is made by holdFd").ThrowAsJavaScriptException();
      return;
    }
    reg_ = info[0].As<Napi::External<HeldRegistry>>().Data();
    fd_ = info[1].As<Napi::Number>().Int32Value();
    reg_->open.insert(this);
  }

  ~HeldFd() override { Release(); }

  // Closes the descriptor (once) and leaves the registry.
  int Release() {
    if (reg_) reg_->open.erase(this);
    reg_ = nullptr;
    if (fd_ < 0) return -EBADF;
    int fd = fd_;
    fd_ = -1;
    return close(fd) == 0 || errno == EINTR ? 0 : -errno;
  }

  // As Release, the close(2) made by the closer thread.
  int ReleaseOffLoop() {
    if (reg_) reg_->open.erase(this);
    reg_ = nullptr;
    if (fd_ < 0) return -EBADF;
    Closer::Close(fd_);
    fd_ = -1;
    return 0;
  }

  // The environment ends: the registry goes away with it.
  void Forget() {
    reg_ = nullptr;
    Release();
  }

 private:
  Napi::Value Read(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    int32_t max, ms;
    if (!Int32Arg(info, 0, &max) || !Int32Arg(info, 1, &ms)) return Napi::Value();
    if (max <= 0 || max > 4096 || ms < 0) {
      Napi::RangeError::New(env, "read(max 1..4096, ms >= 0)").ThrowAsJavaScriptException();
      return Napi::Value();
    }
    if (fd_ < 0) return Result(env, -EBADF);
    pollfd p = {fd_, POLLIN, 0};
    int r;
    do {
      r = poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR && ms == 0);
    if (r < 0) return errno == EINTR ? env.Null() : Result(env, -errno);
    if (r == 0) return env.Null();
    char buf[4096];
    ssize_t n;
    do {
      n = read(fd_, buf, static_cast<size_t>(max));
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno == EAGAIN ? env.Null() : Result(env, -errno);
    return Napi::Buffer<char>::Copy(env, buf, static_cast<size_t>(n));
  }

  Napi::Value Close(const Napi::CallbackInfo& info) { return Result(info.Env(), Release()); }
  Napi::Value CloseOffLoop(const Napi::CallbackInfo& info) {
    return Result(info.Env(), ReleaseOffLoop());
  }

  HeldRegistry* reg_ = nullptr;
  int fd_ = -1;
};

// A handle of fd (ours now), or undefined when the environment stops (fd closed).
Napi::Value Wrap(Napi::Env env, HeldRegistry* reg, int fd) {
  napi_value h = nullptr;
  napi_value argv[2] = {Napi::External<HeldRegistry>::New(env, reg), Napi::Number::New(env, fd)};
  napi_value ctor = nullptr;
  if (napi_get_reference_value(env, reg->ctor, &ctor) != napi_ok || ctor == nullptr ||
      napi_new_instance(env, ctor, 2, argv, &h) != napi_ok || h == nullptr) {
    // The environment stops (no JavaScript may run): nobody will read it.
    close(fd);
    return Napi::Value();
  }
  return Napi::Value(env, h);
}

Napi::Value HoldFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<HeldRegistry*>(info.Data());
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  if (fd < 0) return Result(env, -EBADF);
  int fdfl = fcntl(fd, F_GETFD);
  int fl = fcntl(fd, F_GETFL);
  if (fdfl < 0 || fl < 0) return Result(env, -errno);
  if (!(fdfl & FD_CLOEXEC)) fcntl(fd, F_SETFD, fdfl | FD_CLOEXEC);
  if (!(fl & O_NONBLOCK)) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
  return Wrap(env, reg, fd);
}

Napi::Value OpenHeld(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto* reg = static_cast<HeldRegistry*>(info.Data());
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "argument 0 must be a string").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  int fd;
  do {
    fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return Result(env, -errno);
  return Wrap(env, reg, fd);
}

// The environment ends (process exit, a Worker's teardown): every descriptor still held is
// closed now.
void Teardown(void* arg) {
  auto* reg = static_cast<HeldRegistry*>(arg);
  std::unordered_set<HeldFd*> open;
  open.swap(reg->open);
  for (HeldFd* h : open) h->Forget();
  reg->ctor.Reset();
  delete reg;
}

}  // namespace

void InitHeldFd(Napi::Env env, Napi::Object exports) {
  auto* reg = new HeldRegistry();
  reg->ctor = Napi::Persistent(HeldFd::Define(env));
  napi_add_env_cleanup_hook(env, Teardown, reg);
  exports.Set("holdFd", Napi::Function::New(env, HoldFd, "holdFd", reg));
  exports.Set("openHeld", Napi::Function::New(env, OpenHeld, "openHeld", reg));
}

}  // namespace procpin
