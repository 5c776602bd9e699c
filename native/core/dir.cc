#include "dir.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace procpin::dir {

PROCPIN_NO_SANITIZE int ReadEntries(int fd, char* buf, size_t size, EntryFn fn, void* ctx) {
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return 0;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<Dirent64*>(buf + off);
      off += d->d_reclen;
      const char* nm = d->d_name;
      if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
      if (!fn(ctx, nm, d->d_type, d->d_ino)) return 0;
    }
  }
}

}  // namespace procpin::dir
