// Whether the owner a sweep candidate names is still alive, asked of the kernel first and of
// /proc/PID/stat after.
#pragma once

#include <cstdint>

namespace procpin::sweep {

// Is `pid` a live process here? kill(pid, 0): ESRCH is dead, EPERM a live process of another
// user (live: deleting under a stranger is worse than one stale name). Success can still be a
// zombie, which is dead: the kernel says so through a pidfd (readable once exited), or else its
// state in /proc/PID/stat. `procfd` is -1 when /proc is missing or another pid namespace's: its
// entries then name other processes, and only the kernel is asked. When nothing can tell, live.
bool PidAlive(int procfd, int32_t pid);

}  // namespace procpin::sweep
