// The advisory scan of a process group's members (SPEC Layer 3a): how many live (non-zombie)
// processes have a given pgid. The scan is never an atomic snapshot and never decides that a
// group is gone; it only lets a cleanup end its grace early.
//
// Cost: one pass of getdents64 over /proc, one getpgid(2) per pid (well under a microsecond), and
// only for the pids whose pgid matches, a look at whether it still lives: pidfd_open and a poll
// (about 4 us: readable once the process has exited), or without pidfd_open its state in
// /proc/PID/stat (11-15 us for a process not read before; Z and X are gone). With a
// thousand processes and hundreds of dying members that is milliseconds, so the glue runs the
// scan on libuv's threadpool: bounded work, never a wait.
//
// A cleanup scans the same group again and again while its members die, and a dead member stays a
// zombie until its parent reaps it (PID 1 here: a second or more late). A ZombieMemory remembers
// the zombies one scan saw, so that the next one does not look at them again. A zombie never
// comes back to life; its pid can only name another process after the reap, and then /proc shows
// a new inode for it (the reap drops the old dentries; each new proc inode takes a fresh number),
// so a zombie is remembered as (pid, inode of /proc/PID), and a pid with another inode is read
// afresh.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

namespace procpin::scan {

// The zombies of one group seen by its last scan, as (pid, /proc/PID inode), sorted. Used by one
// scan at a time (`busy`); a scan that finds it busy goes without.
struct ZombieMemory {
  std::atomic<bool> busy{false};
  std::vector<std::pair<pid_t, uint64_t>> seen;
};

// Whether `pid` is a live member of `pgid`: 1 yes, 0 no (another group, a zombie, or gone),
// -errno when /proc cannot tell. Microseconds.
int IsMember(pid_t pgid, pid_t pid);

// Live members of `pgid`, counted up to `limit` (>= 1), or -errno when /proc cannot be read
// (the caller must then assume members may exist). *first gets the first live member found (0
// when none): a cheap witness to look at before the next full scan. Newest pid first: members
// are mostly recent, so a scan that only needs to know whether one lives stops early. `memory`
// (may be null) skips the look at zombies the previous scan saw, and is replaced by the zombies
// this one saw (added to those it remembered when the scan stopped early). Blocking, bounded.
int CountMembers(pid_t pgid, int limit, pid_t* first, ZombieMemory* memory);

#ifdef PROCPIN_TEST_HOOKS
// Test injection (the test build only): with `err` non-zero, every scan and member look fails as
// if /proc could not be opened with this errno; with `stat_only`, liveness is read from
// /proc/PID/stat, as on a kernel without pidfd_open. Process-wide (tests run one file at a time).
void SetTestHook(int err, bool stat_only);
#endif

}  // namespace procpin::scan
