#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

// The generic syscall numbers (same on x86_64 and aarch64) for headers that predate them.
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

namespace procpin::sys {

namespace {

inline int Ret(long r) { return r < 0 ? -errno : static_cast<int>(r); }

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Parses a decimal fd name; -1 for anything else ("." and "..").
PROCPIN_NO_SANITIZE int ParseFd(const char* s) {
  if (*s < '0' || *s > '9') return -1;
  long v = 0;
  for (; *s; ++s) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
    if (v > 0x7fffffff) return -1;
  }
  return static_cast<int>(v);
}

PROCPIN_NO_SANITIZE inline int ActOn(int fd, unsigned flags) {
  if (flags & kCloseRangeCloexec) {
    int fl = static_cast<int>(syscall(SYS_fcntl, fd, F_GETFD));
    if (fl >= 0 && !(fl & FD_CLOEXEC)) syscall(SYS_fcntl, fd, F_SETFD, fl | FD_CLOEXEC);
    return 0;
  }
  syscall(SYS_close, fd);  // EBADF for a gap is expected; EINTR still closed the fd on Linux
  return 0;
}

}  // namespace

int PidfdOpen(pid_t pid, unsigned flags) { return Ret(syscall(SYS_pidfd_open, pid, flags)); }

int PidfdSendSignal(int pidfd, int sig, unsigned flags) {
  return Ret(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, flags));
}

int Waitid(int idtype, unsigned id, siginfo_t* info, int options) {
  info->si_pid = 0;
  info->si_signo = 0;
  long r;
  do {
    r = syscall(SYS_waitid, idtype, id, info, options, nullptr);
  } while (r < 0 && errno == EINTR);
  return Ret(r);
}

PROCPIN_NO_SANITIZE int CloseRangeLoop(unsigned first, unsigned last, unsigned flags) {
  if (first > last || (flags & ~(kCloseRangeUnshare | kCloseRangeCloexec))) return -EINVAL;
  if (flags & kCloseRangeUnshare) {
    if (syscall(SYS_unshare, CLONE_FILES) < 0) return -errno;
  }
  // Walk /proc/self/fd so that a huge `last` costs only the open descriptors. The directory's
  // own fd is skipped; closing entries while reading the directory is safe on Linux.
  int dfd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd >= 0) {
    alignas(8) char buf[1024];
    for (;;) {
      long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
        off += d->d_reclen;
        int fd = ParseFd(d->d_name);
        if (fd < 0 || fd == dfd) continue;
        if (static_cast<unsigned>(fd) < first || static_cast<unsigned>(fd) > last) continue;
        ActOn(fd, flags);
      }
    }
    syscall(SYS_close, dfd);
    return 0;
  }
  // No /proc: every number up to the descriptor limit.
  struct rlimit rl;
  unsigned top = 65536;
  if (syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
      rl.rlim_max < 0x7fffffff) {
    top = static_cast<unsigned>(rl.rlim_max);
  }
  unsigned end = last < top ? last : top;
  for (unsigned fd = first; fd <= end && fd < 0x7fffffffu; ++fd) ActOn(static_cast<int>(fd), flags);
  return 0;
}

PROCPIN_NO_SANITIZE int CloseRange(unsigned first, unsigned last, unsigned flags) {
  long r = syscall(SYS_close_range, first, last, flags);
  if (r == 0) return 0;
  int e = errno;
  if (e == ENOSYS) return CloseRangeLoop(first, last, flags);
  // 5.9 and 5.10 have close_range but not CLOSE_RANGE_CLOEXEC (5.11): a valid request that
  // this kernel rejects only for that flag gets the loop too.
  if (e == EINVAL && (flags & kCloseRangeCloexec) && first <= last &&
      !(flags & ~(kCloseRangeUnshare | kCloseRangeCloexec))) {
    return CloseRangeLoop(first, last, flags);
  }
  return -e;
}

int Flock(int fd, int op) {
  long r;
  do {
    r = flock(fd, op);
  } while (r < 0 && errno == EINTR);
  return Ret(r);
}

int FlockOnce(int fd, int op) { return Ret(flock(fd, op)); }

int SetPdeathsig(int sig) { return Ret(prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)); }

int GetPdeathsig() {
  int sig = 0;
  if (prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) < 0) return -errno;
  return sig;
}

int SetChildSubreaper(bool on) { return Ret(prctl(PR_SET_CHILD_SUBREAPER, on ? 1 : 0, 0, 0, 0)); }

int GetChildSubreaper() {
  int on = 0;
  if (prctl(PR_GET_CHILD_SUBREAPER, &on, 0, 0, 0) < 0) return -errno;
  return on ? 1 : 0;
}

int SigchldIgnored() {
  struct sigaction old;
  if (sigaction(SIGCHLD, nullptr, &old) < 0) return -errno;
  return (old.sa_handler == SIG_IGN || (old.sa_flags & SA_NOCLDWAIT)) ? 1 : 0;
}

bool HasPidfdGroupSignal() {
  // 0 unknown, 1 yes, 2 no. Probe with signal 0 on our own pidfd: EINVAL means the flag is
  // unknown to this kernel; anything else (0, ESRCH, EPERM) means it was understood.
  static std::atomic<int> cached{0};
  int c = cached.load(std::memory_order_relaxed);
  if (c) return c == 1;
  int fd = PidfdOpen(getpid(), 0);
  bool yes = false;
  if (fd >= 0) {
    int r = PidfdSendSignal(fd, 0, kPidfdSignalProcessGroup);
    yes = r != -EINVAL && r != -ENOSYS;
    close(fd);
  }
  cached.store(yes ? 1 : 2, std::memory_order_relaxed);
  return yes;
}

}  // namespace procpin::sys
