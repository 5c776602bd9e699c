// What dies with the supervisor, however it ends (SPEC "However the supervisor ends").
//
// A fixed, process-wide table of things to SIGKILL when this process (or the Worker that made
// them) ends: a group leader's pidfd (a group signal with PIDFD_SIGNAL_PROCESS_GROUP where the
// kernel has it, plus the leader itself), a pgid that may be signalled by number only while its
// leader is provably unreaped, or a cgroup.kill descriptor to write "1" to. The table is read
// by code that may run in a signal handler (an ending signal) or in atexit: it is a static array of
// atomics, and the kill makes only async-signal-safe raw syscalls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace procpin::endkill {

// A leader held by `owner` (an environment's registry). `pidfd` may be -1 (a kernel without
// pidfds; then `procdir`, the leader's /proc/PID directory or -1, tells whether its number is
// still its own; the caller removes the slot before closing either descriptor); `pidfd_group`: the
// kernel takes PIDFD_SIGNAL_PROCESS_GROUP and the caller wants it; `by_number`: kill(-pgid) is
// allowed while the leader is unreaped. Returns the slot, or -1 when the table is full. Installs
// the process hooks (atexit, the ending signals) on first use.
int AddLeader(uintptr_t owner, int pidfd, int procdir, pid_t pid, bool pidfd_group, bool by_number);
// A cgroup.kill descriptor (opened O_WRONLY | O_CLOEXEC by the caller, who keeps owning it
// while its environment lives) and the cgroup's directory (may be empty: none to remove).
int AddCgroupKill(uintptr_t owner, int fd, const std::string& dir);
// The leader is about to be reaped, or was lost to someone else's reap: its number is never
// signalled again (its pidfd still is: it stays bound to the group).
void ForgetNumber(int slot);
// The entry is gone (before its descriptor is closed).
void Remove(int slot);
// SIGKILLs every entry of `owner` (its environment ends; not for signal context). Then removes
// its cgroups once the kernel has emptied them (their sub-cgroups first), waiting at most 50 ms
// in all, and frees their entries; a cgroup not empty by then keeps its entry.
void KillOwner(uintptr_t owner);
// SIGKILLs every entry of the process. Async-signal-safe.
void KillAll();
// Entries in use (tests).
int Count();

}  // namespace procpin::endkill
