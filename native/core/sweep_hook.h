// Where a test can step into an entry's removal or creation: the points, and (the test build
// only) the hook that runs there. The production build compiles RunHook to nothing.
#pragma once

namespace procpin::sweep {

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

// Runs the test's hook, if one is set, at `point`. Called by the sweep and by CreateLocked.
void RunHook(int dirfd, const char* name, HookPoint point);
#else
inline void RunHook(int, const char*, HookPoint) {}
#endif

}  // namespace procpin::sweep
