// The two ways a signal reaches a child or the group it leads, decided in one place: through the
// pidfd, which can only ever name that process (and, with PIDFD_SIGNAL_PROCESS_GROUP, its group);
// otherwise by number, and only while `ours()` proves the number still names it (the child is
// unreaped). Raw syscalls only: the end-kill table calls these from a signal handler, with an
// `ours` that is async-signal-safe too. Results are 0 or -errno.
#pragma once

#include <errno.h>
#include <signal.h>
#include <sys/types.h>

#include "../core/sys.h"

namespace procpin::signals {

// To the process. A pidfd decides unless the kernel has no pidfd_send_signal (ENOSYS).
template <class Ours>
int Process(int pidfd, pid_t pid, int sig, Ours ours) {
  if (pidfd >= 0) {
    int r = sys::PidfdSendSignal(pidfd, sig, 0);
    if (r != -ENOSYS) return r;
  }
  if (!ours()) return -ESRCH;
  return kill(pid, sig) == 0 ? 0 : -errno;
}

// To the group led by `pgid`. Through the pidfd when `pidfd_group` (the kernel takes the flag and
// the caller wants it): delivered, gone (ESRCH) or refused by a member (EPERM) decide; any other
// refusal falls through to the number, which an unreaped leader still pins.
template <class Ours>
int Group(int pidfd, pid_t pgid, int sig, bool pidfd_group, Ours ours) {
  if (pidfd_group && pidfd >= 0) {
    int r = sys::PidfdSendSignal(pidfd, sig, sys::kPidfdSignalProcessGroup);
    if (r == 0 || r == -ESRCH || r == -EPERM) return r;
  }
  if (!ours()) return -ESRCH;
  return kill(-pgid, sig) == 0 ? 0 : -errno;
}

}  // namespace procpin::signals
