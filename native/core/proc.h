// The one /proc reader of the core: /proc itself (checked to be our pid namespace's), the fields
// of /proc/PID/stat that procpin uses, and liveness as that file tells it. The sweep (is a
// pidfile's owner alive?), the group scan (is a member a zombie?) and lib/proc.ts (the command
// line's watch of a pid without a pidfd) all read it here.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace procpin::proc {

// The fields of /proc/PID/stat procpin reads (proc_pid_stat(5): fields 3-6 and 22).
struct Stat {
  char state = '?';  // R, S, D, T, t, Z, X, ...
  pid_t ppid = 0;
  pid_t pgid = 0;
  pid_t session = 0;
  uint64_t start_time = 0;  // clock ticks after boot: with the pid, names one process
};

// Whether a state letter is that of a process that has exited: a zombie (Z) or dead (X; x
// before 3.14).
inline bool ExitedState(char state) { return state == 'Z' || state == 'X' || state == 'x'; }

// A decimal pid as /proc names its entries (no sign, no leading zero, > 0, within pid_t), or 0
// for any other name.
pid_t ParsePid(const char* s);

// Parses the text of a /proc/PID/stat (`n` bytes, not necessarily NUL-terminated). The command
// name may hold anything, ')' and spaces included, and every field after it is a number, so the
// last ')' ends it. false when the text does not have that shape; out->state is then still
// filled when it could be found.
bool ParseStat(const char* text, size_t n, Stat* out);

// Opens /proc (O_DIRECTORY | O_CLOEXEC) and checks that it is this process's pid namespace's
// (sys::ProcIsOurs): a /proc of another namespace names other processes by our numbers. The
// descriptor, -EXDEV for a foreign /proc, or -errno.
int OpenProc();

// Reads /proc/PID/stat relative to the /proc open as `procfd`. 0; -ESRCH when there is no such
// process (it exited and was reaped); -EBADMSG when the text cannot be parsed (out->state may
// still be filled); -errno otherwise.
int ReadStat(int procfd, pid_t pid, Stat* out);

// Whether `pid` has exited as its stat tells: 1 exited (a zombie, dead, or gone), 0 live (an
// unparseable line counts as live), -errno when the file cannot be read.
int ExitedByStat(int procfd, pid_t pid);

}  // namespace procpin::proc
