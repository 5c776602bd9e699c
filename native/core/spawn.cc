#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "sys.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

namespace procpin::spawn {

namespace {

// The child runs only on this stack, never on the parent's (which is suspended meanwhile, but
// whose frames the parent will return through). A guard page below it turns an overflow into a
// fault of the child instead of a corruption of whatever lies below.
constexpr size_t kStackSize = 64 * 1024;

// The kernel's struct sigaction (the same field order on x86_64 and arm64); all zero is SIG_DFL
// with no flags and an empty mask.
struct KernelSigaction {
  void* handler;
  unsigned long flags;
  void* restorer;
  uint64_t mask;
};

constexpr int kMaxSignal = 64;

// Memory shared by parent and child (CLONE_VM). The child writes err/stage before it exits; the
// parent reads them after clone returns, which under CLONE_VFORK is after the child's exit or
// successful execve.
struct Shared {
  const Request* req;
  const int* src;  // per child fd: the parent descriptor to install there, or -1 to close it
  int* moved;      // scratch, nstdio entries
  int devnull;     // the parent's /dev/null descriptor, or -1
  pid_t parent_pid;
  volatile int err;
  volatile int stage;
};

// Everything below, until execve, runs in the child: raw system calls only (no locks, no malloc,
// no library state). The glibc syscall() wrapper stores errno in the parent thread's TLS, which
// the child shares; the parent is suspended and does not rely on errno across the clone.
[[noreturn]] PROCPIN_NO_SANITIZE void ChildFail(Shared* s, int stage, int err) {
  s->err = err;
  s->stage = stage;
  for (;;) syscall(SYS_exit_group, 127);
}

PROCPIN_NO_SANITIZE int ChildMain(void* arg) {
  Shared* s = static_cast<Shared*>(arg);
  const Request& r = *s->req;

  // 0. The cgroup, before anything else: whatever the program starts is born inside it.
  if (r.cgroup_procs >= 0 && syscall(SYS_write, r.cgroup_procs, "0", 1) < 0) {
    ChildFail(s, kStageCgroup, errno);
  }

  // 1. Process group. A new child is never a group leader, so setsid cannot fail with EPERM.
  if (r.group == kGroupNew) {
    if (syscall(SYS_setpgid, 0, 0) < 0) ChildFail(s, kStageSetpgid, errno);
  } else if (r.group == kGroupSession) {
    if (syscall(SYS_setsid) < 0) ChildFail(s, kStageSetsid, errno);
  }

  // 2. Parent-death signal, then the re-check: a parent that died before the prctl sent no
  // signal and never will, and we were re-parented. The pid compared with was read before clone.
  if (r.pdeathsig > 0) {
    if (syscall(SYS_prctl, PR_SET_PDEATHSIG, r.pdeathsig, 0, 0, 0) < 0) {
      ChildFail(s, kStagePdeathsig, errno);
    }
    if (syscall(SYS_getppid) != s->parent_pid) ChildFail(s, kStagePdeathsig, ESRCH);
  }

  // 3. stdio. A source that is itself one of the targets (stdio [1, 0], or a pipe the kernel
  // numbered low) could be overwritten before it is used: first move every such source above
  // the targets (close-on-exec), then install each one. dup3 clears close-on-exec on the copy;
  // a descriptor mapped onto itself ('inherit') has the flag cleared explicitly, since Node
  // marks descriptors it inherited close-on-exec.
  const int n = r.nstdio;
  for (int i = 0; i < n; ++i) {
    int fd = s->src[i];
    if (fd >= 0 && fd < n && fd != i) {
      long m = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, n);
      if (m < 0) ChildFail(s, kStageStdio, errno);
      fd = static_cast<int>(m);
    }
    s->moved[i] = fd;
  }
  for (int i = 0; i < n; ++i) {
    int fd = s->moved[i];
    if (fd < 0) {
      syscall(SYS_close, i);
    } else if (fd == i) {
      long fl = syscall(SYS_fcntl, i, F_GETFD);
      if (fl < 0) ChildFail(s, kStageStdio, errno);
      if ((fl & FD_CLOEXEC) && syscall(SYS_fcntl, i, F_SETFD, fl & ~FD_CLOEXEC) < 0) {
        ChildFail(s, kStageStdio, errno);
      }
    } else if (syscall(SYS_dup3, fd, i, 0) < 0) {
      ChildFail(s, kStageStdio, errno);
    }
    // A descriptor handed over at 0-2 (not /dev/null) goes to the program in blocking mode, as
    // libuv does it: programs expect a blocking stdout, and Node made its pipes non-blocking.
    // The flag lives on the open file description, which the parent shares; libuv clears it
    // there too, so child_process and procpin leave the parent's descriptor in the same state.
    if (i <= 2 && fd >= 0 && fd != s->devnull) {
      long fl = syscall(SYS_fcntl, i, F_GETFL);
      if (fl < 0) ChildFail(s, kStageNonblock, errno);
      if ((fl & O_NONBLOCK) && syscall(SYS_fcntl, i, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        ChildFail(s, kStageNonblock, errno);
      }
    }
  }

  // 4. Nothing else reaches the program: the moved copies and the parent's other descriptors go.
  // Without closeFds, the moved copies and our pipe ends are close-on-exec anyway.
  if (r.close_fds) {
    int e = sys::CloseRange(static_cast<unsigned>(n), ~0u, 0);
    if (e < 0) ChildFail(s, kStageCloseFds, -e);
  }

  // 5. Signals: every disposition to default (Node ignores SIGPIPE and the program must not
  // inherit that; a handler must never run here, on the parent's memory), then an empty mask.
  // The parent blocked everything around clone, so nothing was delivered until now.
  KernelSigaction dfl = {};
  for (int sig = 1; sig <= kMaxSignal; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    if (syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t)) < 0) {
      ChildFail(s, kStageSignals, errno);
    }
  }
  uint64_t empty = 0;
  if (syscall(SYS_rt_sigprocmask, SIG_SETMASK, &empty, nullptr, sizeof empty) < 0) {
    ChildFail(s, kStageSignals, errno);
  }

  // 6. Working directory.
  if (r.cwd != nullptr && syscall(SYS_chdir, r.cwd) < 0) ChildFail(s, kStageChdir, errno);

  // 7. Credentials, by raw system calls: glibc's setuid/setgid would broadcast the change to
  // every thread of what it believes is its process, which here is the parent's (shared memory).
  // setgroups(0) drops the supplementary groups (root's included) as libuv does; unprivileged it
  // fails, which is fine (there is nothing to drop that setgid would not refuse anyway).
  if (r.uid >= 0 || r.gid >= 0) syscall(SYS_setgroups, 0, nullptr);
  if (r.gid >= 0 && syscall(SYS_setgid, r.gid) < 0) ChildFail(s, kStageSetgid, errno);
  if (r.uid >= 0 && syscall(SYS_setuid, r.uid) < 0) ChildFail(s, kStageSetuid, errno);

  // 8. execve over the candidates, with execvp's rules.
  bool eacces = false;
  int last = ENOENT;
  for (size_t k = 0; k < r.ncandidates; ++k) {
    syscall(SYS_execve, r.candidates[k], r.argv, r.envp);
    int e = errno;
    if (e == ENOEXEC && r.sh_argv != nullptr) {
      // No #! line and no known format: a shell script, as execvp has it. Writing the slot is
      // safe: the parent is suspended until we exec or exit, and the array is a scratch copy.
      r.sh_argv[1] = const_cast<char*>(r.candidates[k]);
      syscall(SYS_execve, "/bin/sh", r.sh_argv, r.envp);
      ChildFail(s, kStageExecve, errno);
    }
    switch (e) {
      case EACCES:
        eacces = true;
        break;
      case ENOENT:
      case ENOTDIR:
      case ESTALE:
      case ENODEV:
      case ETIMEDOUT:
        last = e;
        break;
      default:
        ChildFail(s, kStageExecve, e);
    }
  }
  ChildFail(s, kStageExecve, eacces ? EACCES : last);
}

// The child's stack, one per thread and kept for the thread's life: mapped at the first spawn,
// unmapped when the thread ends (a Worker's included). Reusing it is safe because a thread spawns
// one child at a time and CLONE_VFORK suspends it until that child has called execve or exited,
// after which nothing runs on the stack. Several threads spawning at once each use their own.
// (Mapping and unmapping it per spawn cost three system calls and, on a multi-threaded process,
// the TLB shootdown of the munmap.)
class ChildStack {
 public:
  // This thread's stack top (16-byte aligned), mapping it on first use; -errno when it cannot be
  // mapped (the next spawn tries again).
  static int Top(char** top) {
    thread_local ChildStack stack;
    if (stack.map_ == nullptr) {
      int e = stack.Map();
      if (e < 0) return e;
    }
    *top = static_cast<char*>(stack.map_) + stack.size_;
    return 0;
  }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;

 private:
  ChildStack() = default;
  ~ChildStack() {
    if (map_ != nullptr) munmap(map_, size_);
  }

  int Map() {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    size_t size = kStackSize + static_cast<size_t>(page);
    void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) return -errno;
    if (mprotect(map, static_cast<size_t>(page), PROT_NONE) < 0) {
      int e = errno;
      munmap(map, size);
      return -e;
    }
    map_ = map;
    size_ = size;
    return 0;
  }

  void* map_ = nullptr;
  size_t size_ = 0;
};

inline void CloseIf(int fd) {
  if (fd >= 0) close(fd);
}

// rt_sigprocmask through the raw syscall: glibc's wrappers refuse to block its internal signals
// (SIGCANCEL, SIGSETXID), and a handler for those must not run in the child either.
inline void SetMaskRaw(const uint64_t* set, uint64_t* old) {
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, set, old, sizeof(uint64_t));
}

}  // namespace

int Spawn(const Request& req, Outcome* out) {
  const int n = req.nstdio;
  out->pid = -1;
  out->pidfd = -1;
  out->err = 0;
  out->stage = kStageNone;
  for (int i = 0; i < n; ++i) out->parent_fds[i] = -1;

  // Everything the child needs is allocated now: it may not allocate.
  std::vector<int> src(n, -1), moved(n, -1), child_ends;
  int devnull = -1;
  auto fail = [&](int e) {
    for (int fd : child_ends) close(fd);
    CloseIf(devnull);
    for (int i = 0; i < n; ++i) {
      CloseIf(out->parent_fds[i]);
      out->parent_fds[i] = -1;
    }
    out->err = e;
    out->stage = kStageSpawn;
    return -e;
  };

  for (int i = 0; i < n; ++i) {
    int kind = req.stdio[i];
    if (kind >= 0) {
      src[i] = kind;
    } else if (kind == kStdioPipe) {
      int p[2];
      if (i < 3) {
        if (pipe2(p, O_CLOEXEC) < 0) return fail(errno);
      } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0) {
        return fail(errno);
      }
      // pipe: p[0] reads, p[1] writes. The child reads its stdin and writes the others.
      int child = i == 0 ? p[0] : p[1];
      int parent = i == 0 ? p[1] : p[0];
      child_ends.push_back(child);
      out->parent_fds[i] = parent;
      src[i] = child;
    } else if (kind == kStdioIgnore && i < 3) {
      if (devnull < 0) {
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0) return fail(errno);
      }
      src[i] = devnull;
    } else {
      src[i] = -1;
    }
  }

  // The stack grows down: clone gets its top, 16-byte aligned.
  char* stack_top = nullptr;
  if (int e = ChildStack::Top(&stack_top); e < 0) return fail(-e);

  Shared sh;
  sh.req = &req;
  sh.src = src.data();
  sh.moved = moved.data();
  sh.devnull = devnull;
  sh.parent_pid = req.pdeathsig > 0 ? getpid() : 0;
  sh.err = 0;
  sh.stage = kStageNone;

  // Each feature probed once, here in the parent: the child then reads settled answers. Where
  // pidfds do not work end to end (an old kernel, or a seccomp policy that refuses one of the
  // calls), the child gets none: the caller falls back to polling and signals by pid.
  sys::ProbeCloseRange();
  const bool use_pidfd = sys::PidfdUsable();

  // Block every signal in this thread around clone (as glibc's posix_spawn does): the child
  // starts with our handlers and our memory, and must reset the handlers before anything runs.
  uint64_t all = ~0ull, old = 0;
  SetMaskRaw(&all, &old);
  int pidfd = -1;
  pid_t pid = -1;
  int clone_errno = ENOSYS;
  if (use_pidfd) {
    pid = clone(ChildMain, stack_top, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &sh, &pidfd);
    clone_errno = pid < 0 ? errno : 0;
  }
  if (pid < 0 && (clone_errno == EINVAL || clone_errno == ENOSYS || clone_errno == EPERM)) {
    // A kernel (or a seccomp policy) that refuses CLONE_PIDFD: the same without it, and
    // pidfd_open below. Safe: nobody but us can reap the child, so its pid stays its own.
    pidfd = -1;
    sh.err = 0;
    sh.stage = kStageNone;
    pid = clone(ChildMain, stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, &sh, nullptr);
    clone_errno = pid < 0 ? errno : 0;
  }
  SetMaskRaw(&old, nullptr);

  for (int fd : child_ends) close(fd);
  child_ends.clear();
  CloseIf(devnull);
  devnull = -1;

  if (pid < 0) return fail(clone_errno);

  if (sh.err != 0) {
    // The child failed before execve and has exited (CLONE_VFORK let us go on at its exit):
    // reap it now, by pid, which is still ours since nobody else waits for it.
    siginfo_t si;
    sys::Waitid(P_PID, static_cast<unsigned>(pid), &si, WEXITED);
    CloseIf(pidfd);
    int e = sh.err, st = sh.stage;
    fail(e);
    out->stage = st;
    out->pid = pid;
    return -e;
  }

  if (pidfd < 0 && use_pidfd) {
    int fd = sys::PidfdOpen(pid, 0);
    pidfd = fd >= 0 ? fd : -1;
  }
  out->pid = pid;
  out->pidfd = pidfd;
  return 0;
}

}  // namespace procpin::spawn
