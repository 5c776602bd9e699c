// One cancellable flock wait as its thread and the JS thread share it: the Waiter (the dup, the
// result, the flags), the Mailbox where finished threads leave their ids, the process-wide list
// of waits not yet delivered, and the thread itself. The ownership rules (a)-(e) are stated at
// the top of native/flock_wait.cc.
#pragma once

#include <sys/types.h>
#include <uv.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "../core/flock_wake.h"
#include "../core/sys.h"

namespace procpin::flock {

// Intrusive reference count: the JS thread and the waiting thread each hold one.
template <typename T>
struct Counted {
  std::atomic<int> refs{1};
  void Ref() { refs.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete static_cast<T*>(this);
  }
};

// One wait. Shared by the JS thread and the waiting thread; every field below `op` is guarded
// by `mu`.
struct Waiter : Counted<Waiter> {
  int op = 0;
  bool blocking = true;  // false: no wake signal of ours, poll with LOCK_NB
  int wake_sig = 0;      // the signal that interrupts a blocked flock (when blocking)
  uv_thread_t thread{};  // joinable: joined on the JS thread, see (e)
  std::mutex mu;
  int fd = -1;    // our dup; see (b)
  pid_t tid = 0;  // the thread's id for tgkill, set by the thread itself
  bool started = false;
  bool finished = false;  // the thread has its result and will not touch the lock again
  bool cancelled = false;
  // Given up on while still blocked: the wake signal stopped being ours (the application set a
  // disposition of its own for it meanwhile), so no kick can interrupt this flock. The caller is
  // told ECANCELED at once; the thread unlocks and closes the dup itself whenever flock returns
  // (it sees `cancelled`), and is never joined: this library is pinned for the life of the
  // process (child/handle.cc), so the thread can never run unmapped code.
  bool abandoned = false;
  int result = 0;

  // Unlocks (when `unlock`) and closes the dup if it is still open. Caller holds mu.
  void ReleaseFd(bool unlock) {
    if (fd < 0) return;
    if (unlock) sys::FlockOnce(fd, LOCK_UN);
    close(fd);
    fd = -1;
  }
  // Whether a kick can still interrupt a blocked flock. Caller holds mu.
  bool Kickable() const { return blocking && WakeSignalIsOurs(wake_sig); }
  // Interrupts a blocked flock. Caller holds mu; the thread is not joined before `finished`,
  // so its id cannot have been reused here.
  void Kick() {
    // Never a signal for the application's own handler: only while the wake signal is ours.
    if (blocking && started && !finished && tid > 0 && Kickable()) {
      KickThread(tid, wake_sig);
    }
  }
  ~Waiter() { ReleaseFd(false); }
};

// Where finished threads leave their ids for the JS thread. `open` turns false (under mu)
// before the async handle is closed, so no thread signals a closed handle.
struct Mailbox : Counted<Mailbox> {
  std::mutex mu;
  bool open = true;
  uv_async_t* async = nullptr;
  std::vector<uint32_t> done;
};

// Every wait not yet delivered, in every environment of the process (JS threads only), so that a
// second wait on an open file description that already has one is refused: flock(2) grants a
// description that holds the lock at once, so an abort of the second wait, which must leave no
// lock taken, would drop the lock the first one was granted.
extern std::mutex g_pending_mu;
extern std::vector<Waiter*> g_pending;

// A wait that is still pending on the description behind `fd`. Caller holds g_pending_mu.
bool PendingOn(int fd);

// Takes `w` off the pending list (it was delivered, given up on, or torn down).
void RemovePending(Waiter* w);

// What a thread is started with; it owns one reference to each.
struct Job {
  Waiter* waiter;
  Mailbox* mailbox;
  uint32_t id;
};

// The thread's body: `arg` is a Job it takes over (and deletes). Waits for the lock (blocking,
// or polling with LOCK_NB when there is no wake signal of ours), records the result, leaves
// its id in the mailbox and drops its references.
void WaitThread(void* arg);

}  // namespace procpin::flock
