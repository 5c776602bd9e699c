// The spawn core: starting a child without JavaScript. The child shares our memory and runs on a
// stack of its own (clone with CLONE_VM | CLONE_VFORK, glibc's posix_spawn technique), so a spawn
// costs the same whatever the size of the parent, and its pidfd comes back atomically with it
// (CLONE_PIDFD) where the kernel allows. Between clone and execve the child makes only raw,
// async-signal-safe system calls; any failure is stored in memory shared with the parent, which
// reads it when clone returns and reaps the failed child before reporting.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace procpin::spawn {

// Where a spawn failed: the parent (before or in clone) or a step in the child, in step order.
enum Stage : int {
  kStageNone = 0,
  kStageSpawn,      // stack, pipes, clone itself
  kStageCgroup,     // joining the cgroup (contain: 'cgroup')
  kStageSetpgid,    // processGroup 'new'
  kStageSetsid,     // processGroup 'session'
  kStagePdeathsig,  // prctl(PR_SET_PDEATHSIG)
  kStageStdio,      // moving and duplicating the stdio descriptors
  kStageCloseFds,   // close_range (or its loop)
  kStageSignals,    // dispositions and mask
  kStageChdir,
  kStageExecve,
  kStageSetgid,    // options.gid
  kStageSetuid,    // options.uid
  kStageNonblock,  // clearing O_NONBLOCK on an inherited 0-2
};

enum ProcessGroup : int { kGroupNew = 0, kGroupSession = 1, kGroupInherit = 2 };

// What the child's descriptor i becomes.
enum StdioKind : int {
  kStdioPipe = -1,    // a new pipe (0: the child reads; 1, 2: it writes) or socketpair (3+)
  kStdioIgnore = -2,  // 0-2: /dev/null; 3+: closed
  kStdioClose = -3,   // closed in the child
  // >= 0: that descriptor of the parent (0-2 mapped to themselves is 'inherit').
};

struct Request {
  // Paths to try in order, as execvp would (the PATH search is done by the caller):
  // ENOENT, ENOTDIR, ESTALE, ENODEV and ETIMEDOUT go on to the next one, EACCES is remembered
  // and reported if nothing else works, any other error stops the search.
  const char* const* candidates = nullptr;
  size_t ncandidates = 0;
  char* const* argv = nullptr;  // NULL-terminated
  // For a candidate the kernel does not recognise as an executable (ENOEXEC), execvp runs
  // /bin/sh with the candidate's path as its first argument: argc + 2 slots, the child fills
  // in slot 1 (nullptr: no such fallback).
  char** sh_argv = nullptr;
  char* const* envp = nullptr;  // NULL-terminated
  const char* cwd = nullptr;    // nullptr: the parent's
  int group = kGroupNew;
  int pdeathsig = 0;  // 0: none
  // A cgroup's cgroup.procs, opened for writing: the child moves itself there first, before
  // anything else runs (-1: stay in the parent's cgroup).
  int cgroup_procs = -1;
  bool close_fds = true;       // close every descriptor above the stdio ones
  const int* stdio = nullptr;  // per child fd: a StdioKind or a parent descriptor
  int nstdio = 0;
  // Credentials set in the child after chdir, as libuv orders them: setgroups(0) (best effort:
  // it fails unprivileged), setgid, setuid. -1: unchanged.
  long uid = -1;
  long gid = -1;
};

struct Outcome {
  pid_t pid = -1;
  int pidfd = -1;  // -1 when the kernel has no pidfds
  int err = 0;     // 0, or the positive errno of the failed step
  int stage = kStageNone;
  // The parent's ends of kStdioPipe entries (O_CLOEXEC), -1 elsewhere; nstdio entries. The
  // caller owns them on success; on failure they are already closed.
  int* parent_fds = nullptr;
};

// Starts the child. Returns 0 (out->pid, out->pidfd, out->parent_fds filled) or -errno with
// out->err and out->stage set; a child that started and failed is reaped before this returns.
// The caller must have checked that SIGCHLD is not ignored (otherwise the failed child's status
// is lost, and so is every later exit status).
int Spawn(const Request& req, Outcome* out);

}  // namespace procpin::spawn
