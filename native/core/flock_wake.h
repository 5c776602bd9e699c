// The kernel side of a cancellable flock(2): the wake signal that interrupts a blocked flock on
// its thread, the kick itself, and whether two descriptors share one open file description.
// Libc and raw syscalls only; the threads and their bookkeeping are the glue's (native/flock/).
#pragma once

#include <sys/types.h>

namespace procpin::flock {

// The wake signal: a real-time signal whose disposition was the default (nobody's) when the first
// wait needed one, from SIGRTMAX-1 downwards, given a no-op handler without SA_RESTART so that a
// blocked flock returns EINTR. Chosen once for the process, and never given back: the handler
// lives in this library, which child/handle.cc pins for the life of the process, so it can stay
// installed, and restoring SIG_DFL later could overwrite a handler that the application set
// meanwhile. A signal that somebody else took after we chose it is left to them (the waits then
// poll with LOCK_NB). When every candidate is taken, the waits poll too.
// The wake signal, or 0 when the waits must poll.
int AcquireWakeSignal();

// Whether `sig`'s disposition is still our no-op handler (the application may have installed a
// handler of its own over it since).
bool WakeSignalIsOurs(int sig);

// Sends `sig` to the thread `tid` of this process (tgkill).
void KickThread(pid_t tid, int sig);

// Whether descriptors a and b share one open file description. kcmp(2) says so exactly; where
// it is missing or refused (CONFIG_KCMP off, a seccomp policy: it belongs to the ptrace family),
// the same file counts as the same description, which refuses more than it must, never less.
bool SameDescription(int a, int b);

// Sleeps `us` microseconds (a polling waiter's pause).
void SleepMicros(long us);

}  // namespace procpin::flock
