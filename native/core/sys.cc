#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "dir.h"

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

// CloseRangeLoop's visit of one /proc/self/fd entry.
struct LoopRange {
  unsigned first, last, flags;
  int dirfd;
};
PROCPIN_NO_SANITIZE bool CloseEntry(void* ctx, const char* name, unsigned char, uint64_t) {
  const auto* range = static_cast<const LoopRange*>(ctx);
  int fd = ParseFd(name);
  if (fd < 0 || fd == range->dirfd) return true;
  if (static_cast<unsigned>(fd) < range->first || static_cast<unsigned>(fd) > range->last) {
    return true;
  }
  ActOn(fd, range->flags);
  return true;
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

int WaitidOnce(int idtype, unsigned id, siginfo_t* info, int options) {
  info->si_pid = 0;
  info->si_signo = 0;
  return Ret(syscall(SYS_waitid, idtype, id, info, options, nullptr));
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
    LoopRange range = {first, last, flags, dfd};
    dir::ReadEntries(dfd, buf, sizeof buf, CloseEntry, &range);  // a failed read ends the walk
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

namespace {

// close_range's state: 0 not probed, 1 the syscall with every flag, 2 the syscall without
// CLOSE_RANGE_CLOEXEC (5.9, 5.10), 3 none (before 5.9, or a seccomp policy refuses it).
std::atomic<int> g_close_range{0};

// The probe: a range that holds no descriptor (the top number cannot be open) closes nothing.
// It fails with ENOSYS on an old kernel and with EPERM (or anything else a policy chose) under
// a seccomp filter; CLOSE_RANGE_CLOEXEC alone fails with EINVAL on 5.9 and 5.10. Raw syscalls
// only: a CLONE_VM child may run it (it shares the cache with the suspended parent).
PROCPIN_NO_SANITIZE int CloseRangeState() {
  int c = g_close_range.load(std::memory_order_relaxed);
  if (c) return c;
  if (syscall(SYS_close_range, ~0u, ~0u, 0) != 0) {
    c = 3;
  } else {
    c = syscall(SYS_close_range, ~0u, ~0u, kCloseRangeCloexec) == 0 ? 1 : 2;
  }
  g_close_range.store(c, std::memory_order_relaxed);
  return c;
}

}  // namespace

void ProbeCloseRange() { CloseRangeState(); }

PROCPIN_NO_SANITIZE int CloseRange(unsigned first, unsigned last, unsigned flags) {
  int state = CloseRangeState();
  if (state == 3 || (state == 2 && (flags & kCloseRangeCloexec))) {
    return CloseRangeLoop(first, last, flags);
  }
  return Ret(syscall(SYS_close_range, first, last, flags));
}

int FlockOnce(int fd, int op) { return Ret(flock(fd, op)); }

int CloseFd(int fd) {
  if (fd < 0) return -EBADF;
  if (close(fd) == 0 || errno == EINTR) return 0;
  return -errno;
}

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

bool PidfdUsable() {
  // 0 unknown, 1 yes, 2 no. The probe, on a pidfd of our own process: pidfd_open works;
  // waitid(P_PIDFD) answers ECHILD (we are not our own child; EINVAL before 5.4, when P_PIDFD
  // is unknown); pidfd_send_signal with signal 0 answers 0. Any other answer means no: ENOSYS
  // on an old kernel, EPERM (or ENOSYS) from a seccomp policy that does not know the call.
  // Running out of descriptors (EMFILE, ENFILE) or memory says nothing about the kernel: then
  // the answer is "no" for this call only, and the next one probes again.
  static std::atomic<int> cached{0};
  int c = cached.load(std::memory_order_relaxed);
  if (c) return c == 1;
  int fd = PidfdOpen(getpid(), 0);
  if (fd == -EMFILE || fd == -ENFILE || fd == -ENOMEM) return false;
  bool yes = false;
  if (fd >= 0) {
    siginfo_t si;
    yes = WaitidOnce(kPIdfd, static_cast<unsigned>(fd), &si, WEXITED | WNOHANG) == -ECHILD &&
          PidfdSendSignal(fd, 0, 0) == 0;
    close(fd);
  }
  cached.store(yes ? 1 : 2, std::memory_order_relaxed);
  return yes;
}

int OpenPidfd(pid_t pid) {
  if (!PidfdUsable()) return -ENOSYS;
  return PidfdOpen(pid, 0);
}

int ProcIsOurs(int procfd) {
  char buf[32];
  long n = syscall(SYS_readlinkat, procfd, "self", buf, sizeof buf - 1);
  if (n < 0) return errno == ENOENT ? 0 : -errno;  // no "self": we are not in its namespace
  buf[n] = '\0';
  long v = 0;
  for (long i = 0; i < n; ++i) {
    if (buf[i] < '0' || buf[i] > '9') return 0;
    v = v * 10 + (buf[i] - '0');
    if (v > 0x7fffffff) return 0;
  }
  return v == static_cast<long>(getpid()) ? 1 : 0;
}

int ExitedByKernel(pid_t pid) {
  if (pid <= 0) return -EINVAL;
  if (kill(pid, 0) != 0 && errno == ESRCH) return 1;
  int fd = OpenPidfd(pid);
  if (fd == -ESRCH) return 1;
  if (fd < 0) return -ENOSYS;  // kill(2) said it exists, which a zombie does too
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  int e = errno;
  close(fd);
  if (r < 0) return -e;
  return (p.revents & POLLIN) != 0 ? 1 : 0;
}

bool HasPidfdGroupSignal() {
  // 0 unknown, 1 yes, 2 no. Probe with signal 0 on our own pidfd: EINVAL means the flag is
  // unknown to this kernel (before 6.9); 0 or ESRCH (we lead no group) mean it was understood.
  // EPERM cannot be the kernel's answer for a signal 0 to ourselves: a seccomp policy that
  // filters by flag refused it.
  static std::atomic<int> cached{0};
  int c = cached.load(std::memory_order_relaxed);
  if (c) return c == 1;
  if (!PidfdUsable()) {
    cached.store(2, std::memory_order_relaxed);
    return false;
  }
  int fd = PidfdOpen(getpid(), 0);
  if (fd < 0) return false;  // out of descriptors: ask again next time
  int r = PidfdSendSignal(fd, 0, kPidfdSignalProcessGroup);
  bool yes = r == 0 || r == -ESRCH;
  close(fd);
  cached.store(yes ? 1 : 2, std::memory_order_relaxed);
  return yes;
}

int StatAt(int dirfd, const char* name, struct stat* st, int flags) {
#ifdef SYS_newfstatat
  return syscall(SYS_newfstatat, dirfd, name, st, flags) == 0 ? 0 : -errno;
#else
  return fstatat(dirfd, name, st, flags) == 0 ? 0 : -errno;
#endif
}

int SameOpenFile(int a, int b) {
  pid_t me = getpid();
  long r = syscall(SYS_kcmp, me, me, 0 /* KCMP_FILE */, a, b);
  if (r < 0) return -errno;
  return r == 0 ? 1 : 0;
}

}  // namespace procpin::sys
