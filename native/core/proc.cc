#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <cstring>

#include "sys.h"

namespace procpin::proc {

namespace {

// "PID/stat" into path (at least 24 bytes), without stdio.
void StatPath(char* path, pid_t pid) {
  char digits[12];
  int nd = 0, len = 0;
  for (unsigned v = static_cast<unsigned>(pid); v != 0; v /= 10) digits[nd++] = '0' + v % 10;
  while (nd > 0) path[len++] = digits[--nd];
  std::memcpy(path + len, "/stat", sizeof "/stat");
}

// A decimal number at *p (an optional '-' first), moving *p past it; false when none is there.
bool Number(const char** p, const char* end, int64_t* out) {
  const char* s = *p;
  bool neg = s < end && *s == '-';
  if (neg) ++s;
  if (s >= end || *s < '0' || *s > '9') return false;
  uint64_t v = 0;
  for (; s < end && *s >= '0' && *s <= '9'; ++s) {
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<unsigned>(*s - '0');
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return false;
  *out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  *p = s;
  return true;
}

}  // namespace

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

bool ParseStat(const char* text, size_t n, Stat* out) {
  const char* end = text + n;
  const char* paren = nullptr;
  for (const char* p = end; p-- > text;) {
    if (*p == ')') {
      paren = p;
      break;
    }
  }
  // ") S ": the state follows the name after one space.
  if (paren == nullptr || end - paren < 3 || paren[1] != ' ') return false;
  out->state = paren[2];
  // Fields 4 (ppid) to 22 (starttime), each after one space.
  const char* p = paren + 3;
  int64_t fields[19];
  for (int64_t& f : fields) {
    if (p >= end || *p != ' ') return false;
    ++p;
    if (!Number(&p, end, &f)) return false;
  }
  out->ppid = static_cast<pid_t>(fields[0]);
  out->pgid = static_cast<pid_t>(fields[1]);
  out->session = static_cast<pid_t>(fields[2]);
  out->start_time = static_cast<uint64_t>(fields[18]);
  return true;
}

int OpenProc() {
  int fd =
      static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd < 0) return -errno;
  int ours = sys::ProcIsOurs(fd);
  if (ours != 1) {
    close(fd);
    return ours < 0 ? ours : -EXDEV;
  }
  return fd;
}

int ReadStat(int procfd, pid_t pid, Stat* out) {
  if (pid <= 0) return -EINVAL;
  char path[24];
  StatPath(path, pid);
  int fd = static_cast<int>(syscall(SYS_openat, procfd, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
  // The line is a few hundred bytes at most: the command name is at most 64 bytes (TASK_COMM_LEN
  // is 16; kernel threads' names can be longer), every other field a number.
  char buf[1024];
  ssize_t n;
  do {
    n = read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  close(fd);
  // Reading a reaped task's stat gives ESRCH; an empty read, a task gone meanwhile.
  if (n < 0) return saved == ESRCH || saved == ENOENT ? -ESRCH : -saved;
  if (n == 0) return -ESRCH;
  return ParseStat(buf, static_cast<size_t>(n), out) ? 0 : -EBADMSG;
}

int ExitedByStat(int procfd, pid_t pid) {
  Stat st;
  int r = ReadStat(procfd, pid, &st);
  if (r == -ESRCH) return 1;
  if (r == -EBADMSG) return st.state != '?' && ExitedState(st.state) ? 1 : 0;
  if (r < 0) return r;
  return ExitedState(st.state) ? 1 : 0;
}

}  // namespace procpin::proc
