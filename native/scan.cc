// The advisory scan of a process group's members (SPEC Layer 3a): how many live (non-zombie)
// processes have a given pgid. The scan is never an atomic snapshot and never decides that a
// group is gone; it only lets a cleanup end its grace early.
//
// Cost: one pass of getdents64 over /proc, one getpgid(2) per pid (well under a microsecond), and
// only for the pids whose pgid matches, a look at whether it still lives: pidfd_open and a poll
// (about 4 us: readable once the process has exited), or without pidfd_open its state in
// /proc/PID/stat (11-15 us for a process not read before; Z and X are gone). With a
// thousand processes and hundreds of dying members that is milliseconds, so the scan runs on
// libuv's threadpool: bounded work, never a wait.
//
// A cleanup scans the same group again and again while its members die, and a dead member stays a
// zombie until its parent reaps it (PID 1 here: a second or more late). A ZombieMemory remembers
// the zombies one scan saw, so that the next one does not look at them again. A zombie never
// comes back to life; its pid can only name another process after the reap, and then /proc shows
// a new inode for it (the reap drops the old dentries; each new proc inode takes a fresh number),
// so a zombie is remembered as (pid, inode of /proc/PID), and a pid with another inode is read
// afresh.
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "glue.h"
#include "core/sys.h"

namespace procpin {

// ---------------------------------------------------------------------------------------------
// Core: JavaScript-free.
// ---------------------------------------------------------------------------------------------
namespace scan {

// A test injection: when non-zero, every scan fails as if /proc could not be opened with this
// errno. Process-wide (tests run one file at a time).
std::atomic<int> g_inject{0};
// A test injection: when set, liveness is read from /proc/PID/stat, as on a kernel without
// pidfd_open.
std::atomic<bool> g_stat_only{false};

// The zombies of one group seen by its last scan, as (pid, /proc/PID inode), sorted. Used by one
// scan at a time (`busy`); a scan that finds it busy goes without.
struct ZombieMemory {
  std::atomic<bool> busy{false};
  std::vector<std::pair<pid_t, uint64_t>> seen;
};

struct Dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// A decimal pid (no sign, no leading zero, > 0), or 0 for any other name.
pid_t ParsePid(const char* s) {
  if (*s < '1' || *s > '9') return 0;
  long v = 0;
  for (; *s != '\0'; ++s) {
    if (*s < '0' || *s > '9') return 0;
    v = v * 10 + (*s - '0');
    if (v > INT_MAX) return 0;
  }
  return static_cast<pid_t>(v);
}

// "PID/<leaf>" into path (at least 32 bytes).
void PidPath(char* path, pid_t pid, const char* leaf) {
  char digits[12];
  int nd = 0, len = 0;
  for (unsigned v = static_cast<unsigned>(pid); v != 0; v /= 10) digits[nd++] = '0' + v % 10;
  while (nd > 0) path[len++] = digits[--nd];
  path[len++] = '/';
  std::memcpy(path + len, leaf, std::strlen(leaf) + 1);
}

// The state letter of /proc/PID/stat, read relative to the open /proc. '\0' when the process is
// gone (it exited and was reaped meanwhile); '?' when the line cannot be parsed (then it is
// counted as live); -errno through *err for any other failure.
char ReadState(int procfd, pid_t pid, int* err) {
  char path[32];
  PidPath(path, pid, "stat");

  int fd = static_cast<int>(syscall(SYS_openat, procfd, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return '\0';
    *err = -errno;
    return '\0';
  }
  char buf[512];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  close(fd);
  if (n < 0) {
    if (saved == ESRCH || saved == ENOENT) return '\0';
    *err = -saved;
    return '\0';
  }
  if (n == 0) return '\0';
  // The command name may hold anything, ')' included; every field after it is a number, so the
  // last ')' ends it, and the state follows after one space.
  for (ssize_t i = n - 1; i >= 0; --i) {
    if (buf[i] == ')') return i + 2 < n ? buf[i + 2] : '?';
  }
  return '?';
}

// 1 when `pid` has exited (a zombie, or reaped meanwhile), 0 while it lives, -errno when /proc
// cannot tell.
int HasExited(int procfd, pid_t pid) {
  // First the cheap look (about a third of a stat read of a process not read before, no path
  // walk): a pidfd polls readable once the whole process has exited. Without pidfd_open (before
  // 5.3, or out of descriptors) the state in stat decides.
  if (!g_stat_only.load(std::memory_order_relaxed)) {
    int fd = sys::PidfdOpen(pid, 0);  // always O_CLOEXEC
    if (fd >= 0) {
      struct pollfd p = {fd, POLLIN, 0};
      int r;
      do {
        r = poll(&p, 1, 0);
      } while (r < 0 && errno == EINTR);
      close(fd);
      if (r >= 0) return (p.revents & POLLIN) != 0 ? 1 : 0;
    } else if (fd == -ESRCH) {
      return 1;
    }
  }
  int err = 0;
  char state = ReadState(procfd, pid, &err);
  if (err != 0) return err;
  return state == '\0' || state == 'Z' || state == 'X' ? 1 : 0;
}

// Whether `pid` is a live member of `pgid`: 1 yes, 0 no (another group, a zombie, or gone),
// -errno when /proc cannot tell.
int MemberLive(int procfd, pid_t pgid, pid_t pid) {
  // getpgid(2) works on any pid, zombies too; ESRCH: it exited and was reaped meanwhile.
  if (syscall(SYS_getpgid, pid) != pgid) return 0;
  int exited = HasExited(procfd, pid);
  return exited < 0 ? exited : 1 - exited;
}

int OpenProc() {
  int injected = g_inject.load(std::memory_order_relaxed);
  if (injected != 0) return -injected;
  int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd < 0) return -errno;
  // A /proc of another pid namespace lists other processes under our numbers: it cannot tell,
  // so the scan reports it as unreadable (members may exist; the grace runs its course).
  int ours = sys::ProcIsOurs(fd);
  if (ours != 1) {
    close(fd);
    return ours < 0 ? ours : -EXDEV;
  }
  return fd;
}

int IsMember(pid_t pgid, pid_t pid) {
  if (pgid <= 0 || pid <= 0) return -EINVAL;
  int procfd = OpenProc();
  if (procfd < 0) return procfd;
  int r = MemberLive(procfd, pgid, pid);
  close(procfd);
  return r;
}

// Live members of `pgid`, counted up to `limit` (>= 1), or -errno when /proc cannot be read
// (the caller must then assume members may exist). *first gets the first live member found (0
// when none): a cheap witness to look at before the next full scan. Newest pid first: members
// are mostly recent, so a scan that only needs to know whether one lives stops early. `memory`
// (may be null) skips the look at zombies the previous scan saw, and is replaced by the zombies
// this one saw (added to those it remembered when the scan stopped early).
int CountMembers(pid_t pgid, int limit, pid_t* first, ZombieMemory* memory) {
  *first = 0;
  if (pgid <= 0 || limit < 1) return -EINVAL;
  int procfd = OpenProc();
  if (procfd < 0) return procfd;

  // Every pid first (getdents64 lists them in ascending order), then walk them backwards.
  std::vector<std::pair<pid_t, uint64_t>> pids;
  pids.reserve(2048);
  alignas(8) char buf[16384];
  int result = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, procfd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      result = -errno;
      break;
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<Dirent64*>(buf + off);
      off += d->d_reclen;
      pid_t pid = ParsePid(d->d_name);
      if (pid != 0) pids.emplace_back(pid, d->d_ino);
    }
  }

  std::vector<std::pair<pid_t, uint64_t>> zombies;
  int found = 0;
  for (size_t i = pids.size(); result == 0 && i-- > 0;) {
    const auto& entry = pids[i];
    // getpgid(2) works on any pid, zombies too; ESRCH: it exited and was reaped meanwhile.
    if (syscall(SYS_getpgid, entry.first) != pgid) continue;
    if (memory != nullptr &&
        std::binary_search(memory->seen.begin(), memory->seen.end(), entry)) {
      zombies.push_back(entry);
      continue;
    }
    int exited = HasExited(procfd, entry.first);
    if (exited < 0) {
      result = exited;
      break;
    }
    if (exited == 1) {
      zombies.push_back(entry);
      continue;
    }
    if (found == 0) *first = entry.first;
    if (++found >= limit) break;
  }
  close(procfd);
  if (memory != nullptr && result == 0) {
    // A scan that stopped early did not look at every pid: keep what the last one saw too.
    if (found >= limit) zombies.insert(zombies.end(), memory->seen.begin(), memory->seen.end());
    std::sort(zombies.begin(), zombies.end());
    zombies.erase(std::unique(zombies.begin(), zombies.end()), zombies.end());
    memory->seen = std::move(zombies);
  }
  return result < 0 ? result : found;
}

}  // namespace scan

// ---------------------------------------------------------------------------------------------
// Glue.
// ---------------------------------------------------------------------------------------------
namespace {

// [count or -errno, first live member found or 0]
Napi::Array Pair(Napi::Env env, int result, pid_t first) {
  Napi::Array a = Napi::Array::New(env, 2);
  a.Set(uint32_t{0}, Napi::Number::New(env, result));
  a.Set(uint32_t{1}, Napi::Number::New(env, first));
  return a;
}

using MemoryHandle = Napi::External<scan::ZombieMemory>;

// Marks the handles made by createScanMemory, so that no other external is taken for one.
constexpr napi_type_tag kMemoryTag = {0x70726f6370696e2dULL, 0x7363616e6d656d31ULL};

// The optional ZombieMemory argument, taken for this scan (null when absent or in use).
bool MemoryArg(const Napi::CallbackInfo& info, size_t i, MemoryHandle* handle,
               scan::ZombieMemory** out) {
  *out = nullptr;
  if (i >= info.Length() || info[i].IsUndefined()) return true;
  if (!info[i].IsExternal() || !info[i].As<MemoryHandle>().CheckTypeTag(&kMemoryTag)) {
    Napi::TypeError::New(info.Env(), "argument " + std::to_string(i) + " must be a scan memory")
        .ThrowAsJavaScriptException();
    return false;
  }
  *handle = info[i].As<MemoryHandle>();
  scan::ZombieMemory* m = handle->Data();
  bool idle = false;
  if (m->busy.compare_exchange_strong(idle, true)) *out = m;
  return true;
}

class ScanWorker : public Napi::AsyncWorker {
 public:
  ScanWorker(Napi::Env env, pid_t pgid, int limit, MemoryHandle handle, scan::ZombieMemory* memory)
      : Napi::AsyncWorker(env, "procpin:group-scan"),
        deferred_(env),
        pgid_(pgid),
        limit_(limit),
        memory_(memory) {
    // Keeps the memory alive until the scan is done.
    if (memory_ != nullptr) handle_ = Napi::Persistent(handle);
  }
  ~ScanWorker() override {
    if (memory_ != nullptr) memory_->busy.store(false);
  }

  bool ok() const { return deferred_.ok(); }
  Napi::Value Promise() const { return deferred_.Promise(); }

 protected:
  void Execute() override { result_ = scan::CountMembers(pgid_, limit_, &first_, memory_); }
  void OnOK() override { deferred_.Resolve(Pair(Env(), result_, first_)); }

 private:
  Deferred deferred_;
  pid_t pgid_;
  int limit_;
  scan::ZombieMemory* memory_;
  Napi::Reference<MemoryHandle> handle_;
  int result_ = 0;
  pid_t first_ = 0;
};

// createScanMemory() -> the zombie memory of one group's successive scans.
// Raw calls: node-addon-api's External::New gives an External without env when the creation
// fails (as it does in a stopping environment), and TypeTag on that is a fatal error.
Napi::Value CreateScanMemory(const Napi::CallbackInfo& info) {
  napi_env env = info.Env();
  auto* m = new scan::ZombieMemory();
  napi_value handle = nullptr;
  auto finalize = [](napi_env, void* data, void*) { delete static_cast<scan::ZombieMemory*>(data); };
  if (napi_create_external(env, m, finalize, nullptr, &handle) != napi_ok || handle == nullptr) {
    delete m;
    return CouldNotMake(info.Env(), "a scan memory");
  }
  // From here the external owns the memory (its finalizer frees it).
  if (napi_type_tag_object(env, handle, &kMemoryTag) != napi_ok) {
    return CouldNotMake(info.Env(), "a scan memory");
  }
  return Napi::Value(env, handle);
}

// scanGroup(pgid, limit, memory?) -> Promise<[count | -errno, first live member | 0]>
Napi::Value ScanGroup(const Napi::CallbackInfo& info) {
  int32_t pgid, limit;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &limit)) return Napi::Value();
  MemoryHandle handle;
  scan::ZombieMemory* memory;
  if (!MemoryArg(info, 2, &handle, &memory)) return Napi::Value();
  auto* w = new ScanWorker(info.Env(), pgid, limit, handle, memory);
  if (!w->ok()) {
    delete w;
    return CouldNotMake(info.Env(), "a promise");
  }
  Napi::Value p = w->Promise();
  w->Queue();
  return p;
}

// scanGroupSync(pgid, limit, memory?) -> [count | -errno, first live member | 0], on the calling
// thread (tests and measurement: a full scan takes milliseconds).
Napi::Value ScanGroupSync(const Napi::CallbackInfo& info) {
  int32_t pgid, limit;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &limit)) return Napi::Value();
  MemoryHandle handle;
  scan::ZombieMemory* memory;
  if (!MemoryArg(info, 2, &handle, &memory)) return Napi::Value();
  pid_t first = 0;
  int r = scan::CountMembers(pgid, limit, &first, memory);
  if (memory != nullptr) memory->busy.store(false);
  return Pair(info.Env(), r, first);
}

// groupMemberLive(pgid, pid) -> 1 | 0 | -errno: one pid's getpgid and, on a match, whether it has
// exited. Microseconds: safe on the event loop.
Napi::Value GroupMemberLive(const Napi::CallbackInfo& info) {
  int32_t pgid, pid;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &pid)) return Napi::Value();
  return Result(info.Env(), scan::IsMember(pgid, pid));
}

// scanTestHook(errno?, statOnly?): with an errno (non-zero), every scan and member look fails with
// it; with statOnly, liveness is read from /proc/PID/stat alone. No arguments: scans are real.
Napi::Value ScanTestHook(const Napi::CallbackInfo& info) {
  int32_t e = 0;
  if (info.Length() > 0 && !info[0].IsUndefined() && !Int32Arg(info, 0, &e)) return Napi::Value();
  scan::g_inject.store(e < 0 ? -e : e, std::memory_order_relaxed);
  scan::g_stat_only.store(BoolArg(info, 1), std::memory_order_relaxed);
  return info.Env().Undefined();
}

}  // namespace

void InitScan(Napi::Env env, Napi::Object exports) {
  exports.Set("createScanMemory", Napi::Function::New(env, CreateScanMemory, "createScanMemory"));
  exports.Set("scanGroup", Napi::Function::New(env, ScanGroup, "scanGroup"));
  exports.Set("scanGroupSync", Napi::Function::New(env, ScanGroupSync, "scanGroupSync"));
  exports.Set("groupMemberLive", Napi::Function::New(env, GroupMemberLive, "groupMemberLive"));
  exports.Set("scanTestHook", Napi::Function::New(env, ScanTestHook, "scanTestHook"));
}

}  // namespace procpin
