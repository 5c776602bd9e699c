// The sweep core: the per-directory work of a dead-pid sweep, free of JavaScript. It reads one
// directory, picks the candidates (prefix + canonical decimal pid + end, '-' or '.'), and removes
// a candidate only when all of SPEC's seven conditions hold. Every check and every removal is
// made relative to descriptors (fstatat/openat/unlinkat with O_NOFOLLOW), never through a path
// string that the kernel would resolve again between the check and the act. Per-entry trouble
// is recorded in the entry; nothing here throws or aborts.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace procpin::sweep {

// What happened to a candidate. kRemoved (or "would be removed" in a dry run) and the reasons
// for keeping it, in the order lib/sweep/sweep.ts's table expects (exported as `sweepReasons`).
enum class Outcome : uint8_t {
  kRemoved = 0,
  kAlive,
  kLocked,
  kListening,
  kNotOwner,
  kSymlink,
  kUnsupportedType,
  kReplaced,
  kMount,
  kError,
  kVanished,  // the name disappeared under us (another sweeper took it): reported in no list
  kCount,
};

// The JavaScript names of the outcomes, indexed by Outcome.
extern const char* const kOutcomeNames[static_cast<int>(Outcome::kCount)];

// Who decides that an entry's owner is gone.
enum class Authority : uint8_t {
  // The pid in the name must name no live process here, and the lock must be free (SPEC).
  kPid,
  // The lock alone: an unlocked directory or file is dead whatever its pid says. Only for
  // prefixes under which every entry was made by claim(), which locks before it publishes.
  // Sockets carry no lock and are still judged by pid and listener.
  kLock,
};

struct Options {
  std::string prefix;
  bool dry_run = false;
  Authority authority = Authority::kPid;
};

struct Entry {
  std::string name;
  int32_t pid = 0;
  Outcome outcome = Outcome::kRemoved;
  int err = 0;                    // positive errno when outcome is kError
  const char* syscall = nullptr;  // the call that failed, when outcome is kError
};

struct Report {
  int err = 0;  // positive errno when the directory itself could not be read
  const char* syscall = nullptr;
  std::vector<Entry> entries;  // candidates only, in directory order
};

// The pid a candidate name carries, or 0 when `name` is not a candidate for `prefix`: the
// prefix, then a decimal pid without sign or leading zero, > 0 and within pid_t, then the end
// of the name or '-' or '.'.
int32_t ParseCandidate(std::string_view name, std::string_view prefix);

// Sweeps `dir` (a path; the directory itself may be reached through symlinks, its entries never
// are). Blocking: run it off the event loop. The work is bounded by the directory's size.
void SweepDirectory(const char* dir, const Options& opts, Report* report);

// Removes the entry `name` in `dir` that the caller created and still holds open (and locked)
// as `held_fd`: only if the name still names that inode, a directory's contents first, without
// following links or crossing mounts. 0, or -errno with *syscall set (-ESTALE: the name now
// names another inode; -EBUSY: a mount inside was left alone).
int RemoveHeld(const char* dir, const char* name, int held_fd, const char** syscall);

// Creates the entry `name` in `dir` exclusively (a directory, or a regular file) with exactly
// `mode`, and returns an O_CLOEXEC descriptor on it holding LOCK_EX, checked to be still the inode
// the name names. A file is created unnamed (O_TMPFILE), locked, then linked in, so it is never
// visible unlocked; a directory is visible for the few microseconds between mkdirat and flock.
// -EEXIST: the name is taken; -EAGAIN: a sweeper took the entry in that window (retry with
// another name); other -errno with *syscall set.
int CreateLocked(const char* dir, const char* name, bool directory, mode_t mode,
                 const char** syscall);

// The points of an entry's removal where the test build can run a test's function (SetTestHook),
// so that a test can swap the entry (for a symlink, say) exactly there.
enum class HookPoint : int {
  kAfterCheck = 1,       // after lstat and the owner/pid checks, before the entry is opened
  kAfterLock = 2,        // after the entry is open and locked, before the name is checked again
  kBeforeContents = 3,   // a non-empty directory, checked: before its contents are removed
  kBeforeUnlink = 4,     // after a directory's contents are gone, before the final check and unlink
  kClaimBeforeLock = 5,  // CreateLocked: the entry exists under its name, before it is locked
};
#ifdef PROCPIN_TEST_HOOKS
// Test injection (the test build only): `hook` runs at every HookPoint. Null (the default)
// disables it.
using Hook = void (*)(int dirfd, const char* name, HookPoint point);
void SetTestHook(Hook hook);
#endif

}  // namespace procpin::sweep
