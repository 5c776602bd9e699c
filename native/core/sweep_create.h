// The entries a claimant makes and removes itself, under the same lock discipline as the sweep:
// an entry is created locked (never visible unlocked, a file at least), and removed only while
// its name still names the inode its creator holds.
#pragma once

#include <sys/types.h>

namespace procpin::sweep {

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

}  // namespace procpin::sweep
