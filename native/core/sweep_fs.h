// The sweep's reads of the file system, made relative to descriptors: one stat (statx where the
// kernel has it, which also tells a mount root) and the names in a directory. Shared by the
// directory sweep, one candidate's decision, the tree removal and the held-entry removal.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <memory>

#include "dir.h"

namespace procpin::sweep {

// What one stat tells us. statx also says whether the path is the root of a mount, which
// catches a bind mount of the same filesystem (same st_dev) as well.
struct Stat {
  mode_t mode = 0;
  uid_t uid = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  bool mount_root = false;
};

// fstatat(dirfd, name, flags) through statx where the kernel has it (4.11), fstatat otherwise.
// 0 or -errno.
int StatAt(int dirfd, const char* name, int flags, Stat* out);

int StatFd(int fd, Stat* out);  // the descriptor itself (AT_EMPTY_PATH)

inline bool SameInode(const Stat& a, const Stat& b) { return a.dev == b.dev && a.ino == b.ino; }

// A getdents64 buffer, left uninitialized (the kernel fills it).
struct DirBuf {
  static constexpr size_t kSize = 32768;
  std::unique_ptr<char[]> mem{new char[kSize]};
  char* data() { return mem.get(); }
  size_t size() const { return kSize; }
};

// Reads every entry of the directory open as `fd` (from its current offset): fn(name, d_type)
// for each except "." and "..". 0 or -errno.
template <typename Fn>
int ReadDir(int fd, DirBuf* buf, Fn fn) {
  return dir::ForEachEntry(fd, buf->data(), buf->size(),
                           [&](const char* name, unsigned char type, uint64_t) { fn(name, type); });
}

}  // namespace procpin::sweep
