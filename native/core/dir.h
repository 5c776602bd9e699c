// The one directory-entry reader of the core: getdents64(2) over a directory descriptor, for the
// sweep (its directory and the trees it removes), the group scan (/proc) and close_range's
// fallback loop (/proc/self/fd). Raw syscalls and the caller's buffer only: async-signal-safe,
// so that a CLONE_VM spawn child may run it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sys.h"

namespace procpin::dir {

// One record of getdents64(2), as the kernel lays it out (linux_dirent64).
struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// Called once per entry: its name, its d_type (DT_UNKNOWN when the filesystem does not say) and
// its inode number. Returning false stops the walk.
using EntryFn = bool (*)(void* ctx, const char* name, unsigned char type, uint64_t ino);

// Reads the directory open as `fd` from its current offset to its end with getdents64, into
// `buf` (`size` bytes, 8-aligned), calling fn for every entry but "." and "..". EINTR is retried.
// 0 at the end (or when fn stopped the walk), -errno when a read failed.
PROCPIN_NO_SANITIZE int ReadEntries(int fd, char* buf, size_t size, EntryFn fn, void* ctx);

// ReadEntries with any callable `fn(name, type, ino)` returning void (visit every entry) or bool
// (false stops). Not for the CLONE_VM child: the callable is instrumented code.
template <typename Fn>
int ForEachEntry(int fd, char* buf, size_t size, Fn&& fn) {
  return ReadEntries(
      fd, buf, size,
      [](void* ctx, const char* name, unsigned char type, uint64_t ino) -> bool {
        Fn& f = *static_cast<std::remove_reference_t<Fn>*>(ctx);
        if constexpr (std::is_void_v<decltype(f(name, type, ino))>) {
          f(name, type, ino);
          return true;
        } else {
          return f(name, type, ino);
        }
      },
      &fn);
}

}  // namespace procpin::dir
