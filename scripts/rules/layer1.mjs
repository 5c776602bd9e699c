// The SPEC rules of one part: Layer 1: the kernel's primitives.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_LAYER1 = [
  // --- Layer 1 -----------------------------------------------------------------------------
  {
    id: 'L1.constants',
    rule: 'constants carry the kernel ABI values',
    section: 'Layer 1',
    tests: ["'constants carry the kernel ABI values"],
  },
  {
    id: 'L1.waitid.wnowait',
    rule: 'waitid with WNOWAIT reports the exit and leaves the child a zombie',
    section: 'Layer 1',
    tests: ["'waitid with WNOWAIT leaves the child a zombie"],
  },
  {
    id: 'L1.waitid.info',
    rule: "WaitInfo mirrors siginfo_t and adds exitCode/signal as ChildProcess's 'exit' has them",
    section: 'Layer 1',
    tests: [
      "'waitid reports an exit code, and a signal death as CLD_KILLED",
      "'waitid reports stops and continuations",
      "'waitid(P_PGID) waits for a member of that process group",
      "'waitid without WNOHANG on a process that is not our child fails with ECHILD",
    ],
  },
  {
    id: 'L1.kernel.accepts',
    rule: 'What the kernel accepts is accepted: signals 32/33, PIDFD_SELF_*, __WALL/__WCLONE/__WNOTHREAD',
    section: 'Layer 1',
    tests: [
      "'signals 32 and 33 are taken by number and by name",
      "'a child killed by signal 32 or 33 reports its signal by name",
      "'pidfdSendSignal takes PIDFD_SELF_THREAD and PIDFD_SELF_THREAD_GROUP",
      "'waitid takes __WALL, __WCLONE and __WNOTHREAD",
    ],
  },
  {
    id: 'L1.kernel.eintr',
    rule: 'EINTR from a blocking flockSync or waitid comes back unchanged',
    section: 'Layer 1',
    tests: ['`a blocking ${call} interrupted by a handler without SA_RESTART throws EINTR`'],
  },
  {
    id: 'L1.pidfd.open',
    rule: 'pidfdOpen returns an O_CLOEXEC pidfd that reports the exit before the reap',
    section: 'Layer 1',
    tests: [
      "'a pidfd names its process in fdinfo, reports the exit before the reap",
      "'a PIDFD_NONBLOCK pidfd makes a blocking waitid",
      '"a Worker\'s pidfd closed with closeRange(fd, fd)',
    ],
  },
  {
    id: 'L1.pidfd.send',
    rule: 'pidfdSendSignal is the syscall, flags included',
    section: 'Layer 1',
    tests: [
      "'pidfdSendSignal delivers a signal by name or number and probes with 0",
      "'pidfd_send_signal01: a /proc/<pid> directory descriptor is a pidfd",
      "'pidfdSendSignal with PIDFD_SIGNAL_PROCESS_GROUP reaches every member",
      "'PIDFD_SIGNAL_THREAD_GROUP signals only the process",
    ],
  },
  {
    id: 'L1.prctl.pdeathsig',
    rule: 'setParentDeathSignal/getParentDeathSignal are prctl(PR_SET/GET_PDEATHSIG)',
    section: 'Layer 1',
    tests: [
      "'setParentDeathSignal round-trips through getParentDeathSignal",
      "'a grandchild that set a parent-death signal dies when its parent is SIGKILLed",
    ],
  },
  {
    id: 'L1.prctl.subreaper',
    rule: 'setChildSubreaper/isChildSubreaper are prctl(PR_SET/GET_CHILD_SUBREAPER)',
    section: 'Layer 1',
    tests: [
      "'setChildSubreaper round-trips, and an orphaned grandchild is re-parented",
      "'prctl: the child-subreaper setting is not inherited by a child",
    ],
  },
  {
    id: 'L1.close-range.exact',
    rule: 'closeRange closes exactly [first, last], CLOSE_RANGE_CLOEXEC included; first > last is EINVAL',
    section: 'Layer 1',
    tests: [
      '`${label} closes exactly the descriptors in [first, last]',
      '`${label} with CLOSE_RANGE_CLOEXEC sets O_CLOEXEC',
      '`${label} refuses first > last and unknown flags with EINVAL',
      "'close_range01: CLOSE_RANGE_CLOEXEC set on the main thread is seen by a Worker",
      "'close_range01: plain, UNSHARE, CLOEXEC and CLOEXEC|UNSHARE",
    ],
  },
  {
    id: 'L1.close-range.unshare',
    rule: 'closeRange with CLOSE_RANGE_UNSHARE is refused (ERR_INVALID_ARG_VALUE) on every JavaScript thread',
    section: 'Layer 1',
    tests: [
      '`${label} refuses CLOSE_RANGE_UNSHARE on a JavaScript thread',
      "'closeRange with CLOSE_RANGE_UNSHARE is refused with ERR_INVALID_ARG_VALUE",
    ],
  },
  {
    id: 'L1.flock.sync',
    rule: 'flockSync is flock(2); LOCK_NB under contention throws EAGAIN',
    section: 'Layer 1',
    tests: [
      "'shared locks coexist; an exclusive one excludes them",
      "'flockSync with LOCK_NB under contention throws EAGAIN",
      "'flockSync blocks until the holder releases",
      "'flock03: a child unlocks through the descriptor it inherited",
    ],
  },
  {
    id: 'L1.flock.async',
    rule: 'flock waits off the event loop and off the threadpool, on any descriptor',
    section: 'Layer 1',
    tests: [
      "'a holder that is SIGKILLed releases its lock to a pending async waiter",
      "'a caller that closes its descriptor mid-wait does not make the thread lock a recycled number",
      "'async flock on a directory descriptor and on a bad descriptor",
    ],
  },
  {
    id: 'L1.flock.abort',
    rule: 'An AbortSignal cancels a flock wait, leaves no lock taken, never drops a lock already held',
    section: 'Layer 1',
    tests: [
      "'an AbortSignal cancels the wait: the rejection comes after the thread let go",
      "'an abort racing the grant never leaves the lock taken",
      "'an already aborted signal rejects at once without starting a wait",
      "'a second flock() wait on one open file description is refused",
    ],
  },
  {
    id: 'L1.flock.disposition',
    rule: 'flock never changes or resets a signal disposition the application set',
    section: 'Layer 1',
    tests: [
      "'the end of a Worker that used flock() leaves the application\\'s disposition",
      "'with the usual wake signal taken, a flock() wait still queues",
      "'an abort of a wait whose wake signal the application took meanwhile",
    ],
  },
  {
    id: 'L1.trylock',
    rule: 'tryLock is true when taken, false when someone holds the lock',
    section: 'Layer 1',
    tests: ["'a lock another process holds makes tryLock false"],
  },
];
