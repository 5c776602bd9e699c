// See scan.h for the contract.
#include "scan.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "dir.h"
#include "proc.h"
#include "sys.h"

namespace procpin::scan {

namespace {

#ifdef PROCPIN_TEST_HOOKS
std::atomic<int> g_inject{0};
std::atomic<bool> g_stat_only{false};
inline int Injected() { return g_inject.load(std::memory_order_relaxed); }
inline bool StatOnly() { return g_stat_only.load(std::memory_order_relaxed); }
#else
constexpr int Injected() { return 0; }
constexpr bool StatOnly() { return false; }
#endif

// 1 when `pid` has exited (a zombie, or reaped meanwhile), 0 while it lives, -errno when /proc
// cannot tell.
int HasExited(int procfd, pid_t pid) {
  // First the cheap look (about a third of a stat read of a process not read before, no path
  // walk): a pidfd polls readable once the whole process has exited. Without pidfd_open (before
  // 5.3, or out of descriptors) the state in stat decides.
  if (!StatOnly()) {
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
  return proc::ExitedByStat(procfd, pid);
}

// Whether `pid` is a live member of `pgid`: 1 yes, 0 no, -errno when /proc cannot tell.
int MemberLive(int procfd, pid_t pgid, pid_t pid) {
  // getpgid(2) works on any pid, zombies too; ESRCH: it exited and was reaped meanwhile.
  if (syscall(SYS_getpgid, pid) != pgid) return 0;
  int exited = HasExited(procfd, pid);
  return exited < 0 ? exited : 1 - exited;
}

// /proc, ours: its descriptor, or -errno (a foreign /proc cannot tell: members may exist, the
// grace runs its course).
int OpenProc() {
  int injected = Injected();
  if (injected != 0) return -injected;
  return proc::OpenProc();
}

}  // namespace

int IsMember(pid_t pgid, pid_t pid) {
  if (pgid <= 0 || pid <= 0) return -EINVAL;
  int procfd = OpenProc();
  if (procfd < 0) return procfd;
  int r = MemberLive(procfd, pgid, pid);
  close(procfd);
  return r;
}

int CountMembers(pid_t pgid, int limit, pid_t* first, ZombieMemory* memory) {
  *first = 0;
  if (pgid <= 0 || limit < 1) return -EINVAL;
  int procfd = OpenProc();
  if (procfd < 0) return procfd;

  // Every pid first (getdents64 lists them in ascending order), then walk them backwards.
  std::vector<std::pair<pid_t, uint64_t>> pids;
  pids.reserve(2048);
  alignas(8) char buf[16384];
  int result = dir::ForEachEntry(procfd, buf, sizeof buf,
                                 [&](const char* name, unsigned char, uint64_t ino) {
                                   pid_t pid = proc::ParsePid(name);
                                   if (pid != 0) pids.emplace_back(pid, ino);
                                 });

  std::vector<std::pair<pid_t, uint64_t>> zombies;
  int found = 0;
  for (size_t i = pids.size(); result == 0 && i-- > 0;) {
    const auto& entry = pids[i];
    // getpgid(2) works on any pid, zombies too; ESRCH: it exited and was reaped meanwhile.
    if (syscall(SYS_getpgid, entry.first) != pgid) continue;
    if (memory != nullptr && std::binary_search(memory->seen.begin(), memory->seen.end(), entry)) {
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

#ifdef PROCPIN_TEST_HOOKS
void SetTestHook(int err, bool stat_only) {
  g_inject.store(err, std::memory_order_relaxed);
  g_stat_only.store(stat_only, std::memory_order_relaxed);
}
#endif

}  // namespace procpin::scan
