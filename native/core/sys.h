// procpin's syscall core: thin, JavaScript-free wrappers around the kernel's process-lifecycle
// calls. Every function returns a non-negative result or -errno; none of them touches errno's
// value as seen by the caller's caller, allocates, or throws. Newer syscalls go through raw
// syscall(2) so that the built addon's glibc floor stays old.
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

// For code that runs in a CLONE_VM child (on its own stack, frames that never return):
// sanitizer instrumentation there would leave the shared memory's shadow poisoned for the parent.
#define PROCPIN_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))

namespace procpin::sys {

// Kernel ABI constants that older userspace headers may lack.
constexpr int kPIdfd = 3;                         // P_PIDFD (5.4)
constexpr unsigned kPidfdNonblock = 04000;        // PIDFD_NONBLOCK == O_NONBLOCK
constexpr unsigned kPidfdSignalThread = 1u << 0;  // 6.9
constexpr unsigned kPidfdSignalThreadGroup = 1u << 1;
constexpr unsigned kPidfdSignalProcessGroup = 1u << 2;
constexpr int kPidfdSelfThread = -10000;       // 6.15: the calling thread, no fd needed
constexpr int kPidfdSelfThreadGroup = -10001;  // 6.15: the calling process
constexpr unsigned kCloseRangeUnshare = 1u << 1;
constexpr unsigned kCloseRangeCloexec = 1u << 2;

int PidfdOpen(pid_t pid, unsigned flags);
int PidfdSendSignal(int pidfd, int sig, unsigned flags);
// waitid(2) through the raw syscall (P_PIDFD is passed as is). Fills *info; with WNOHANG and
// nothing to report, info->si_pid is 0. Waitid retries EINTR (procpin's own waits);
// WaitidOnce returns it (Layer 1: an interrupted wait is the kernel's answer).
int Waitid(int idtype, unsigned id, siginfo_t* info, int options);
int WaitidOnce(int idtype, unsigned id, siginfo_t* info, int options);
// close_range(2), or on ENOSYS an equivalent loop over /proc/self/fd (then over the fd limit).
// The loop honours CLOSE_RANGE_UNSHARE and CLOSE_RANGE_CLOEXEC. Async-signal-safe: it uses
// only raw syscalls and a stack buffer, so the spawn child may call it.
PROCPIN_NO_SANITIZE int CloseRange(unsigned first, unsigned last, unsigned flags);
// The loop alone (exposed so that tests can compare it with the syscall).
PROCPIN_NO_SANITIZE int CloseRangeLoop(unsigned first, unsigned last, unsigned flags);
// flock(2) once: EINTR is returned (a handler without SA_RESTART interrupted a blocked wait,
// or another thread kicked it).
int FlockOnce(int fd, int op);
// close(2) of a descriptor the addon made (a pidfd, a spawn's pipe end): in a Worker, Node tracks
// what `fs` opens and warns when `fs` closes anything else, so what the addon opened the addon
// closes. 0 or -errno; a negative fd is EBADF; EINTR counts as closed (Linux frees the number
// first).
int CloseFd(int fd);
int SetPdeathsig(int sig);
int GetPdeathsig();  // the signal (>= 0) or -errno
int SetChildSubreaper(bool on);
int GetChildSubreaper();  // 0/1 or -errno
// 1 when SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT): the kernel then reaps every child at once
// and no zombie can be held. 0 otherwise.
int SigchldIgnored();
// Features probed once each (cached), as Go's checkPidfd does: a call that is missing answers
// ENOSYS on an old kernel, but EPERM under a container runtime's default seccomp profile (or any
// policy that does not know the call), and either means "use the fallback".
//
// True when pidfds work here end to end: pidfd_open, waitid(P_PIDFD) and pidfd_send_signal.
// Without them children are watched by a WNOHANG|WNOWAIT poll and signalled by pid while unreaped.
bool PidfdUsable();
// pidfd_open for procpin's own bookkeeping (Layer 2): -ENOSYS when pidfds are not usable here,
// whatever the refused call answered.
int OpenPidfd(pid_t pid);
// True when the running kernel accepts PIDFD_SIGNAL_PROCESS_GROUP (probed once, cached).
bool HasPidfdGroupSignal();
// Whether the /proc open as `procfd` is this process's pid namespace's: its "self" must name our
// own pid. A /proc mounted for another namespace (a sandbox made with `unshare -p -f` without
// remounting it) names other processes by our numbers. 1 ours, 0 foreign, -errno unreadable.
int ProcIsOurs(int procfd);
// Whether `pid` has exited, through the kernel only (never /proc): 1 exited (a zombie counts, or
// gone), 0 live, -errno when it cannot tell (no pidfds and kill(pid, 0) succeeded can still be a
// zombie: then -ENOSYS).
int ExitedByKernel(pid_t pid);
// Probes close_range (and its CLOEXEC flag) now, so that CloseRange in a CLONE_VM child reads
// a settled answer instead of probing there. Cheap; idempotent.
void ProbeCloseRange();

// fstatat(dirfd, name, st, flags) through the raw call (glibc's struct stat is the kernel's on
// 64-bit targets): glibc 2.33 moved the stat family into libc proper under a new symbol version,
// and calling it would raise the addon's glibc floor above 2.28. An empty `name` with
// AT_EMPTY_PATH is fstat(dirfd). 0 or -errno.
int StatAt(int dirfd, const char* name, struct stat* st, int flags);

// kcmp(KCMP_FILE) of two descriptors of this process: 1 when they share one open file
// description, 0 when not, -errno when the kernel cannot say (CONFIG_KCMP off, a seccomp policy:
// it belongs to the ptrace family).
int SameOpenFile(int a, int b);

}  // namespace procpin::sys
