// The removal of a directory's contents, however deep, through the descriptor of the directory
// itself: for a swept directory and for a held entry that its owner removes.
#pragma once

#include <sys/types.h>

namespace procpin::sweep {

struct TreeResult {
  bool mount = false;  // a mount was found inside and left alone
  int err = 0;         // the first error (positive errno)
  const char* syscall = nullptr;
  void Fail(int e, const char* sc) {
    if (err == 0) {
      err = e;
      syscall = sc;
    }
  }
};

// Removes (or, with `dry`, only walks) everything inside the directory open as `fd`, whose
// device is `dev`, however deep it is: the walk keeps its own stack (never recursion on the
// native stack). Never follows a symlink (a symlink is unlinked, its target untouched: unlinkat
// acts on the link itself) and never descends into another mount: a subdirectory is opened
// O_NOFOLLOW|O_DIRECTORY relative to its parent's descriptor and must be on `dev` and not a mount
// root. Keeps going past trouble; the first error is recorded.
void RemoveTree(int fd, dev_t dev, bool dry, TreeResult* res);

}  // namespace procpin::sweep
