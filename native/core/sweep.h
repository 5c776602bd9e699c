// The sweep core: the per-directory work of a dead-pid sweep, free of JavaScript. It reads one
// directory, picks the candidates (prefix + canonical decimal pid + end, '-' or '.'), and removes
// a candidate only when all of SPEC's seven conditions hold. Every check and every removal is
// made relative to descriptors (fstatat/openat/unlinkat with O_NOFOLLOW), never through a path
// string that the kernel would resolve again between the check and the act. Per-entry trouble
// is recorded in the entry; nothing here throws or aborts.
#pragma once

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

}  // namespace procpin::sweep

// The entries a claimant makes and removes itself, and the test build's hook points.
#include "sweep_create.h"
#include "sweep_hook.h"
