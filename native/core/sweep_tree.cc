#include "sweep_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "sweep_fs.h"

namespace procpin::sweep {

namespace {

// How many levels of a tree keep their directory open while the walk is below them. Deeper
// ancestors are closed and reopened through ".." on the way back up (checked to be the same
// directory), so a tree of any depth costs a bounded number of descriptors.
constexpr size_t kOpenLevels = 32;

}  // namespace

void RemoveTree(int fd, dev_t dev, bool dry, TreeResult* res) {
  struct Child {
    std::string name;
    unsigned char type;
  };
  struct Frame {
    int fd;            // -1 while closed (a deep walk below it)
    ino_t ino;         // to know it again when reopened through ".."
    std::string name;  // its name in the parent frame
    std::vector<Child> children;
    size_t next = 0;
    bool listed = false;
  };
  Stat top;
  if (int r = StatFd(fd, &top); r < 0) {
    res->Fail(-r, "fstat");
    return;
  }
  std::vector<Frame> stack;
  stack.push_back(Frame{fd, top.ino, std::string(), {}, 0, false});
  auto close_all = [&] {
    for (size_t i = 1; i < stack.size(); ++i) {
      if (stack[i].fd >= 0) close(stack[i].fd);
    }
    stack.clear();
  };
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (!f.listed) {
      f.listed = true;
      DirBuf buf;
      int r = ReadDir(f.fd, &buf, [&](const char* nm, unsigned char type) {
        f.children.push_back(Child{nm, type});
      });
      if (r < 0) {
        res->Fail(-r, "getdents64");
        f.children.clear();
      }
    }
    if (f.next < f.children.size()) {
      const Child c = f.children[f.next++];
      const char* nm = c.name.c_str();
      bool is_dir = c.type == DT_DIR;
      if (c.type == DT_UNKNOWN) {
        Stat st;
        int r = StatAt(f.fd, nm, AT_SYMLINK_NOFOLLOW, &st);
        if (r == -ENOENT) continue;
        if (r < 0) {
          res->Fail(-r, "fstatat");
          continue;
        }
        is_dir = S_ISDIR(st.mode);
      }
      if (!is_dir) {
        // A non-directory, symlinks included: unlinking removes the name, never a target. (A
        // file that is a mount point gives EBUSY.)
        if (!dry && unlinkat(f.fd, nm, 0) != 0 && errno != ENOENT) {
          if (errno == EBUSY) {
            res->mount = true;
          } else {
            res->Fail(errno, "unlinkat");
          }
        }
        continue;
      }
      int sub = openat(f.fd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) {
        int e = errno;
        if (e == ENOENT) continue;
        if (e == ENOTDIR || e == ELOOP) {
          // Not a directory any more (a symlink took its place): remove the name only.
          if (!dry && unlinkat(f.fd, nm, 0) != 0 && errno != ENOENT) res->Fail(errno, "unlinkat");
          continue;
        }
        res->Fail(e, "openat");
        continue;
      }
      Stat sst;
      int r = StatFd(sub, &sst);
      if (r < 0) {
        res->Fail(-r, "fstat");
        close(sub);
        continue;
      }
      if (sst.dev != dev || sst.mount_root) {
        // Another filesystem is mounted here: neither descend nor unmount; keep the mount point.
        res->mount = true;
        close(sub);
        continue;
      }
      stack.push_back(Frame{sub, sst.ino, c.name, {}, 0, false});  // `f` is stale from here
      if (stack.size() > kOpenLevels + 1) {
        Frame& far = stack[stack.size() - 1 - kOpenLevels];
        if (far.fd >= 0 && stack.size() - 1 - kOpenLevels > 0) {
          close(far.fd);
          far.fd = -1;
        }
      }
      continue;
    }
    // Everything inside `f` was handled: remove it from its parent.
    if (stack.size() == 1) break;  // the caller's own directory
    Frame done = std::move(stack.back());
    stack.pop_back();
    Frame& parent = stack.back();
    if (parent.fd < 0) {
      // Back up into a level that was closed: reopen it through "..", and only if it is the
      // very directory we left (it may have been moved meanwhile).
      int up = openat(done.fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      Stat ust;
      if (up < 0 || StatFd(up, &ust) < 0 || ust.dev != dev || ust.ino != parent.ino) {
        res->Fail(up < 0 ? errno : ESTALE, "openat");
        if (up >= 0) close(up);
        close(done.fd);
        close_all();
        return;
      }
      parent.fd = up;
    }
    close(done.fd);
    if (!dry && unlinkat(parent.fd, done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      // ENOTEMPTY after trouble inside was already recorded; EBUSY is a mount point.
      if (errno == EBUSY) {
        res->mount = true;
      } else if (!(errno == ENOTEMPTY && (res->mount || res->err != 0))) {
        res->Fail(errno, "unlinkat");
      }
    }
  }
  close_all();
}

}  // namespace procpin::sweep
