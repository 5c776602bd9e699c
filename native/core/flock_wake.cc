#include "flock_wake.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <mutex>

#include "sys.h"

namespace procpin::flock {

namespace {

void NoopHandler(int) {}

std::mutex g_wake_mu;
int g_wake_sig = 0;  // 0: not chosen yet; -1: none free

bool IsOurs(const struct sigaction& sa) {
  return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == NoopHandler;
}

}  // namespace

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
        break;
      }
    }
  }
  if (g_wake_sig < 0) return 0;
  // Still ours? Someone may have installed a handler of their own over it since.
  return WakeSignalIsOurs(g_wake_sig) ? g_wake_sig : 0;
}

bool WakeSignalIsOurs(int sig) {
  struct sigaction cur;
  return sigaction(sig, nullptr, &cur) == 0 && IsOurs(cur);
}

void KickThread(pid_t tid, int sig) { syscall(SYS_tgkill, getpid(), tid, sig); }

bool SameDescription(int a, int b) {
  int same = sys::SameOpenFile(a, b);
  if (same >= 0) return same == 1;
  struct stat sa, sb;  // the raw call: glibc 2.33's fstat would raise the addon's glibc floor
  if (syscall(SYS_fstat, a, &sa) != 0 || syscall(SYS_fstat, b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void SleepMicros(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

}  // namespace procpin::flock
