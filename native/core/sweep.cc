// The per-directory work of a dead-pid sweep. See sweep.h for the contract; the comments
// here say why each step is safe.
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
#include "sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <memory>

#include "dir.h"
#include "proc.h"
#include "sys.h"

namespace procpin::sweep {

const char* const kOutcomeNames[static_cast<int>(Outcome::kCount)] = {
    "removed",          "alive",    "locked", "listening", "not-owner", "symlink",
    "unsupported-type", "replaced", "mount",  "error",     "vanished",
};

namespace {

#ifdef PROCPIN_TEST_HOOKS
std::atomic<Hook> g_hook{nullptr};

inline void RunHook(int dirfd, const char* name, HookPoint point) {
  Hook h = g_hook.load(std::memory_order_relaxed);
  if (h != nullptr) h(dirfd, name, point);
}
#else
inline void RunHook(int, const char*, HookPoint) {}
#endif

// What one stat tells us. statx also says whether the path is the root of a mount, which
// catches a bind mount of the same filesystem (same st_dev) as well.
struct Stat {
  mode_t mode = 0;
  uid_t uid = 0;
  dev_t dev = 0;
  ino_t ino = 0;
  bool mount_root = false;
};

#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

std::atomic<bool> g_no_statx{false};

// fstatat(dirfd, name, flags) through statx where the kernel has it (4.11), fstatat otherwise.
// 0 or -errno.
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
  // The raw call (glibc's struct stat is the kernel's on 64-bit targets): glibc 2.33 moved
  // fstatat into libc proper, and calling it would raise the addon's glibc floor.
  struct stat st;
#ifdef SYS_newfstatat
  if (syscall(SYS_newfstatat, dirfd, name, &st, flags) != 0) return -errno;
#else
  if (fstatat(dirfd, name, &st, flags) != 0) return -errno;
#endif
  out->mode = st.st_mode;
  out->uid = st.st_uid;
  out->dev = st.st_dev;
  out->ino = st.st_ino;
  out->mount_root = false;
  return 0;
}

inline int StatFd(int fd, Stat* out) { return StatAt(fd, "", AT_EMPTY_PATH, out); }

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

// Is `pid` a live process here? kill(pid, 0): ESRCH is dead, EPERM a live process of another
// user (live: deleting under a stranger is worse than one stale name). Success can still be a
// zombie, which is dead: the kernel says so through a pidfd (readable once exited), or else its
// state in /proc/PID/stat. `procfd` is -1 when /proc is missing or another pid namespace's: its
// entries then name other processes, and only the kernel is asked. When nothing can tell, live.
bool PidAlive(int procfd, int32_t pid) {
  if (kill(pid, 0) != 0) return errno != ESRCH;
  int exited = sys::ExitedByKernel(pid);
  if (exited >= 0) return exited == 0;
  if (procfd < 0) return true;
  return proc::ExitedByStat(procfd, pid) != 1;  // unreadable or unparseable: live
}

// A non-blocking connect to the socket open as `pathfd` (an O_PATH descriptor), through
// /proc/self/fd so that the name is not resolved again. 1: a listener (connected, or the backlog
// is full); 0: refused (nobody is bound); -errno otherwise. The socket type is not known from
// the inode, so stream, seqpacket and datagram are tried in turn (EPROTOTYPE: wrong type).
int ProbeSocket(int pathfd, const char** syscall_name) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d", pathfd);
  const int types[] = {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM};
  for (int type : types) {
    int s = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0) {
      *syscall_name = "socket";
      return -errno;
    }
    int r;
    do {
      r = connect(s, reinterpret_cast<struct sockaddr*>(&addr), sizeof addr);
    } while (r != 0 && errno == EINTR);
    int e = r == 0 ? 0 : errno;
    close(s);
    if (r == 0 || e == EAGAIN || e == EINPROGRESS) return 1;
    if (e == ECONNREFUSED) return 0;
    if (e == EPROTOTYPE) continue;
    *syscall_name = "connect";
    return -e;
  }
  *syscall_name = "connect";
  return -EPROTOTYPE;
}

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

// How many levels of a tree keep their directory open while the walk is below them. Deeper
// ancestors are closed and reopened through ".." on the way back up (checked to be the same
// directory), so a tree of any depth costs a bounded number of descriptors.
constexpr size_t kOpenLevels = 32;

// Removes (or, with `dry`, only walks) everything inside the directory open as `fd`, whose
// device is `dev`, however deep it is: the walk keeps its own stack (never recursion on the
// native stack). Never follows a symlink (a symlink is unlinked, its target untouched: unlinkat
// acts on the link itself) and never descends into another mount: a subdirectory is opened
// O_NOFOLLOW|O_DIRECTORY relative to its parent's descriptor and must be on `dev` and not a mount
// root. Keeps going past trouble; the first error is recorded.
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

struct Context {
  int dirfd = -1;
  int procfd = -1;
  dev_t dir_dev = 0;
  uid_t euid = 0;
  const Options* opts = nullptr;
};

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

// Decides one candidate and, unless dry, removes it. Fills e->outcome.
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

}  // namespace

int32_t ParseCandidate(std::string_view name, std::string_view prefix) {
  if (prefix.empty() || name.size() <= prefix.size()) return 0;
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  size_t i = prefix.size();
  if (name[i] < '1' || name[i] > '9') return 0;  // no sign, no leading zero, not 0
  int64_t pid = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    pid = pid * 10 + (name[i] - '0');
    if (pid > INT32_MAX) return 0;
  }
  if (i < name.size() && name[i] != '-' && name[i] != '.') return 0;
  return static_cast<int32_t>(pid);
}

void SweepDirectory(const char* dir, const Options& opts, Report* report) {
  Context ctx;
  ctx.opts = &opts;
  ctx.euid = geteuid();
  ctx.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (ctx.dirfd < 0) {
    report->err = errno;
    report->syscall = "open";
    return;
  }
  Stat dst;
  int r = StatFd(ctx.dirfd, &dst);
  if (r < 0) {
    report->err = -r;
    report->syscall = "fstat";
    close(ctx.dirfd);
    return;
  }
  ctx.dir_dev = dst.dev;

  // All names first, then the work: unlinking while a getdents cursor moves may skip names.
  DirBuf buf;
  r = ReadDir(ctx.dirfd, &buf, [&](const char* nm, unsigned char) {
    int32_t pid = ParseCandidate(nm, opts.prefix);
    if (pid > 0) {
      Entry e;
      e.name = nm;
      e.pid = pid;
      report->entries.push_back(std::move(e));
    }
  });
  if (r < 0) {
    report->err = -r;
    report->syscall = "scandir";
    report->entries.clear();
    close(ctx.dirfd);
    return;
  }

  // Without /proc, or with another namespace's: liveness from the kernel only.
  ctx.procfd = proc::OpenProc();
  if (ctx.procfd < 0) ctx.procfd = -1;
  for (Entry& e : report->entries) SweepOne(ctx, &e);
  if (ctx.procfd >= 0) close(ctx.procfd);
  close(ctx.dirfd);
}

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

#ifdef PROCPIN_TEST_HOOKS
void SetTestHook(Hook hook) { g_hook.store(hook, std::memory_order_relaxed); }
#endif

}  // namespace procpin::sweep
