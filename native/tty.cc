// Terminal job control for the command line: which process group owns the terminal's foreground,
// handing it over, and saving and restoring the terminal's modes. Node has no tcsetpgrp; a program
// that runs a job on the user's terminal needs it to behave as a shell does.
//
// The first half is the syscall core (returns -errno, knows nothing of JavaScript); the second is
// the glue.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "glue.h"

namespace procpin {

namespace tty {

namespace {

// A process outside the terminal's foreground group that changes the terminal (tcsetpgrp,
// tcsetattr) is sent SIGTTOU, which stops it, unless it blocks or ignores that signal. Taking the
// terminal back after a job is exactly that case. Blocking the signal in this thread for the
// duration of the call makes the kernel skip it altogether (it is not left pending), and leaves
// the process-wide disposition alone.
class BlockTtou {
 public:
  BlockTtou() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTTOU);
    // sigprocmask acts on the calling thread on Linux, as pthread_sigmask does, and keeps the
    // addon's glibc floor at 2.2.5 (pthread_sigmask moved to libc with 2.32).
    sigprocmask(SIG_BLOCK, &set, &old_);
  }
  ~BlockTtou() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  BlockTtou(const BlockTtou&) = delete;
  BlockTtou& operator=(const BlockTtou&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

// The terminal's foreground process group; -ENOTTY when fd is not this process's controlling
// terminal.
int GetForeground(int fd) {
  pid_t pgid = tcgetpgrp(fd);
  return pgid < 0 ? -errno : pgid;
}

int SetForeground(int fd, int pgid) {
  BlockTtou block;
  int r;
  do r = tcsetpgrp(fd, pgid);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

int GetAttr(int fd, struct termios* out) { return tcgetattr(fd, out) < 0 ? -errno : 0; }

// TCSANOW: TCSADRAIN would wait for the output to drain, which a stalled terminal (^S) can make
// unbounded, and this runs on the event loop.
int SetAttr(int fd, const struct termios* in) {
  BlockTtou block;
  int r;
  do r = tcsetattr(fd, TCSANOW, in);
  while (r < 0 && errno == EINTR);
  return r < 0 ? -errno : 0;
}

}  // namespace tty

namespace {

Napi::Value TtyGetForeground(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  return Result(info.Env(), tty::GetForeground(fd));
}

Napi::Value TtySetForeground(const Napi::CallbackInfo& info) {
  int32_t fd, pgid;
  if (!Int32Arg(info, 0, &fd) || !Int32Arg(info, 1, &pgid)) return Napi::Value();
  return Result(info.Env(), tty::SetForeground(fd, pgid));
}

// Returns the terminal's modes as an opaque Buffer (a struct termios), or the negative errno.
Napi::Value TtyGetAttr(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  struct termios t;
  memset(&t, 0, sizeof t);
  int r = tty::GetAttr(fd, &t);
  if (r < 0) return Result(info.Env(), r);
  return Napi::Buffer<uint8_t>::Copy(info.Env(), reinterpret_cast<const uint8_t*>(&t), sizeof t);
}

Napi::Value TtySetAttr(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  if (info.Length() < 2 || !info[1].IsBuffer() ||
      info[1].As<Napi::Buffer<uint8_t>>().Length() != sizeof(struct termios)) {
    Napi::TypeError::New(info.Env(), "argument 1 must be a Buffer from ttyGetAttr")
        .ThrowAsJavaScriptException();
    return Napi::Value();
  }
  struct termios t;
  memcpy(&t, info[1].As<Napi::Buffer<uint8_t>>().Data(), sizeof t);
  return Result(info.Env(), tty::SetAttr(fd, &t));
}

Napi::Value GetPgrp(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), getpgrp());
}

}  // namespace

void InitTty(Napi::Env env, Napi::Object exports) {
  exports.Set("ttyGetForeground", Napi::Function::New(env, TtyGetForeground, "ttyGetForeground"));
  exports.Set("ttySetForeground", Napi::Function::New(env, TtySetForeground, "ttySetForeground"));
  exports.Set("ttyGetAttr", Napi::Function::New(env, TtyGetAttr, "ttyGetAttr"));
  exports.Set("ttySetAttr", Napi::Function::New(env, TtySetAttr, "ttySetAttr"));
  exports.Set("getpgrp", Napi::Function::New(env, GetPgrp, "getpgrp"));
}

}  // namespace procpin
