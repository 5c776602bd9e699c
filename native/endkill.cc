// The supervisor's last words: see endkill.h. The hooks that read the table:
// - atexit: process.exit() from anywhere (another library's 'exit' listener included),
//   process.reallyExit, an uncaught exception, the end of the event loop; Node ends each with
//   exit(3), which runs them;
// - every signal whose default action ends the process (SIGABRT: abort(), a fatal V8 error,
//   out-of-memory; SIGSEGV and the other faults; SIGUSR2, SIGALRM, SIGXCPU, ...; SIGINT and
//   the other ending signals where no JavaScript listener took them over) while it still has
//   that default action: the handler kills, then chains the handler that was there before, or
//   restores the default action and raises again, so that the process still ends by it;
// - the environment's cleanup (child/handle.cc's Teardown calls KillOwner): a Worker that ends,
//   terminate() included, kills its own entries only;
// - lib/group/group.ts's listeners for SIGINT, SIGTERM, SIGHUP and SIGQUIT call KillAll when the
//   application has no listener of its own, then re-raise.
#include "endkill.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "child/signal.h"
#include "child/state.h"
#include "core/cgroup_rmdir.h"
#include "core/sys.h"
#include "glibc_floor.h"  // before any call to dladdr
#include "glue.h"

namespace procpin::endkill {

namespace {

enum Kind : int { kFree = 0, kClaimed = 1, kLeader = 2, kCgroupKill = 3 };
enum Flags : int { kPidfdGroup = 1, kByNumber = 2 };

struct Entry {
  std::atomic<int> kind{kFree};
  std::atomic<int> fd{-1};
  std::atomic<int> procdir{-1};  // without a pidfd: the leader's /proc/PID, held open
  std::atomic<int> pid{0};
  std::atomic<int> flags{0};
  std::atomic<uintptr_t> owner{0};
};

constexpr int kSlots = 16384;
Entry g_table[kSlots];
std::atomic<int> g_high{0};  // no slot at or above this was ever used
std::atomic<int> g_count{0};
std::atomic<bool> g_hooked{false};

// The directory of each cgroup.kill slot that has one: read and changed only outside signal
// context (registration, Remove, KillOwner at an environment's teardown), under its mutex. Made
// once and never destroyed: a Worker may end while the process runs its static destructors.
struct Dirs {
  std::mutex mu;
  std::unordered_map<int, std::string> by_slot;
};
Dirs& CgroupDirs() {
  static Dirs* dirs = new Dirs();
  return *dirs;
}

// How long an environment's teardown waits, in all, for the kernel to empty its cgroups after
// cgroup.kill (typically ~1.5 ms): what is not empty by then stays for the main thread's end or
// a sweep.
constexpr int64_t kEmptyWaitNs = 50 * 1000 * 1000;

// Whether the leader is still waitable (running, or a zombie that nobody reaped): only then
// does its number still name its group. Through its pidfd when there is one; without it, the
// number is its own only while its /proc/PID directory still answers (a foreign reap makes it
// ESRCH, whoever has the number now: another child of ours is waitable by that number too).
bool Unreaped(int fd, int procdir, pid_t pid) {
  if (pid <= 0) return false;
  if (fd < 0 && procdir >= 0) {
    struct stat st;
    int r = sys::StatAt(procdir, "comm", &st, 0);
    if (r == -ESRCH || r == -ENOENT) return false;
  }
  siginfo_t si;
  return child::WaitChild(fd, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

void KillEntry(Entry& e) {
  int kind = e.kind.load(std::memory_order_acquire);
  int fd = e.fd.load(std::memory_order_relaxed);
  if (kind == kCgroupKill) {
    if (fd >= 0) {
      ssize_t w = write(fd, "1", 1);
      (void)w;
    }
    return;
  }
  if (kind != kLeader) return;
  pid_t pid = e.pid.load(std::memory_order_relaxed);
  int procdir = e.procdir.load(std::memory_order_relaxed);
  int flags = e.flags.load(std::memory_order_relaxed);
  auto ours = [&] { return (flags & kByNumber) && Unreaped(fd, procdir, pid); };
  signals::Group(fd, pid, SIGKILL, (flags & kPidfdGroup) != 0, ours);
  // The leader itself, also when it left its group.
  signals::Process(fd, pid, SIGKILL, ours);
}

// The signals whose default action ends the process (and that the kernel lets a handler
// catch). Real-time signals are left alone: the flock wake-up takes a free one by its default
// disposition, and libraries do the same.
constexpr int kEnding[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
                           SIGFPE,  SIGUSR2, SIGSEGV,   SIGPIPE, SIGALRM, SIGTERM, SIGSTKFLT,
                           SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGSYS};
constexpr int kMaxSig = 65;
struct sigaction g_old[kMaxSig];

bool IsHandler(const struct sigaction& sa) {
  return (sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != nullptr
                                    : sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

void OnEnding(int sig, siginfo_t* info, void* ctx);

bool StillOurs(int sig) {
  struct sigaction cur;
  return sigaction(sig, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
         cur.sa_sigaction == OnEnding;
}

void CallOld(int sig, siginfo_t* info, void* ctx) {
  const struct sigaction& old = g_old[sig];
  // A handler installed with SA_RESETHAND (Node's own for SIGINT and SIGTERM) expects the
  // default action to be back when it runs, and raises the signal again.
  if (old.sa_flags & SA_RESETHAND) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
  }
  if (old.sa_flags & SA_SIGINFO) {
    old.sa_sigaction(sig, info, ctx);
  } else {
    old.sa_handler(sig);
  }
}

// The process is ending by `sig`: kill, then let the signal do what it did before.
void OnEnding(int sig, siginfo_t* info, void* ctx) {
  int saved = errno;
  const struct sigaction& old = g_old[sig];
  if (IsHandler(old) && (sig == SIGSEGV || sig == SIGBUS)) {
    // A handler that may recover (V8's WebAssembly trap handler): it runs first, and only a
    // fault that it gave up on (it put the default action back) ends the process.
    CallOld(sig, info, ctx);
    if (!StillOurs(sig)) KillAll();
    errno = saved;
    return;
  }
  KillAll();
  errno = saved;
  // Two copies of the addon may have chained each other (IsPeerCopy): a chain that comes back
  // here ends with the default action instead of going round.
  static std::atomic<bool> chaining{false};
  if (IsHandler(old) && !chaining.exchange(true)) {
    CallOld(sig, info, ctx);
    chaining.store(false);
    return;
  }
  // Put the default action back and raise again: `sig` is blocked in this handler, so it is
  // delivered as the handler returns (a real fault would also re-execute and die the same way).
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, IsHandler(old) ? &dfl : &old, nullptr);
  raise(sig);
}

// Whether `old` is the ending handler of another copy of this addon (a dependency's own nested
// procpin, loaded from another file): it is chained, as the fault signals' handlers are, so that
// each copy's table is killed. An application's (or libuv's) handler never is.
bool IsPeerCopy(const struct sigaction& old) {
  if (!(old.sa_flags & SA_SIGINFO) || old.sa_sigaction == nullptr) return false;
  Dl_info theirs, ours;
  if (!dladdr(reinterpret_cast<void*>(old.sa_sigaction), &theirs) || !theirs.dli_fname ||
      !dladdr(reinterpret_cast<void*>(&OnEnding), &ours) || !ours.dli_fname) {
    return false;
  }
  const char* base = strrchr(theirs.dli_fname, '/');
  base = base ? base + 1 : theirs.dli_fname;
  return strcmp(theirs.dli_fname, ours.dli_fname) != 0 && strncmp(base, "procpin", 7) == 0 &&
         strstr(base, ".node") != nullptr;
}

// Puts OnEnding on each ending signal that has the default action now, or (`first`) a handler
// that chains: an application's (or libuv's) handler is never replaced. SIGINT and SIGTERM
// carry Node's own reset-and-raise handler; the main thread's JavaScript listeners
// (lib/group/ending.ts) take the four ending signals over through libuv as soon as procpin is
// used there.
void Hook(bool first) {
  for (int sig : kEnding) {
    struct sigaction old;
    if (sigaction(sig, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == OnEnding) continue;
    bool chain =
        (first && (sig == SIGABRT || sig == SIGSEGV || sig == SIGBUS ||
                   ((sig == SIGINT || sig == SIGTERM) && (old.sa_flags & SA_RESETHAND)))) ||
        IsPeerCopy(old);
    if (old.sa_handler == SIG_IGN && !(old.sa_flags & SA_SIGINFO)) continue;
    if (IsHandler(old) && !chain) continue;
    g_old[sig] = old;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = OnEnding;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigfillset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

void InstallHooks() {
  bool expected = false;
  if (!g_hooked.compare_exchange_strong(expected, true)) return;
  atexit([] { KillAll(); });
  Hook(true);
}

int Claim(uintptr_t owner, int kind, int fd, pid_t pid, int flags, int procdir = -1) {
  InstallHooks();
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_table[i].kind.compare_exchange_strong(expected, kClaimed)) continue;
    Entry& e = g_table[i];
    e.fd.store(fd, std::memory_order_relaxed);
    e.procdir.store(procdir, std::memory_order_relaxed);
    e.pid.store(pid, std::memory_order_relaxed);
    e.flags.store(flags, std::memory_order_relaxed);
    e.owner.store(owner, std::memory_order_relaxed);
    e.kind.store(kind, std::memory_order_release);
    int high = g_high.load();
    while (high <= i && !g_high.compare_exchange_weak(high, i + 1)) {
    }
    g_count.fetch_add(1);
    return i;
  }
  return -1;
}

}  // namespace

int AddLeader(uintptr_t owner, int pidfd, int procdir, pid_t pid, bool pidfd_group,
              bool by_number) {
  return Claim(owner, kLeader, pidfd, pid,
               (pidfd_group ? kPidfdGroup : 0) | (by_number ? kByNumber : 0), procdir);
}

int AddCgroupKill(uintptr_t owner, int fd, const std::string& dir) {
  int slot = Claim(owner, kCgroupKill, fd, 0, 0);
  if (slot >= 0 && !dir.empty()) {
    Dirs& dirs = CgroupDirs();
    std::lock_guard<std::mutex> lock(dirs.mu);
    dirs.by_slot[slot] = dir;
  }
  return slot;
}

void ForgetNumber(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_table[slot].flags.fetch_and(~kByNumber);
}

void Remove(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  Entry& e = g_table[slot];
  if (e.kind.load(std::memory_order_acquire) == kCgroupKill) {
    Dirs& dirs = CgroupDirs();
    std::lock_guard<std::mutex> lock(dirs.mu);
    dirs.by_slot.erase(slot);
  }
  e.flags.store(0, std::memory_order_relaxed);
  e.fd.store(-1, std::memory_order_relaxed);
  e.procdir.store(-1, std::memory_order_relaxed);
  if (e.kind.exchange(kFree) > kClaimed) g_count.fetch_sub(1);
}

void KillOwner(uintptr_t owner) {
  int high = g_high.load();
  std::vector<int> cgroups;
  for (int i = 0; i < high; ++i) {
    int kind = g_table[i].kind.load(std::memory_order_acquire);
    if (kind <= kClaimed) continue;
    if (g_table[i].owner.load(std::memory_order_relaxed) != owner) continue;
    KillEntry(g_table[i]);
    if (kind == kCgroupKill) cgroups.push_back(i);
  }
  // The owner's JavaScript no longer runs: its emptied cgroups are removed here, and their slots
  // freed. Their cgroup.kill descriptors stay the caller's: a Worker's environment closes the
  // descriptors its JavaScript opened after its cleanup hooks (Node tracks them), so closing
  // them here would close them twice. One that is not empty by the deadline keeps its slot: the
  // process's end writes cgroup.kill again, and the main thread's end or a sweep removes it.
  std::vector<std::pair<int, std::string>> dirs;
  {
    Dirs& d = CgroupDirs();
    std::lock_guard<std::mutex> lock(d.mu);
    for (int slot : cgroups) {
      auto it = d.by_slot.find(slot);
      if (it != d.by_slot.end()) dirs.emplace_back(slot, it->second);
    }
  }
  int64_t deadline = cgroup::MonotonicNs() + kEmptyWaitNs;
  for (const auto& [slot, dir] : dirs) {
    if (cgroup::RemoveWhenEmpty(dir, deadline)) Remove(slot);
  }
}

void KillAll() {
  int high = g_high.load();
  for (int i = 0; i < high; ++i) KillEntry(g_table[i]);
}

int Count() { return g_count.load(); }

namespace {

uintptr_t Owner(Napi::Env env) { return reinterpret_cast<uintptr_t>(GetAddonData(env)); }

// endKillAll(): SIGKILL to everything in the table, now (the process is about to end).
Napi::Value EndKillAll(const Napi::CallbackInfo& info) {
  KillAll();
  return info.Env().Undefined();
}

// endKillRehook(): the application stopped listening for a signal (libuv put its default
// action back): hook the ending signals that have the default action again.
Napi::Value EndKillRehook(const Napi::CallbackInfo& info) {
  if (g_hooked.load()) Hook(false);
  return info.Env().Undefined();
}

Napi::Value EndKillCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), Count());
}

// endKillCgroup(fd, dir?) -> slot | -ENOSPC: write "1" to fd (a cgroup.kill) when this
// environment or the process ends; at this environment's end, also remove `dir` (the cgroup)
// once the kernel has emptied it. The descriptor stays the caller's throughout: the caller
// removes the slot before closing it (a Worker's environment closes it after its teardown).
Napi::Value EndKillCgroup(const Napi::CallbackInfo& info) {
  int32_t fd;
  if (!Int32Arg(info, 0, &fd)) return Napi::Value();
  bool has_dir = info.Length() >= 2 && !info[1].IsUndefined();
  if (has_dir && !info[1].IsString()) {
    Napi::TypeError::New(info.Env(), "argument 1 must be a string").ThrowAsJavaScriptException();
    return Napi::Value();
  }
  if (fd < 0) return Result(info.Env(), -EBADF);
  std::string dir = has_dir ? info[1].As<Napi::String>().Utf8Value() : std::string();
  int slot = AddCgroupKill(Owner(info.Env()), fd, dir);
  return Result(info.Env(), slot < 0 ? -ENOSPC : slot);
}

Napi::Value EndKillRemove(const Napi::CallbackInfo& info) {
  int32_t slot;
  if (!Int32Arg(info, 0, &slot)) return Napi::Value();
  Remove(slot);
  return info.Env().Undefined();
}

}  // namespace

}  // namespace procpin::endkill

namespace procpin {

void InitEndKill(Napi::Env env, Napi::Object exports) {
  using namespace endkill;
  SetFunctions(env, exports,
               {{"endKillAll", EndKillAll},
                {"endKillCount", EndKillCount},
                {"endKillRehook", EndKillRehook},
                {"endKillCgroup", EndKillCgroup},
                {"endKillRemove", EndKillRemove}});
}

}  // namespace procpin
