#include "liveness.h"

#include <errno.h>
#include <signal.h>

#include "proc.h"
#include "sys.h"

namespace procpin::sweep {

bool PidAlive(int procfd, int32_t pid) {
  if (kill(pid, 0) != 0) return errno != ESRCH;
  int exited = sys::ExitedByKernel(pid);
  if (exited >= 0) return exited == 0;
  if (procfd < 0) return true;
  return proc::ExitedByStat(procfd, pid) != 1;  // unreadable or unparseable: live
}

}  // namespace procpin::sweep
