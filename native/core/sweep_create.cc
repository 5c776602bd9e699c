#include "sweep_create.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sweep_fs.h"
#include "sweep_hook.h"
#include "sweep_tree.h"

namespace procpin::sweep {

int RemoveHeld(const char* dir, const char* name, int held_fd, const char** syscall_name) {
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    *syscall_name = "open";
    return -errno;
  }
  Stat held, now;
  int r = StatFd(held_fd, &held);
  if (r < 0) {
    close(dirfd);
    *syscall_name = "fstat";
    return r;
  }
  r = StatAt(dirfd, name, AT_SYMLINK_NOFOLLOW, &now);
  if (r < 0 || !SameInode(held, now)) {
    close(dirfd);
    *syscall_name = "fstatat";
    return r < 0 ? r : -ESTALE;
  }
  const bool is_dir = S_ISDIR(held.mode);
  if (is_dir) {
    // The held descriptor's offset is ours to move: read the contents through a fresh open of
    // the same inode via the descriptor (so the caller's descriptor is left as it was).
    int fd = openat(held_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
      close(dirfd);
      *syscall_name = "openat";
      return -errno;
    }
    TreeResult tree;
    RemoveTree(fd, held.dev, false, &tree);
    close(fd);
    if (tree.mount) {
      close(dirfd);
      *syscall_name = "rmdir";
      return -EBUSY;
    }
    if (tree.err != 0) {
      close(dirfd);
      *syscall_name = tree.syscall;
      return -tree.err;
    }
    r = StatAt(dirfd, name, AT_SYMLINK_NOFOLLOW, &now);
    if (r < 0 || !SameInode(held, now)) {
      close(dirfd);
      *syscall_name = "fstatat";
      return r < 0 ? r : -ESTALE;
    }
  }
  r = unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0) == 0 ? 0 : -errno;
  if (r < 0) *syscall_name = is_dir ? "rmdir" : "unlink";
  close(dirfd);
  return r;
}

namespace {

int CreateLockedFile(int dirfd, const char* name, mode_t mode, const char** syscall_name) {
  // Unnamed first: locked before anyone can see it. Filesystems without O_TMPFILE (EOPNOTSUPP,
  // EISDIR on old kernels) and a missing /proc fall back to a named exclusive create.
  int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) {
    if (fchmod(fd, mode) != 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
      *syscall_name = "flock";
      int e = errno;
      close(fd);
      return -e;
    }
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW) == 0) return fd;
    int e = errno;
    close(fd);
    if (e == EEXIST) return -EEXIST;
    if (e != ENOENT) {
      *syscall_name = "linkat";
      return -e;
    }
  } else if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
    *syscall_name = "open";
    return -errno;
  }
  fd = openat(dirfd, name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    *syscall_name = "open";
    return -errno;
  }
  return fd;
}

}  // namespace

int CreateLocked(const char* dir, const char* name, bool directory, mode_t mode,
                 const char** syscall_name) {
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    *syscall_name = "open";
    return -errno;
  }
  int fd;
  if (directory) {
    if (mkdirat(dirfd, name, 0700) != 0) {
      int e = errno;
      close(dirfd);
      *syscall_name = "mkdir";
      return -e;
    }
    fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      int e = errno;
      close(dirfd);
      if (e == ENOENT || e == ELOOP || e == ENOTDIR) return -EAGAIN;
      *syscall_name = "open";
      return -e;
    }
  } else {
    fd = CreateLockedFile(dirfd, name, mode, syscall_name);
    if (fd < 0) {
      close(dirfd);
      return fd;
    }
  }
  RunHook(dirfd, name, HookPoint::kClaimBeforeLock);
  // Taken already for an O_TMPFILE file (flock again on the same description is a no-op).
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    close(fd);
    close(dirfd);
    if (e == EWOULDBLOCK) return -EAGAIN;  // a sweeper holds it and will remove it
    *syscall_name = "flock";
    return -e;
  }
  // Locked: no sweeper removes it from now on. Was it removed before we locked it?
  Stat held, now;
  int r = StatFd(fd, &held);
  if (r == 0) r = StatAt(dirfd, name, AT_SYMLINK_NOFOLLOW, &now);
  close(dirfd);
  if (r < 0 || !SameInode(held, now)) {
    close(fd);
    if (r < 0 && r != -ENOENT) {
      *syscall_name = "fstat";
      return r;
    }
    return -EAGAIN;
  }
  if (fchmod(fd, mode) != 0) {
    int e = errno;
    close(fd);
    *syscall_name = "fchmod";
    return -e;
  }
  return fd;
}

}  // namespace procpin::sweep
