#include "sweep_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>

#include "sys.h"

namespace procpin::sweep {

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

namespace {
std::atomic<bool> g_no_statx{false};
}  // namespace

int StatAt(int dirfd, const char* name, int flags, Stat* out) {
#if defined(SYS_statx) && defined(STATX_TYPE)
  if (!g_no_statx.load(std::memory_order_relaxed)) {
    struct statx sx;
    long r = syscall(SYS_statx, dirfd, name, flags | AT_STATX_SYNC_AS_STAT,
                     STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO, &sx);
    if (r == 0) {
      out->mode = sx.stx_mode;
      out->uid = sx.stx_uid;
      out->dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
      out->ino = sx.stx_ino;
      out->mount_root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
                        (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
      return 0;
    }
    if (errno != ENOSYS) return -errno;
    g_no_statx.store(true, std::memory_order_relaxed);
  }
#endif
  // The raw call (sys::StatAt): glibc 2.33's fstatat would raise the addon's glibc floor.
  struct stat st;
  if (int r = sys::StatAt(dirfd, name, &st, flags); r != 0) return r;
  out->mode = st.st_mode;
  out->uid = st.st_uid;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->mount_root = false;
  return 0;
}

int StatFd(int fd, Stat* out) { return StatAt(fd, "", AT_EMPTY_PATH, out); }
}  // namespace procpin::sweep
