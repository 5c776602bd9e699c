// What a process group needs of its leader's handle (lib/group): the group signal, beside the
// process signal in wait.cc and decided in the same place; whether the leader is still in its
// group; its entry in the end-kill table, made by the spawn; and, for a subreaper, the reap of
// members it inherits.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "../core/sys.h"
#include "../endkill.h"
#include "../glue.h"
#include "handle.h"

namespace procpin::child {

// signalGroup(sig, pidfdGroup): 0 or -errno (-ESRCH: the group is gone or no longer provably
// ours, -EPERM: a member refused). See SignalGroup in state.h.
Napi::Value ChildHandle::SignalGroup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t sig;
  if (!Int32Arg(info, 0, &sig)) return Napi::Value();
  if (!state_) return Result(env, -ESRCH);
  return Result(env, child::SignalGroup(state_, sig, BoolArg(info, 1)));
}

// inGroup(): 1 while the unreaped leader is still in the group it leads, 0 once it left it
// (setpgid), -errno when it cannot be told (reaped: its number is not ours).
Napi::Value ChildHandle::InGroup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ChildState* s = state_;
  if (!s || !s->unreaped()) return Result(env, -ESRCH);
  pid_t g = getpgid(s->pid);
  if (g < 0) return Result(env, -errno);
  return Result(env, g == s->pid ? 1 : 0);
}

// Puts a just-spawned leader in the end-kill table (its group dies with this environment and
// with the process, however they end), before any JavaScript runs. 0, or -EAGAIN when the table
// is full.
int ArmEndKill(ChildState* s, bool pidfd_group) {
  if (s->end_slot >= 0) return 0;
  s->end_slot = endkill::AddLeader(s->reg->owner, s->pidfd, s->procdir, s->pid, pidfd_group, true);
  return s->end_slot < 0 ? -EAGAIN : 0;
}

// reapGroupOrphans(pgid, leader) -> children of ours still alive in group `pgid`, or -errno.
// For a supervisor that is a subreaper or PID 1: members re-parented to it become its zombies.
// Reaps every zombie child of this process in the group but its leader, whose zombie (unreaped
// until the group's own reap) pins the pgid, so that each waitid by pid names what we saw.
// Children are read from /proc/self/task/*/children (a re-parented child hangs off a thread).
Napi::Value ReapGroupOrphans(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int32_t pgid, leader;
  if (!Int32Arg(info, 0, &pgid) || !Int32Arg(info, 1, &leader)) return Napi::Value();
  DIR* task_dir = opendir("/proc/self/task");
  if (task_dir == nullptr) return Result(env, -errno);
  std::vector<pid_t> kids;
  std::vector<pid_t> tids;
  while (struct dirent* d = readdir(task_dir)) {
    if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
      tids.push_back(static_cast<pid_t>(atoi(d->d_name)));
  }
  closedir(task_dir);
  for (pid_t tid : tids) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", tid);
    int f = open(path, O_RDONLY | O_CLOEXEC);
    if (f < 0) continue;
    std::string text;
    char buf[4096];
    for (ssize_t r; (r = read(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(r));
    close(f);
    for (const char* p = text.c_str(); *p;) {
      char* end;
      long v = strtol(p, &end, 10);
      if (end == p) break;
      kids.push_back(static_cast<pid_t>(v));
      p = end;
    }
  }
  int alive = 0;
  for (pid_t kid : kids) {
    if (kid == leader || getpgid(kid) != pgid) continue;
    // Our child, unreaped (it is listed): its number is still its own.
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = sys::Waitid(P_PID, static_cast<unsigned>(kid), &si, WEXITED | WNOHANG);
    if (r == 0 && si.si_pid == 0) ++alive;
  }
  return Result(env, alive);
}

}  // namespace procpin::child
