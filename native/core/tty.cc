// See tty.h.
#include "tty.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace procpin::tty {

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

}  // namespace procpin::tty
