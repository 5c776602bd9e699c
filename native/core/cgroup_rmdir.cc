// Removing an emptied cgroup after cgroup.kill: see cgroup_rmdir.h.
#include "cgroup_rmdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace procpin::cgroup {

int64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

namespace {

// Removes a cgroup directory and its sub-cgroups, bottom-up, without following links (a cgroup
// tree holds none). 0, or -errno of the first rmdir that failed; a missing directory is gone.
int RmdirTree(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -errno;
  std::vector<std::string> subs;
  if (DIR* d = fdopendir(fd)) {  // owns fd from here, closed by closedir
    while (struct dirent* ent = readdir(d)) {
      if (ent->d_type != DT_DIR || strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
        continue;
      subs.push_back(dir + "/" + ent->d_name);
    }
    closedir(d);
  } else {
    close(fd);
  }
  for (const std::string& sub : subs) RmdirTree(sub);
  if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return 0;
  return -errno;
}

// 1: cgroup.events says `populated 0`; 0: populated; -errno: unreadable (ENOENT: gone).
int Emptied(int events) {
  char buf[256];
  ssize_t n = pread(events, buf, sizeof buf - 1, 0);
  if (n < 0) return -errno;
  buf[n] = 0;
  return strstr(buf, "populated 0") != nullptr ? 1 : 0;
}

}  // namespace

// After cgroup.kill: waits (poll: kernfs signals a change of cgroup.events with POLLPRI) until
// the cgroup is empty or `deadline` has passed, then removes it. True when it is gone.
bool RemoveWhenEmpty(const std::string& dir, int64_t deadline) {
  std::string path = dir + "/cgroup.events";
  int events = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (events < 0) return errno == ENOENT;  // removed already (the main thread's 'exit' hook)
  bool gone = false;
  for (;;) {
    int e = Emptied(events);
    if (e == -ENODEV || e == -ENOENT) {
      gone = true;
      break;
    }
    if (e == 1 && RmdirTree(dir) == 0) {
      gone = true;
      break;
    }
    int64_t left = deadline - MonotonicNs();
    if (e < 0 || left <= 0) break;
    struct pollfd pfd = {events, POLLPRI, 0};
    // Also when populated 0 but rmdir failed (a sub-cgroup was just made): look again soon.
    int ms = e == 1 ? 1 : static_cast<int>((left + 999999) / 1000000);
    int r = poll(&pfd, 1, ms);
    if (r < 0 && errno != EINTR) break;
  }
  close(events);
  return gone;
}

}  // namespace procpin::cgroup
