// One candidate of a dead-pid sweep. See sweep.h for the contract; the comments here say why
// each step is safe.
//
// The order for one candidate, and what each step rules out:
//   lstat (fstatat NOFOLLOW)  -> symlink, unsupported type, another owner, a mount point
//   kill(pid, 0) + /proc stat -> a live owner (a zombie is dead; EPERM is a live stranger)
//   openat O_NOFOLLOW         -> a symlink swapped in since the lstat (ELOOP / ENOTDIR)
//   fstat(fd) == lstat        -> another inode swapped in since the lstat
//   flock LOCK_EX|LOCK_NB     -> a live holder (directories and files), held until the unlink
//   connect (sockets)         -> a listener
//   fstatat(name) == fstat(fd) right before unlinkat -> the name moved to another inode
// A directory's contents are removed through the locked descriptor itself, so renaming the
// directory or replacing its name by a symlink cannot steer the removal anywhere else.
#include "sweep_candidate.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "liveness.h"
#include "socket_probe.h"
#include "sweep_fs.h"
#include "sweep_hook.h"
#include "sweep_tree.h"

namespace procpin::sweep {

namespace {

void Keep(Entry* e, Outcome why) { e->outcome = why; }

void Fail(Entry* e, int err, const char* syscall_name) {
  e->outcome = Outcome::kError;
  e->err = err;
  e->syscall = syscall_name;
}

// Does `name` still name the inode `held`? kRemoved when it does (go on); kReplaced when another
// inode has the name; kVanished when nothing has it (another sweeper removed it after we opened
// it and before we got its lock); kError (with e filled) when the stat failed otherwise.
Outcome Verify(int dirfd, const char* name, const Stat& held, Entry* e) {
  Stat now;
  int r = StatAt(dirfd, name, AT_SYMLINK_NOFOLLOW, &now);
  if (r == 0 && SameInode(now, held)) return Outcome::kRemoved;
  if (r == -ENOENT) return Outcome::kVanished;
  if (r < 0) {
    e->err = -r;
    e->syscall = "fstatat";
    return Outcome::kError;
  }
  return Outcome::kReplaced;
}

}  // namespace

void SweepOne(const Context& ctx, Entry* e) {
  const char* name = e->name.c_str();
  const bool dry = ctx.opts->dry_run;

  // 1. lstat: not a symlink, a directory, regular file or socket, not a mount point.
  Stat st;
  int r = StatAt(ctx.dirfd, name, AT_SYMLINK_NOFOLLOW, &st);
  if (r == -ENOENT) return Keep(e, Outcome::kVanished);
  if (r < 0) return Fail(e, -r, "fstatat");
  if (S_ISLNK(st.mode)) return Keep(e, Outcome::kSymlink);
  const bool is_dir = S_ISDIR(st.mode);
  const bool is_sock = S_ISSOCK(st.mode);
  if (!is_dir && !is_sock && !S_ISREG(st.mode)) return Keep(e, Outcome::kUnsupportedType);

  // 2. Ours.
  if (st.uid != ctx.euid) return Keep(e, Outcome::kNotOwner);

  // 3. The pid names no live process (unless the lock alone decides, for locked kinds).
  if ((ctx.opts->authority == Authority::kPid || is_sock) && PidAlive(ctx.procfd, e->pid)) {
    return Keep(e, Outcome::kAlive);
  }

  // 7 (the entry itself): a mount point is never removed, nor descended into.
  if (st.mount_root || (is_dir && st.dev != ctx.dir_dev)) return Keep(e, Outcome::kMount);

  RunHook(ctx.dirfd, name, HookPoint::kAfterCheck);

  // Open the very inode that was checked, never through a symlink. A socket cannot be opened for
  // reading (ENXIO) and takes no flock; O_PATH pins its inode for the connect and the compare.
  int flags = O_CLOEXEC | O_NOFOLLOW;
  if (is_dir) {
    flags |= O_RDONLY | O_DIRECTORY;
  } else if (is_sock) {
    flags |= O_PATH;
  } else {
    flags |= O_RDONLY | O_NONBLOCK | O_NOCTTY;
  }
  int fd = openat(ctx.dirfd, name, flags);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Keep(e, Outcome::kVanished);
    // A symlink (ELOOP; ENOTDIR with O_DIRECTORY) or another kind of file (ENXIO) took its place.
    if (err == ELOOP || err == ENOTDIR || err == ENXIO) return Keep(e, Outcome::kReplaced);
    return Fail(e, err, "openat");
  }

  // Every exit below closes fd exactly once (closing drops the lock, after the unlink).
  Stat held;
  r = StatFd(fd, &held);
  if (r < 0) {
    close(fd);
    return Fail(e, -r, "fstat");
  }
  if (!SameInode(held, st) || ((held.mode ^ st.mode) & S_IFMT) != 0) {
    close(fd);
    return Keep(e, Outcome::kReplaced);
  }

  if (is_sock) {
    // 5. A socket nobody listens on refuses the connect.
    const char* sc = nullptr;
    r = ProbeSocket(fd, &sc);
    if (r != 0) {
      close(fd);
      if (r > 0) return Keep(e, Outcome::kListening);
      return Fail(e, -r, sc);
    }
  } else {
    // 4. Nobody holds its lock; we hold it from here until after the unlink, so a claimant that
    // opens the same inode meanwhile cannot take it and believe it owns a name about to vanish.
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      close(fd);
      if (err == EWOULDBLOCK) return Keep(e, Outcome::kLocked);
      return Fail(e, err, "flock");
    }
  }

  RunHook(ctx.dirfd, name, HookPoint::kAfterLock);

  if (dry) {
    // A dry run walks a directory without removing, to find mounts inside.
    if (is_dir) {
      TreeResult tree;
      RemoveTree(fd, held.dev, true, &tree);
      close(fd);
      if (tree.mount) return Keep(e, Outcome::kMount);
      if (tree.err != 0) return Fail(e, tree.err, tree.syscall);
      return Keep(e, Outcome::kRemoved);
    }
    close(fd);
    return Keep(e, Outcome::kRemoved);
  }

  // 6. The name still names the inode we checked and locked. (The window between this fstatat
  // and the unlinkat is the kernel's: there is no unlink-if-inode. A directory swapped in would
  // have to be empty to be removed, a symlink is only ever unlinked, never followed.)
  Outcome why = Verify(ctx.dirfd, name, held, e);
  if (why != Outcome::kRemoved) {
    close(fd);
    return Keep(e, why);
  }
  const int unlink_flags = is_dir ? AT_REMOVEDIR : 0;
  int r2 = unlinkat(ctx.dirfd, name, unlink_flags);
  if (r2 != 0 && is_dir && (errno == ENOTEMPTY || errno == EEXIST)) {
    RunHook(ctx.dirfd, name, HookPoint::kBeforeContents);
    // 7. The contents, through the locked descriptor: wherever its name now points, this removes
    // only what is inside the inode we checked.
    TreeResult tree;
    RemoveTree(fd, held.dev, false, &tree);
    if (tree.mount) {
      close(fd);
      return Keep(e, Outcome::kMount);
    }
    if (tree.err != 0) {
      close(fd);
      return Fail(e, tree.err, tree.syscall);
    }
    RunHook(ctx.dirfd, name, HookPoint::kBeforeUnlink);
    why = Verify(ctx.dirfd, name, held, e);
    if (why != Outcome::kRemoved) {
      close(fd);
      return Keep(e, why);
    }
    r2 = unlinkat(ctx.dirfd, name, unlink_flags);
  }
  if (r2 != 0) {
    int err = errno;
    close(fd);
    if (err == ENOENT) return Keep(e, Outcome::kVanished);
    if (err == EBUSY) return Keep(e, Outcome::kMount);
    return Fail(e, err, "unlinkat");
  }
  close(fd);
  e->outcome = Outcome::kRemoved;
}

}  // namespace procpin::sweep
