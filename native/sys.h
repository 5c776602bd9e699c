// procpin's syscall core: thin, JavaScript-free wrappers around the kernel's process-lifecycle
// calls. Every function returns a non-negative result or -errno; none of them touches errno's
// value as seen by the caller's caller, allocates, or throws. Newer syscalls go through raw
// syscall(2) so that the built addon's glibc floor stays old.
#pragma once

#include <signal.h>
#include <sys/types.h>

// For code that runs in a CLONE_VM child (on its own stack, frames that never return):
// sanitizer instrumentation there would leave the shared memory's shadow poisoned for the parent.
#define PROCPIN_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))

namespace procpin::sys {

// Kernel ABI constants that older userspace headers may lack.
constexpr int kPIdfd = 3;                            // P_PIDFD (5.4)
constexpr unsigned kPidfdNonblock = 04000;           // PIDFD_NONBLOCK == O_NONBLOCK
constexpr unsigned kPidfdSignalThread = 1u << 0;     // 6.9
constexpr unsigned kPidfdSignalThreadGroup = 1u << 1;
constexpr unsigned kPidfdSignalProcessGroup = 1u << 2;
constexpr unsigned kCloseRangeUnshare = 1u << 1;
constexpr unsigned kCloseRangeCloexec = 1u << 2;

int PidfdOpen(pid_t pid, unsigned flags);
int PidfdSendSignal(int pidfd, int sig, unsigned flags);
// waitid(2) through the raw syscall (P_PIDFD is passed as is). Fills *info; with WNOHANG and
// nothing to report, info->si_pid is 0.
int Waitid(int idtype, unsigned id, siginfo_t* info, int options);
// close_range(2), or on ENOSYS an equivalent loop over /proc/self/fd (then over the fd limit).
// The loop honours CLOSE_RANGE_UNSHARE and CLOSE_RANGE_CLOEXEC. Async-signal-safe: it uses
// only raw syscalls and a stack buffer, so the spawn child may call it.
PROCPIN_NO_SANITIZE int CloseRange(unsigned first, unsigned last, unsigned flags);
// The loop alone (exposed so that tests can compare it with the syscall).
PROCPIN_NO_SANITIZE int CloseRangeLoop(unsigned first, unsigned last, unsigned flags);
// flock(2), retried on EINTR (a signal handler's interruption is not an answer).
int Flock(int fd, int op);
// flock(2) once: EINTR is returned, so that another thread can interrupt a blocked wait.
int FlockOnce(int fd, int op);
int SetPdeathsig(int sig);
int GetPdeathsig();  // the signal (>= 0) or -errno
int SetChildSubreaper(bool on);
int GetChildSubreaper();  // 0/1 or -errno
// 1 when SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT): the kernel then reaps every child at once
// and no zombie can be held. 0 otherwise.
int SigchldIgnored();
// True when the running kernel accepts PIDFD_SIGNAL_PROCESS_GROUP (probed once, cached).
bool HasPidfdGroupSignal();

}  // namespace procpin::sys
