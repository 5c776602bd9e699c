// The private pidfd and the duplicate handed out as Child.pidfd. The watched descriptor stays
// private, so that closing the handed-out one behind procpin's back can neither pull a
// descriptor from under libuv's epoll nor make procpin act on whatever descriptor got the number
// next: the duplicate is checked to still name this process before procpin closes it, and is
// made again when it does not.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/sys.h"
#include "../endkill.h"
#include "state.h"

namespace procpin::child {

namespace {

// fstat through the core's raw stat (glibc 2.33 moved fstat into libc proper).
int FdStat(int fd, struct stat* st) { return sys::StatAt(fd, "", st, AT_EMPTY_PATH); }

// The "Pid:" line of descriptor n's fdinfo.
bool PidLine(int n, char* out, size_t len) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", n);
  int f = open(path, O_RDONLY | O_CLOEXEC);
  if (f < 0) return false;
  char buf[1024];
  ssize_t r = read(f, buf, sizeof buf - 1);
  close(f);
  if (r <= 0) return false;
  buf[r] = '\0';
  const char* p = strstr(buf, "\nPid:");
  if (!p) return false;
  p += 1;
  size_t i = 0;
  while (p[i] && p[i] != '\n' && i + 1 < len) {
    out[i] = p[i];
    ++i;
  }
  out[i] = '\0';
  return true;
}

// Whether descriptor `fd` is still our duplicate of the private pidfd: one open file description
// with it (kcmp), so that another pidfd of the same process, the application's own that took the
// number, is not ours. Where kcmp is refused: the same inode (on 6.9+ a pidfd's inode identifies
// its process) and the same "Pid:" in its fdinfo (before 6.9 every pidfd shares one anonymous
// inode). Anything else is someone else's descriptor now.
bool SameProcessFd(const ChildState* s, int fd) {
  int same = sys::SameOpenFile(fd, s->pidfd);
  if (same >= 0) return same == 1;
  struct stat a, b;
  if (FdStat(fd, &a) != 0 || FdStat(s->pidfd, &b) != 0) return false;
  if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) return false;
  char la[64], lb[64];
  return PidLine(fd, la, sizeof la) && PidLine(s->pidfd, lb, sizeof lb) && strcmp(la, lb) == 0;
}

}  // namespace

// Made on first use, and again when the one handed out was closed and its number reused behind
// our back. Numbered above the private one, so that the lowest free number after a close is not
// it.
int PublicPidfd(ChildState* s) {
  if (s->pidfd < 0) return -1;
  if (s->pub_fd >= 0 && !SameProcessFd(s, s->pub_fd)) s->pub_fd = -1;
  if (s->pub_fd < 0) s->pub_fd = fcntl(s->pidfd, F_DUPFD_CLOEXEC, s->pidfd + 1);
  return s->pub_fd < 0 ? -1 : s->pub_fd;
}

// Closes the handed-out duplicate, unless it was closed behind our back and the number now
// names something else (then it is not ours to close).
void ClosePublic(ChildState* s) {
  if (s->pub_fd < 0) return;
  if (s->pidfd >= 0 && SameProcessFd(s, s->pub_fd)) close(s->pub_fd);
  s->pub_fd = -1;
}

void ClosePidfd(ChildState* s) {
  CloseWatch(s);                 // never close a descriptor libuv still watches
  endkill::Remove(s->end_slot);  // before the descriptor it names is closed
  s->end_slot = -1;
  ClosePublic(s);
  if (s->pidfd >= 0) {
    close(s->pidfd);
    s->pidfd = -1;
  }
  if (s->procdir >= 0) {
    close(s->procdir);
    s->procdir = -1;
  }
}

}  // namespace procpin::child
