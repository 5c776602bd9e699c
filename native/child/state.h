// The native side of a Child (or, for openProcess, of any process held by pidfd): what one
// handle holds, and the one state it is in. Glue: the files of this folder are its lifetimes.
//   state.h     the ChildState and its states (this file)
//   wait.cc     the waits (a peek, a reap) and the signals, by pidfd or provably-ours number
//   watch.cc    the exit watch on the event loop (uv_poll on the pidfd, a WNOWAIT timer without)
//   pidfd.cc    the private pidfd and the duplicate handed out as Child.pidfd
//   orphan.cc   the process-wide reaper of the children of an environment that is gone
//   handle.cc   the ObjectWrap, letting go of a child, teardown, openProcess, registration
//   leader.cc   what a process group needs of its leader: the group signal, end-kill, orphans
//   spawn_args.cc  spawn's arguments unpacked into a spawn::Request
//
// Ownership. A ChildState is owned by its environment's Registry; the JavaScript wrapper
// (ChildHandle) points at it and it points back. The exit callback is held strongly until it has
// been delivered, so a caller awaiting `exited` keeps the Child alive. When the wrapper is
// collected, or close() is called on a running child, the child is let go (see LetGo). The
// environment's cleanup hook (process exit, Worker teardown) releases everything.
//
// Identity is the pidfd. While one is held every wait is waitid(P_PIDFD) and every signal
// pidfd_send_signal, so a child that someone else reaped (a foreign waitpid(-1), SIGCHLD set to
// ignored) is seen as lost (ECHILD) and nothing ever reaches the process that got its number.
// Without a pidfd (Linux < 5.3) the number is used, only while the child is provably unreaped:
// its /proc/PID directory, opened at spawn, still finds it (a number reissued to another child of
// ours, a re-parented orphan when we are PID 1 or a subreaper, would pass the waitid alone, and a
// start time has only clock-tick resolution).
#pragma once

#include <napi.h>
#include <signal.h>
#include <sys/types.h>
#include <uv.h>

#include <cstdint>
#include <memory>
#include <unordered_set>

namespace procpin::child {

class ChildHandle;
struct ChildState;

// One per environment (the main thread and each Worker).
struct Registry {
  uintptr_t owner = 0;  // this environment, in the end-kill table
  uv_loop_t* loop = nullptr;
  bool main_thread = false;
  Napi::FunctionReference ctor;
  std::unordered_set<ChildState*> states;
};

// What the handle holds: a child of ours (spawn: waitable, reaped by us) or any process
// (openProcess: watched and signalled through its pidfd only, never waited for). Fixed at birth.
enum class Kind { kChild, kProcess };

// Where the process is, as this handle knows it. One value at a time; every change is one of
// the arrows below, and the code that makes it names the state it leaves.
//
//   kRunning ──exit seen (watch, reap)──> kExited ──reap()──> kReaped
//      │  └──────────────reap() of an exited child────────────────^
//      ├──let go (close(), wrapper collected)──> kLetGo ──exit seen: reaped at once──> kReaped
//      └── any wait says ECHILD (from kRunning, kExited or kLetGo) ──> kLost
//
// kRunning  Unreaped, its exit not seen yet. Pins its pid and, as a leader, its pgid.
// kExited   The exit was seen (an unreaped zombie): the status is still to be read by reap(), the
//           pid and pgid still ours. Signals to it do nothing, and may still be sent.
// kLetGo    Nobody will ask any more (close() while it runs, the wrapper collected, or never
//           made): still watched, unref'd, and reaped the moment it exits, so it never stays a
//           zombie. Still unreaped: its number is still ours.
// kReaped   We reaped it, or it is not ours to reap any more (handed to the orphan reaper, a
//           wait that failed otherwise): its number may name a stranger. Nothing is sent to it.
// kLost     Someone else reaped it (ECHILD): the status is gone, its number is not ours. The
//           pidfd, while held, still names the process it was (a leader's still addresses its
//           group with PIDFD_SIGNAL_PROCESS_GROUP); nothing is ever sent by number.
//
// A kProcess handle is only ever kRunning or kExited.
enum class State { kRunning, kExited, kLetGo, kReaped, kLost };

// The exit watch: a poll on the pidfd, or a timer that looks with WNOWAIT at a growing
// interval. At most one of poll and timer is set. `refed`: whether it keeps the loop alive.
struct Watch {
  uv_poll_t* poll = nullptr;
  uv_timer_t* timer = nullptr;
  uint64_t interval = 1;
  bool refed = true;
};

struct ChildState {
  Registry* reg = nullptr;
  napi_env env = nullptr;
  Kind kind = Kind::kChild;
  State state = State::kRunning;
  pid_t pid = -1;
  int pidfd = -1;     // private: watched by libuv, used for every wait and signal
  int pub_fd = -1;    // the duplicate handed out as Child.pidfd, made on first use
  int end_slot = -1;  // the end-kill table entry of a group leader
  // Without a pidfd: /proc/PID of the child, opened at spawn. The directory is bound to the
  // process, not to the number: once the child is reaped (by anyone) every lookup in it fails
  // with ESRCH, even when the number names another process. -1 with a pidfd, or when /proc is not
  // this pid namespace's; then `start` (its start time at spawn) is all there is.
  int procdir = -1;
  unsigned long long start = 0;
  Watch watch;
  Napi::FunctionReference cb;  // the exit callback, until delivered
  std::unique_ptr<Napi::AsyncContext> ctx;
  ChildHandle* wrap = nullptr;

  bool child() const { return kind == Kind::kChild; }
  // Still waitable by us: the pid (and the pgid it leads) cannot have been reissued.
  bool unreaped() const {
    return child() &&
           (state == State::kRunning || state == State::kExited || state == State::kLetGo);
  }
};

// wait.cc ------------------------------------------------------------------------------------
// waitid on our own child, through its pidfd when there is one, by pid otherwise. Async-signal
// safe (the end-kill table uses it).
int WaitChild(int pidfd, pid_t pid, siginfo_t* si, int options);
// Without a pidfd: what names the child besides its number (its /proc/PID directory, its start
// time), read at spawn.
void TakeIdentity(ChildState* s);
// A WNOHANG | WNOWAIT look at an unreaped child: 0 (si->si_pid 0 while it runs) or -errno.
// ECHILD makes it kLost.
int Peek(ChildState* s, siginfo_t* si);
// The reaping wait, WNOHANG: 0 with si->si_pid != 0 (now kReaped), 0 with si_pid 0 (still
// runs, nothing changed), or -errno (ECHILD: kLost). The end-kill table forgets the number first.
int Reap(ChildState* s, siginfo_t* si);
// A signal to the process: through the pidfd; by number only while a peek finds it unreaped.
int SignalProcess(ChildState* s, int sig);
// A signal to the group the child leads: through the pidfd with PIDFD_SIGNAL_PROCESS_GROUP when
// `pidfd_group` (bound to the group, also after a loss); else, or when the kernel refuses it, by
// number only while a peek finds the leader unreaped. 0 or -errno (-ESRCH: gone, not ours).
int SignalGroup(ChildState* s, int sig, bool pidfd_group);

// watch.cc -----------------------------------------------------------------------------------
int StartWatch(ChildState* s);   // 0, or -errno when a kProcess pidfd cannot be polled
void CloseWatch(ChildState* s);  // libuv forgets the descriptor now; memory freed later
void ApplyRef(ChildState* s);

// pidfd.cc -----------------------------------------------------------------------------------
int PublicPidfd(ChildState* s);  // the duplicate (made or made again), or -1
void ClosePublic(ChildState* s);
void ClosePidfd(ChildState* s);  // the watch, the end-kill entry, both descriptors

// orphan.cc ----------------------------------------------------------------------------------
// The process-wide reaper takes a running child of an environment that ends (and its pidfd,
// which may be -1).
void AdoptOrphan(pid_t pid, int pidfd);

// handle.cc ----------------------------------------------------------------------------------
// Frees the state (its descriptors, its callback) and detaches the wrapper.
void Dispose(ChildState* s);
// Nobody will ask about this unreaped child any more. See handle.cc.
int LetGo(ChildState* s, siginfo_t* si, bool env_ending);
// Makes the state of a spawned child (own) or an opened process, starts its watch, wraps it.
// end_kill >= 0: a group leader, armed in the end-kill table first (1: with the group signal
// through its pidfd). A number: -errno, nothing was made.
Napi::Value Adopt(Napi::Env env, Registry* reg, pid_t pid, int pidfd, Kind kind, Napi::Function cb,
                  int end_kill = -1);

// spawn_args.cc ------------------------------------------------------------------------------
Napi::Value Spawn(const Napi::CallbackInfo& info);

// leader.cc ----------------------------------------------------------------------------------
Napi::Value ReapGroupOrphans(const Napi::CallbackInfo& info);
int ArmEndKill(ChildState* s, bool pidfd_group);

}  // namespace procpin::child
