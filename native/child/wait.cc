// The waits on a child and the signals to it (see state.h). Every wait names the child (its
// pidfd, or its pid while it is provably unreaped), never -1; nothing here installs a SIGCHLD
// handler, so other children of the process are left alone.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "../core/proc.h"
#include "../core/sys.h"
#include "../endkill.h"
#include "signal.h"
#include "state.h"

namespace procpin::child {

namespace {

// Whether waitid takes P_PIDFD (Linux 5.4); probed on first use. 0 unknown, 1 yes, 2 no.
std::atomic<int> g_wait_pidfd{0};

// The start time of `pid` (/proc/PID/stat field 22), or 0 when it cannot be read.
unsigned long long StartTime(pid_t pid) {
  int procfd = proc::OpenProc();
  if (procfd < 0) return 0;
  proc::Stat st;
  int r = proc::ReadStat(procfd, pid, &st);
  close(procfd);
  return r == 0 ? st.start_time : 0;
}

// Without a pidfd: whether the child's number is still its own (it is not reaped yet). Its
// /proc/PID directory answers ESRCH once it is reaped, whoever has the number now; without the
// directory, a start time that changed says the same (equal start times prove nothing more).
bool NumberIsItsOwn(ChildState* s) {
  if (s->procdir >= 0) {
    // A lookup only (nothing is read): it fails with ESRCH once the process is reaped.
    struct stat st;
    int r = sys::StatAt(s->procdir, "comm", &st, 0);
    return r == 0 || (r != -ESRCH && r != -ENOENT);
  }
  unsigned long long now;
  return s->start == 0 || (now = StartTime(s->pid)) == s->start || now == 0;
}

// One look or reap. An unreaped child only; ECHILD makes it kLost.
int Wait(ChildState* s, siginfo_t* si, int options) {
  if (!s->unreaped()) {
    memset(si, 0, sizeof *si);
    return -ECHILD;
  }
  int r;
  if (s->pidfd < 0 && !NumberIsItsOwn(s)) {
    // No pidfd: the number names another process of ours now (ours was reaped by someone else
    // and the number reissued). Never wait for it, never signal it.
    memset(si, 0, sizeof *si);
    r = -ECHILD;
  } else {
    r = WaitChild(s->pidfd, s->pid, si, WEXITED | WNOHANG | options);
  }
  if (r == -ECHILD) {
    s->state = State::kLost;
    endkill::ForgetNumber(s->end_slot);
  }
  return r;
}

}  // namespace

// Through the pidfd when there is one (so that a number that was reaped by someone else and
// reissued can never answer), by pid otherwise (safe while the child is unreaped: we never
// install a SIGCHLD handler; libuv waits only for its own).
int WaitChild(int pidfd, pid_t pid, siginfo_t* si, int options) {
  memset(si, 0, sizeof *si);
  if (pidfd >= 0 && g_wait_pidfd.load(std::memory_order_relaxed) != 2) {
    int r = sys::Waitid(sys::kPIdfd, static_cast<unsigned>(pidfd), si, options);
    if (r != -EINVAL && r != -ENOSYS && r != -EPERM) {
      g_wait_pidfd.store(1, std::memory_order_relaxed);
      return r;
    }
    if (g_wait_pidfd.load(std::memory_order_relaxed) == 1) return r;  // a real EINVAL
    g_wait_pidfd.store(2, std::memory_order_relaxed);
    memset(si, 0, sizeof *si);
  }
  return sys::Waitid(P_PID, static_cast<unsigned>(pid), si, options);
}

void TakeIdentity(ChildState* s) {
  int procfd = proc::OpenProc();
  if (procfd >= 0) {
    char name[16];
    snprintf(name, sizeof name, "%d", s->pid);
    int d = static_cast<int>(syscall(SYS_openat, procfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    close(procfd);
    s->procdir = d < 0 ? -1 : d;
  }
  s->start = StartTime(s->pid);
}

int Peek(ChildState* s, siginfo_t* si) { return Wait(s, si, WNOWAIT); }

int Reap(ChildState* s, siginfo_t* si) {
  // Before the reap: once it is done the number may be reissued.
  if (s->unreaped()) endkill::ForgetNumber(s->end_slot);
  int r = Wait(s, si, 0);
  if (r == 0 && si->si_pid != 0) s->state = State::kReaped;
  return r;
}

// Whether a WNOWAIT look still finds the child waitable: only then is its number its own.
static bool ProvablyOurs(ChildState* s) {
  siginfo_t si;
  return s->unreaped() && Peek(s, &si) == 0;
}

int SignalProcess(ChildState* s, int sig) {
  if (s->state == State::kReaped || s->state == State::kLost) return -ESRCH;
  if (!s->child()) {  // a stranger's pid is never signalled by number
    int r = s->pidfd >= 0 ? sys::PidfdSendSignal(s->pidfd, sig, 0) : -ENOSYS;
    return r;
  }
  return signals::Process(s->pidfd, s->pid, sig, [s] { return ProvablyOurs(s); });
}

int SignalGroup(ChildState* s, int sig, bool pidfd_group) {
  if (!s->child()) return -ESRCH;
  return signals::Group(s->pidfd, s->pid, sig, pidfd_group, [s] { return ProvablyOurs(s); });
}

}  // namespace procpin::child
