// The SPEC's rules, each with a short id, and the tests that test it today, named by the start of
// the test's name as it is written in the source (a template literal's `${…}` included).
// scripts/tag-tests.mjs appends ` [id]` to those names and writes docs/rules.md from this list,
// so that a search for an id finds the rule's tests.
//
// Id grammar: <section>.<subject>[.<aspect>], lowercase, dash-separated words. Sections: F (the
// three facts), C (conventions), L1, L2, L2b, L3a (groups, the supervisor's end, containment),
// L3b, CLI, K (kernel floor and fallbacks), P (packaging), A (the layout, docs/architecture.md).

/**
 * `pending`: names of tests that arrive with the branches merged together with this list (the
 * core split, the child split, containment, the lib/ split); until then they are not found, and
 * that is no error; found, they are tagged as `tests` are.
 * @typedef {{ id: string, rule: string, section: string, tests: string[], pending?: string[] }} Rule
 */

/** @type {Rule[]} */
export const RULES = [
  // --- The three facts ---------------------------------------------------------------------
  {
    id: 'F.stranger.never',
    rule: 'No signal or wait ever reaches a process that took a released number',
    section: 'The three facts',
    tests: [
      '`${label}: a stranger that took a released number never receives a procpin signal`',
      "'the pid-reuse runner detects a stranger that is signalled",
      "'pidfd_send_signal03: through the /proc/<pid> descriptor of a reaped process",
    ],
  },

  // --- Conventions -------------------------------------------------------------------------
  {
    id: 'C.module.dual',
    rule: 'import and require give the same exports, the very same objects',
    section: 'Conventions',
    tests: ["'import and require give the same exports", "'require and import give the same spawn"],
  },
  {
    id: 'C.types.ship',
    rule: 'Type declarations ship and declare every runtime export; the README examples type-check',
    section: 'Conventions',
    tests: [
      "'the type declarations package.json names exist",
      "'the README examples and a supervisor program type-check",
      "'the API reference builds from lib/ with no typedoc warning",
      "'the typedoc check fails on a link that does not resolve",
    ],
  },
  {
    id: 'C.readme.parses',
    rule: "The README's code blocks parse on Node 20",
    section: 'Conventions',
    tests: [
      "'README.md has JavaScript examples to check",
      '`the README example at line ${b.line} parses',
    ],
  },
  {
    id: 'C.signal.validate',
    rule: 'Signals are taken by name or number, validated as Node does (ERR_UNKNOWN_SIGNAL)',
    section: 'Conventions',
    tests: [
      "'signals are accepted by name or by number",
      "'kill() validates its signal like Node does",
    ],
  },
  {
    id: 'C.error.shape',
    rule: "A syscall failure is an Error shaped as Node's: code, negative errno, syscall, pid/fd/path; stack from the caller",
    section: 'Conventions',
    tests: [
      "'every errno is named by its usual name",
      "'a syscall error carries code, negative errno, syscall",
      "'stacks start at the caller",
      "'pidfdOpen on a pid that names no process throws a Node-shaped ESRCH",
    ],
  },
  {
    id: 'C.options.once',
    rule: 'Options are read once, before anything starts',
    section: 'Conventions',
    tests: ["'options are read once"],
  },
  {
    id: 'C.options.unknown',
    rule: 'An unknown or unimplemented option throws ERR_INVALID_ARG_VALUE naming it, and starts nothing',
    section: 'Conventions',
    tests: ["'an unknown or unimplemented option throws ERR_INVALID_ARG_VALUE"],
  },
  {
    id: 'C.args.refused-first',
    rule: "Bad arguments are refused before any syscall, with Node's codes and classes",
    section: 'Conventions',
    tests: [
      "'argument errors carry Node\\'s codes and classes",
      "'arguments are refused before any syscall",
      "'strings with NUL bytes and bad options are refused before anything starts",
      "'NUL bytes in file, args, env, cwd and argv0 give ERR_INVALID_ARG_VALUE",
      "'NUL bytes in a sweep or claim path or prefix are refused",
      "'an env value that cannot become a string is refused",
    ],
    pending: ["'readProcStat refuses a pid that is not a positive int32"],
  },
  {
    id: 'C.args.reject',
    rule: 'A function that returns a Promise rejects on bad arguments, never throws',
    section: 'Conventions',
    tests: [
      "'flock rejects rather than throws on bad arguments",
      "'bad arguments reject (never throw) with Node-style codes",
      "'claimPidfile refuses bad options before touching the file",
    ],
  },
  {
    id: 'C.no-crash',
    rule: 'Nothing crashes the process, whatever JavaScript passes',
    section: 'Conventions',
    tests: [
      "'the abuse run also holds under five more fast-check seeds",
      "'thousands of junk calls into every export and the raw binding never crash",
      '`${CALLS} calls with arbitrary values over every export',
      "'claim with mode -0 is accepted or refused, never aborts",
      "'exported classes built by a caller never close a descriptor they do not own",
      "'Child and ProcessHandle cannot be constructed directly",
      "'Claim and Pidfile cannot be constructed from outside",
      "'ProcessGroup cannot be constructed directly",
    ],
  },
  {
    id: 'C.loop.no-block',
    rule: 'No call blocks the event loop or holds a threadpool thread for unbounded time',
    section: 'Conventions',
    tests: [
      "'async flock waits off the event loop",
      "'eight async flock waiters each on a thread of their own",
      "'exit watching uses no thread per child",
    ],
  },
  {
    id: 'C.handle.close-once',
    rule: 'A handle closes its descriptor exactly once; close() is idempotent; GC leaks nothing; dispose works',
    section: 'Conventions',
    tests: [
      "'ProcessHandle close() closes its pidfd once",
      "'a dropped ProcessHandle that was unref()ed releases its pidfd",
      "'close() reaps an exited child, is idempotent",
    ],
  },
  {
    id: 'C.diag.group',
    rule: 'A group publishes its cleanup phases { pid, phase, signal?, ms } on procpin:group',
    section: 'Conventions',
    tests: [
      "'a real group publishes { pid, phase, signal?, ms } on procpin:group",
      "'the phases are published in order",
      "'a throwing diagnostics subscriber does not stop the cleanup",
    ],
  },
  {
    id: 'C.diag.sweep',
    rule: 'A sweep publishes each decision on procpin:sweep',
    section: 'Conventions',
    tests: ["'each decision is published on the procpin:sweep diagnostics channel"],
  },

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

  // --- Layer 2 -----------------------------------------------------------------------------
  {
    id: 'L2.spawn.exec',
    rule: 'file resolves through PATH as execvp does; argv0, args, cwd and env reach the program',
    section: 'Layer 2',
    tests: [
      "'an executable script without #! runs through /bin/sh",
      "'the PATH search skips an entry that cannot run",
      "'cwd sets the working directory",
      "'argv0 sets argv[0]; args reach the program unchanged",
      "'env replaces the environment, skips undefined values",
      "'spawn(file, options) works without args",
      "'without options.env the child gets process.env as it is now",
      '"a child spawned from a Worker gets the Worker\'s own process.env"',
      "'default-environment spawns racing a SHARE_ENV Worker",
    ],
  },
  {
    id: 'L2.spawn.stdio',
    rule: "stdio takes 'pipe' | 'inherit' | 'ignore', arrays, fd numbers, null and Streams with a descriptor",
    section: 'Layer 2',
    tests: [
      "\"a child's stdout given to a group's leader as its stdin is read by that leader only",
      "'a stream handed to a child is read here again once this process asks",

      "'a pipe round trip through cat",
      "'32 MiB through cat arrive intact",
      "'a child that does not read makes write() return false",
      "'stdout delivers the data and ends when the child exits",
      "\"'inherit' passes this process's descriptors\"",
      '"\'ignore\' gives /dev/null for 0-2 and closes 3+"',
      "'a descriptor number maps that descriptor of the parent",
      "'overlapping mappings are honoured",
      "\"null and undefined mean 'pipe' for 0-2",
      "'stdio takes a Stream that has a descriptor",
    ],
  },
  {
    id: 'L2.spawn.stdio-blocking',
    rule: 'A descriptor inherited at 0-2 reaches the child in blocking mode, as libuv hands it over',
    section: 'Layer 2',
    tests: [
      "'descriptors inherited at 0-2 reach the child blocking",
      "'the flag cleared is the one libuv clears",
    ],
  },
  {
    id: 'L2.spawn.group',
    rule: "processGroup 'new' (default) | 'session' | 'inherit'",
    section: 'Layer 2',
    tests: [
      "\"processGroup 'new' (the default)",
      '"processGroup \'session\' makes the child lead a new session"',
      '"processGroup \'inherit\' leaves the child in our group"',
    ],
  },
  {
    id: 'L2.spawn.pdeathsig',
    rule: 'parentDeathSignal is set after fork with the race re-check and follows the spawning thread',
    section: 'Layer 2',
    tests: [
      "'parentDeathSignal kills the child when its parent is SIGKILLed",
      "'parentDeathSignal catches a parent that died before the child set it",
      "'parentDeathSignal follows the spawning thread",
    ],
  },
  {
    id: 'L2.spawn.close-fds',
    rule: 'closeFds (default true): nothing but the mapped stdio reaches the child; our own descriptors never do',
    section: 'Layer 2',
    tests: [
      "'the child sees only fds 0-2, even when the parent holds a descriptor without close-on-exec",
      "'our own descriptors (pidfds, pipes) never reach a child",
    ],
  },
  {
    id: 'L2.spawn.credentials',
    rule: 'uid and gid are set in the child, supplementary groups dropped as libuv does',
    section: 'Layer 2',
    tests: [
      "'uid and gid are set in the child",
      "'a uid that cannot be set fails the start with EPERM",
      "'uid and gid are validated before anything starts",
    ],
  },
  {
    id: 'L2.spawn.shell',
    rule: 'shell: true is /bin/sh -c, a string names the shell',
    section: 'Layer 2',
    tests: ["'shell: true runs file and args joined by spaces"],
  },
  {
    id: 'L2.spawn.abort-timeout',
    rule: 'signal (AbortSignal) and timeout send killSignal to the child',
    section: 'Layer 2',
    tests: [
      "'an AbortSignal sends killSignal to the child",
      "'timeout sends killSignal to a child that runs too long",
      "'a signal look-alike whose addEventListener throws starts nothing",
    ],
  },
  {
    id: 'L2.spawn.signals-reset',
    rule: 'The signal mask and dispositions are reset in the child (SIGPIPE not ignored)',
    section: 'Layer 2',
    tests: [
      "'the child starts with an empty signal mask and default dispositions",
      '"the child writing to a closed stdout pipe gets SIGPIPE',
    ],
  },
  {
    id: 'L2.spawn.fail',
    rule: 'A failed start throws synchronously with code, syscall, path and spawnargs, and leaves no zombie',
    section: 'Layer 2',
    tests: [
      "'a failed spawn leaves a stream given in stdio as it was",

      "'a missing program throws ENOENT (execve, path, spawnargs)",
      "'a file without execute permission throws EACCES",
      "'a missing cwd throws ENOENT with syscall chdir",
      "'argv or env too large fails with E2BIG",
      "'argv and env over the kernel limit give E2BIG",
      "'a failed spawn closes the pipes it made",
      "'failed spawns in a loop leave the fd count and the zombie count unchanged",
    ],
  },
  {
    id: 'L2.spawn.pidfd',
    rule: 'The pidfd comes with the child (CLONE_PIDFD), close-on-exec, and is closed by the reap',
    section: 'Layer 2',
    tests: ["'the pidfd is close-on-exec, blocking, and refers to the child"],
  },
  {
    id: 'L2.sigchld.ignored',
    rule: 'SIGCHLD ignored (SIG_IGN or SA_NOCLDWAIT) throws ERR_PROCPIN_SIGCHLD_IGNORED',
    section: 'The three facts / Layer 2',
    tests: ["'spawn throws ERR_PROCPIN_SIGCHLD_IGNORED", "'exits 125 when SIGCHLD is ignored"],
  },
  {
    id: 'L2.exited.unreaped',
    rule: 'exited resolves without reaping: the child stays a zombie, its pid and pgid reserved',
    section: 'Layer 2',
    tests: [
      "'a child that exits with a code reports CLD_EXITED",
      "'a child killed by a signal reports CLD_KILLED",
      "'after exited the child is a zombie (state Z) until reap()",
    ],
  },
  {
    id: 'L2.poll',
    rule: 'poll() is a WNOHANG | WNOWAIT look',
    section: 'Layer 2',
    tests: ["'poll() is null while the child runs"],
  },
  {
    id: 'L2.kill.exited',
    rule: 'kill() is false once the child has exited and never touches the pid after the reap',
    section: 'Layer 2',
    tests: [
      "'kill() is true while the child runs and false once it exited",
      "'kill() knows the exit even before exited has resolved",
    ],
  },
  {
    id: 'L2.reap.after-exit',
    rule: 'reap() only after the exit (ERR_PROCPIN_NOT_EXITED before)',
    section: 'Layer 2',
    tests: ["'reap() while the child runs throws ERR_PROCPIN_NOT_EXITED"],
  },
  {
    id: 'L2.lifetime',
    rule: 'close(), ref()/unref(); an unreachable Child never leaves a zombie; a stress leaves nothing',
    section: 'Layer 2',
    tests: [
      "'close() on a running child leaves it running and reaps it the moment it exits",
      "'an unreachable Child is reaped and its pidfd closed",
      "'an unreachable running Child is reaped when it exits later",
      "'awaiting exited keeps the Child alive",
      "'an unref()ed running child does not keep node alive; a ref()ed one does",
      '`${STRESS ? 3000 : 300} spawn/exit/reap cycles',
      "'50 concurrent children all resolve with their own exit codes",
      "'child_process (the model): a finished child with default stdio leaves no descriptor",
      "'a reaped child with default stdio holds no descriptor",
    ],
  },
  {
    id: 'L2.dispose',
    rule: '[Symbol.dispose] on a running child SIGKILLs it, reaps and closes it',
    section: 'Layer 2',
    tests: ["'Child[Symbol.dispose] on a running child SIGKILLs it"],
  },
  {
    id: 'L2.identity.lost',
    rule: 'A child reaped by someone else is reported lost (ERR_PROCPIN_CHILD_LOST) and never waited or signalled by number',
    section: 'Layer 2',
    tests: [
      '"a child reaped by another library\'s waitpid(-1) thread is lost',
      "'SIGCHLD set to ignored after the spawn: the auto-reaped child is reported lost",
    ],
  },
  {
    id: 'L2.identity.pidfd-closed',
    rule: "Closing Child.pidfd behind procpin's back neither crashes nor makes procpin act on the next descriptor",
    section: 'Layer 2',
    tests: ['"closing child.pidfd behind procpin\'s back'],
  },
  {
    id: 'L2.identity.traced',
    rule: 'A pidfd readable with nothing waitable (a tracer has not waited) does not spin the loop',
    section: 'Layer 2',
    tests: ["'an exited child traced by a debugger that has not waited"],
  },
  {
    id: 'L2.open-process',
    rule: 'openProcess(pid): a pidfd on any process: exited, kill, close; unref()ed it keeps nothing alive',
    section: 'Layer 2',
    tests: [
      "'openProcess watches a process it did not start",
      "'openProcess on a pid that names no process throws ESRCH",
      "'an unref()ed ProcessHandle does not keep node alive",
      "'a ProcessHandle on a process that exits settles exited",
    ],
  },
  {
    id: 'L2.worker',
    rule: "A Worker's children are watched and reaped there, and its end neither crashes nor leaves a zombie",
    section: 'Layer 2 / Conventions',
    tests: [
      "'a Child spawned inside a Worker reports its exit there",
      '"a Worker\'s child that outlives the Worker is reaped',
      "'a Worker that ends with exited but unreaped children leaves no zombie",
      "'terminating a Worker while its child runs and is watched does not crash",
      "'the addon loads in several Workers at once",
      "'terminating a Worker while its flock wait is pending",
      "'terminating Workers in a loop while waits are pending",
      "'a process that exits while a flock wait is pending exits promptly",
      "'a pending flock wait keeps the process alive",
      "'Workers that alone load the addon can finish flock waits",
      '`A binding call (${name}) made after terminate() was called',
      "'a Worker terminated while it waits for a child and a flock",
      "'a process that exits with children, exit waits and a flock wait pending",
    ],
  },

  // --- Layer 2b ----------------------------------------------------------------------------
  {
    id: 'L2b.events',
    rule: "'spawn', 'exit', 'close' (after the streams ended) and 'error' in child_process's order",
    section: 'Layer 2b',
    tests: [
      "'events come in child_process order",
      "\"'close' comes after a read(0)-touched stdout",
      "\"a signal aborted before spawn gives 'spawn' first",
    ],
  },
  {
    id: 'L2b.start-error',
    rule: "A failed start emits 'error' then 'close' asynchronously, shaped as child_process's, and throws nothing",
    section: 'Layer 2b',
    tests: [
      "'a failed start leaves a stream given in stdio as it was",

      "\"a failed start emits 'error' then 'close' asynchronously",
      "'a cwd that does not exist is an ENOENT error event",
    ],
  },
  {
    id: 'L2b.group',
    rule: 'Underneath is a ProcessGroup: kill() signals the group while ours, the exit cleans it',
    section: 'Layer 2b',
    tests: [
      "'kill() signals the whole group, and the leader exit cleans what is left",
      "\"a background member holding stdout does not hold 'close'",
      "'kill() sets killed and signalCode",
      "'a timeout that ends the child sets killed",
      "'an abort that ends the child sets killed",
      "'Symbol.asyncDispose (what await using calls) stops the group",
    ],
  },
  {
    id: 'L2b.options',
    rule: "child_process's options; windowsHide accepted, detached = new session, 'ipc' refused",
    section: 'Layer 2b',
    tests: [
      '"a connected socket given as a child\'s stdin is read by the child only',

      "'detached: true makes the group a new session",
      "'windowsHide and windowsVerbatimArguments are accepted",
      "'argument combinations are validated as child_process does",
      "'stdio is validated as child_process does",
      "'keys polluted onto Object.prototype reach neither the options",
      '"an env that inherits from another object',
    ],
  },
  {
    id: 'L2b.node-cases',
    rule: "Node's own test-child-process-* cases for spawn pass",
    section: 'Layer 2b',
    tests: [
      "'timeout sends killSignal, and a bad timeout is ERR_OUT_OF_RANGE",
      '"an AbortSignal stops it and emits an AbortError',
      "'NUL bytes in file, args, env or cwd are refused",
      "'argv0, spawnfile and spawnargs are as child_process has them",
      "'env is the given one, and process.env without it",
      "\"stdio 'inherit', 'ignore', arrays and 'overlapped'",
      "'stdin reaches the child and its output comes back whole",
      '\'undefined, null and [] all stand for "no args"',
      '"a child writing 100,000 bytes to an inherited stdout exits 0',
      '"stdin written past its buffer and ended before it drained',
      "'stdin is destroyed when the child exits",
      "\"a grandchild started with stdio 'inherit'",
      "\"two children's stdout given one child's stdin merge",
      "\"a child's stdout given as another child's stdin",
      "'a node child that logs 202 lines",
      "'a node child can write to its stdout pipe",
      "'cat <file> | grep x | wc -c moves 1 MiB",
      "'Symbol.dispose kills the child at once",
    ],
  },

  // --- Layer 3a ----------------------------------------------------------------------------
  {
    id: 'L3a.exit.clean-then-reap',
    rule: "The leader's own exit cleans the group at once (killSignal, grace, SIGKILL); only then is it reaped",
    section: 'Layer 3a',
    tests: [
      "'when the leader exits on its own the group gets killSignal, SIGCONT, then SIGKILL",
      "'a leader that backgrounds sleep and exits leaves no survivor",
      "\"a member's TERM trap sees the leader's /proc state as Z",
      "'the whole group is cleaned when the leader exits",
    ],
  },
  {
    id: 'L3a.grace.sigkill',
    rule: 'Members that ignore killSignal die by SIGKILL after grace; stopped members get SIGCONT',
    section: 'Layer 3a',
    tests: [
      "'a member that ignores SIGTERM dies by SIGKILL after the grace",
      "'a stopped member gets SIGCONT after killSignal",
      "'members still seen when the grace runs out are killed",
      "'with killSignal SIGKILL there is no grace",
    ],
  },
  {
    id: 'L3a.final-sigkill',
    rule: 'While the leader is reserved, cleanup always ends with a group SIGKILL',
    section: 'Layer 3a',
    tests: [
      "'a reserved group is killed despite an empty scan",
      "'a member forking in a loop during cleanup leaves no survivor",
      "'EPERM during cleanup still ends with a group SIGKILL attempt",
      "'30 groups at once with random exits and stops leave no process",
      "'at a pid limit, spawn gets EAGAIN and leaks nothing, and a group that fills the limit is still killed",
      "'the same storm survives a group SIGTERM alone",
    ],
  },
  {
    id: 'L3a.scan.advisory',
    rule: 'The /proc scan may end the grace early; it never decides that the group is gone',
    section: 'Layer 3a',
    tests: [
      "'the grace ends early when every member has exited",
      "'the grace ends early once the leader has exited and a scan finds no live member",
      "'a scan answered through a promise ends the grace early",
      "'a scan slower than the grace does not hold it",
      "'early in the grace the group is looked at about every millisecond",
      "'an empty scan does not end the grace while the leader still runs",
      '`the native scan counts exactly the live members',
      '`scanGroup reads a member whose command name holds spaces',
      "'a scan with the memory of the last one counts the same",
      "'with /proc of another pid namespace, a group\\'s grace is not cut short",
    ],
  },
  {
    id: 'L3a.scan.unreadable',
    rule: 'An unreadable /proc (or a failed scan) counts as "members may exist"',
    section: 'Layer 3a',
    tests: [
      '\'an unreadable /proc counts as "members may exist"',
      "'an unreadable /proc makes the scan unknown, never empty",
      "'a cleanup whose scan cannot read /proc counts members as possibly alive",
      '\'a scan that fails (rejects or throws) counts as "members may exist"',
    ],
  },
  {
    id: 'L3a.signal.unreaped',
    rule: 'Signals go to the group only while the leader is unreaped; signal() is false once released',
    section: 'Layer 3a',
    tests: [
      "'nothing is signalled after release",
      "'signal() reaches the whole group while it is ours",
      "'group signals go through the pidfd, or kill(-pgid) only while the leader is unreaped",
      "'killNow() sends a group SIGKILL at once while the group is held",
    ],
  },
  {
    id: 'L3a.signal.esrch',
    rule: 'ESRCH from a group signal means the group is gone: the number is forgotten',
    section: 'Layer 3a',
    tests: [
      "'ESRCH from a group signal forgets the number",
      "'ESRCH on a signal() call forgets the number",
    ],
  },
  {
    id: 'L3a.signal.eperm',
    rule: 'EPERM means a member we may not signal exists: the leader gets it through its pidfd, the number is kept',
    section: 'Layer 3a',
    tests: ["'EPERM from a group signal falls back to signalling the leader"],
  },
  {
    id: 'L3a.signal.pidfd-group',
    rule: "With PIDFD_SIGNAL_PROCESS_GROUP (6.9+) group signals go through the leader's pidfd",
    section: 'Layer 3a',
    tests: [
      "'group signals take the path this run expects",
      "'where the kernel binds group signals to a pidfd, the cleanup sends every one",
      "'with group signals forced through the number, the cleanup sends every one",
      "'the leader is held through a pidfd where the kernel has them",
    ],
  },
  {
    id: 'L3a.deadline.unreaped',
    rule: 'timeout and abort act only on an unreaped, running leader, after its exit has been read',
    section: 'Layer 3a',
    tests: [
      "'timeout stops a running leader: timedOut, stoppedWhileRunning",
      "'a leader that exits before its timeout is cleaned as an exit",
      "'abort stops a running leader: aborted and stoppedWhileRunning",
      "'an already aborted signal starts the command and stops it at once",
      "'a leader that exited just before its timeout fired is cleaned as an exit",
      "'an abort just after the leader exited (not yet reported)",
      "'a timeout stops a running leader: timedOut and stoppedWhileRunning",
      "'a leader that exited a moment before the deadline is cleaned as an exit",
      "'an abort stops a running leader: aborted and stoppedWhileRunning",
      "'an abort after the leader exited (watch not yet reported)",
      "'a signal already aborted at spawn stops the group at once",
      "'an abort during the cleanup of an exit changes nothing",
    ],
  },
  {
    id: 'L3a.result.stopped-while-running',
    rule: 'stoppedWhileRunning is decided by a WNOWAIT look before the signal',
    section: 'Layer 3a',
    tests: [
      "'stoppedWhileRunning is decided by a WNOWAIT look before the signal",
      "'stop() just after the leader exited (not yet reported) says stoppedWhileRunning: false",
    ],
  },
  {
    id: 'L3a.result.killed',
    rule: 'killed: live members were seen just before the final SIGKILL',
    section: 'Layer 3a',
    tests: [
      "'a lone leader that exits on its own reports killed: false with the default killSignal",
      "'a lone leader that exits on its own reports killed: false with killSignal SIGKILL too",
      "'with killSignal SIGKILL a member still running when the leader exits is reported as killed",
      "'a lone leader that exits on its own reports killed: false with grace 0",
      "'a stop() that ends a lone leader within the grace reports the signal by name",
    ],
  },
  {
    id: 'L3a.stop.once',
    rule: 'stop() runs exactly once; concurrent and later calls get the same promise',
    section: 'Layer 3a',
    tests: [
      "'concurrent stop() calls share one cleanup",
      "'stop() runs once: concurrent and later calls share its promise",
      "'stop() is once: a later stop with other choices gets the same promise",
    ],
  },
  {
    id: 'L3a.stop.options',
    rule: 'stop({ signal, grace }) replace killSignal and grace for that cleanup',
    section: 'Layer 3a',
    tests: [
      "'stop({ signal }) sends the signal chosen at stop time",
      "'stop({ grace }) shortens the wait",
    ],
  },
  {
    id: 'L3a.stop.settles',
    rule: 'stop() always settles, also for a leader that left its group or ignores every catchable signal',
    section: 'Layer 3a',
    tests: ["'stop() settles for a leader that left its group and ignores SIGTERM"],
  },
  {
    id: 'L3a.state',
    rule: "state goes 'running' → 'reserved' → 'cleaning' → 'released'",
    section: 'Layer 3a',
    tests: [
      "'the state goes running, reserved, cleaning, released",
      "'state goes running, reserved, cleaning, released",
    ],
  },
  {
    id: 'L3a.release.no-fd',
    rule: 'On release the leader is reaped and its pidfd closed: a released group holds no descriptor',
    section: 'Layer 3a',
    tests: [
      "'a released group holds no descriptor and leaves no zombie",
      "'with piped stdio a released group holds no descriptor",
      "'a leader reaped by someone else after its exit was read",
      "'a reap of the leader that fails with",
    ],
    pending: ["'pidns: no descriptor of the namespace is left open in the supervisor"],
  },
  {
    id: 'L3a.leader.lost',
    rule: 'A leader lost to a foreign reaper: nothing more by number, closed rejects with ERR_PROCPIN_CHILD_LOST',
    section: 'Layer 3a',
    tests: ["'a leader that can no longer be waited for is never signalled"],
  },
  {
    id: 'L3a.leader.owned',
    rule: "The group owns its leader: the leader's reap, close and dispose cannot free the pgid early",
    section: 'Layer 3a',
    tests: [
      '`calling group.leader.${how}() does not let a member outlive the group`',
      '"Child[Symbol.dispose] refuses a group\'s leader',
    ],
    pending: [
      '"group.leader is a Child whose reap(), close() and dispose refuse with ERR_PROCPIN_GROUP_LEADER',
    ],
  },
  {
    id: 'L3a.subreaper',
    rule: 'Members re-parented to a subreaper supervisor are reaped: a cleaned group leaves no zombie',
    section: 'Layer 3a',
    tests: [
      "'a supervisor that is a subreaper reaps the members re-parented to it",
      "'a PID 1 supervisor",
    ],
  },
  {
    id: 'L3a.options',
    rule: "spawnGroup takes spawn's options plus killSignal, grace, timeout, signal, parentDeathSignal (SIGKILL), foreground, contain",
    section: 'Layer 3a',
    tests: [
      "'spawnGroup(file, options) takes no arguments, as spawn does",
      "'options are validated before anything starts",
      "'a command that cannot start throws as spawn does and leaves nothing behind",
      "'the leader dies with its supervisor by default (parentDeathSignal SIGKILL)",
      "'parentDeathSignal: null leaves the leader running",
      "'a test runner in a few lines: 20 jobs in parallel",
      "'more than maxBuffer rejects with ERR_CHILD_PROCESS_STDIO_MAXBUFFER",
      '"a Child\'s output is collected with its exit',
    ],
  },
  {
    id: 'L3a.foreground',
    rule: 'foreground: on a terminal the group is the foreground job while it runs; the terminal comes back',
    section: 'Layer 3a',
    tests: [
      "'foreground: true on a terminal",
      "'foreground: true without a controlling terminal does nothing",
    ],
  },
  {
    id: 'L3a.end.exit',
    rule: 'Every unreleased group is SIGKILLed on a normal exit, process.exit() from anywhere, reallyExit, an uncaught exception',
    section: 'However the supervisor ends',
    tests: [
      "\"a supervisor ended by process.exit() in another library's 'exit' listener",
      "'a supervisor ended by process.reallyExit kills every group",
      "'a supervisor ended by an uncaught exception kills every group",
      "'a supervisor whose event loop runs dry with unreferenced groups",
      "'a supervisor that exits with a group still running leaves no member behind",
      "'a cgroup.kill descriptor in the end-kill table is written",
    ],
  },
  {
    id: 'L3a.end.signal',
    rule: 'An ending signal with no listener kills every group, then its default action follows (128+N)',
    section: 'However the supervisor ends',
    tests: [
      '`a supervisor ended by ${sig} with no listener of its own kills every group',
      "'a supervisor whose application listens for SIGTERM lets it decide",
      "'^C typed at a terminal reaches the groups that are not in the foreground",
    ],
    pending: [
      '`cgroup: a supervisor ended by ${sig} (no listener of its own) leaves no cgroup directory',
    ],
  },
  {
    id: 'L3a.end.abort',
    rule: 'abort(), a fatal V8 error or out-of-memory (SIGABRT) kill every group',
    section: 'However the supervisor ends',
    tests: [
      "'a supervisor that calls abort() kills every group",
      "'a supervisor that runs out of memory kills every group",
    ],
  },
  {
    id: 'L3a.end.worker',
    rule: "The end of a Worker kills that Worker's groups only, and never crashes the process",
    section: 'However the supervisor ends',
    tests: [
      '"worker.terminate() kills the Worker\'s own groups',
      "'Workers terminated mid-work dozens of times in a loop",
    ],
    pending: [
      "'cgroup: the end of the Worker that spawned a group kills every process of its cgroup",
    ],
  },
  {
    id: 'L3a.end.sigkill',
    rule: "A SIGKILLed supervisor's leaders die by parentDeathSignal; their members are beyond a process group",
    section: 'However the supervisor ends',
    tests: ['"a SIGKILLed supervisor\'s group leader dies by the parent-death signal'],
  },
  {
    id: 'L3a.contain.escape',
    rule: 'contain: setsid, setpgid and double-fork daemons cannot leave the group',
    section: 'Containment',
    tests: [
      '`${mode}: a setsid daemon, a setpgid escaper and a double-fork daemon',
      "`${mode}: the daemons do not outlive the leader's own exit`",
      "'cgroup: a command that moves itself out of its cgroup",
    ],
    pending: [
      "'cgroup: a command that is not root cannot leave its cgroup (EACCES)",
      "'cgroup: a root command leaves its cgroup by writing another cgroup.procs",
    ],
  },
  {
    id: 'L3a.contain.transparent',
    rule: 'A contained command behaves as without containment: SIGTERM, status, stdio, cwd, env, /proc, orphans',
    section: 'Containment',
    tests: [
      '`${mode}: a command without a SIGTERM handler dies by stop()',
      '`${mode}: exit codes and signal deaths are reported exactly`',
      '`${mode}: stdio, cwd and env are the command',
      "'pidns: /proc inside is the namespace\\'s own",
      "'pidns: 50 orphans inside leave no zombie",
      "'pidns: a signal to the group reaches every process of the namespace",
      "`${name}: stop() reports the command's own SIGTERM death",
    ],
    pending: ['`${name}: a command that dumps core is reported as CLD_DUMPED'],
  },
  {
    id: 'L3a.contain.pidns-sigkill',
    rule: 'pidns: when the supervisor dies (SIGKILL included) the kernel kills the whole namespace',
    section: 'Containment',
    tests: ["'pidns: nothing of the command lives 2 s after its supervisor is SIGKILLed"],
  },
  {
    id: 'L3a.contain.userns',
    rule: 'Unprivileged pidns uses a new user namespace, with the uid and gid the command would have had',
    section: 'Containment',
    tests: ["'unprivileged pidns: a user namespace of its own"],
  },
  {
    id: 'L3a.contain.auto',
    rule: "'auto' takes the strongest available and never fails; an unavailable explicit mode throws ERR_PROCPIN_CONTAINMENT_UNAVAILABLE",
    section: 'Containment',
    tests: [
      "\"contain: 'auto' says which holds the group",
      '"unprivileged, user namespaces refused',
    ],
  },
  {
    id: 'L3b.cgroups.sweep',
    rule: "sweepCgroups() kills and removes a dead supervisor's cgroups and keeps a live one's",
    section: 'Containment / Layer 3b',
    tests: [
      "\"cgroup: a SIGKILLed supervisor's cgroup lives until a successor's sweepCgroups",
      "'sweepCgroups reports nothing to do",
      '`cgroup: a supervisor that ends by ${how} leaves no cgroup directory behind`',
    ],
  },
  {
    id: 'L3b.cgroups.namespace',
    rule: "A sweep judges a cgroup's supervisor by pid, start time and pid namespace; one it cannot prove dead is kept",
    section: 'Containment / Layer 3b',
    tests: [
      '"cgroup: a live supervisor\'s cgroup survives sweepCgroups() run from inside a new pid namespace',
      '"procpin sweep --cgroups run from inside a new pid namespace keeps',
      "'cgroup: a live supervisor inside a pid namespace keeps its cgroup",
      "'cgroup: a dead supervisor of a pid namespace that is gone is swept",
      '"cgroup: a dead supervisor\'s cgroup is swept (daemon killed, directory removed)',
      "'cgroup: a cgroup named by an earlier procpin",
    ],
  },

  // --- Layer 3b ----------------------------------------------------------------------------
  {
    id: 'L3b.sweep.grammar',
    rule: 'Candidates are prefix + canonical decimal pid + end, - or .; other names appear in neither list',
    section: 'Layer 3b',
    tests: [
      "'names that are not candidates appear in neither list",
      "'the candidate grammar matches its definition",
    ],
  },
  {
    id: 'L3b.sweep.dead',
    rule: 'Only an entry whose pid names no live process here goes (a zombie is dead, a live stranger is alive)',
    section: 'Layer 3b',
    tests: [
      '"a dead owner\'s non-empty directory, file and socket go',
      '"a zombie\'s entry goes: a zombie counts as dead"',
      '"an entry naming a live process of another user is kept: EPERM means alive',
    ],
  },
  {
    id: 'L3b.sweep.dry-run',
    rule: 'dryRun removes nothing and reports what would go, and why the rest stays',
    section: 'Layer 3b',
    tests: ["'dryRun removes nothing but reports what would go"],
  },
  {
    id: 'L3b.sweep.type',
    rule: 'Not a symlink (lstat), and a directory, regular file or socket',
    section: 'Layer 3b',
    tests: [
      "'a symlink named like a dead owner is kept as a symlink",
      '"a symlink inside a dead owner\'s directory is unlinked',
      "'a FIFO named like a dead owner is kept as unsupported-type",
    ],
  },
  {
    id: 'L3b.sweep.owner',
    rule: "The entry belongs to this process's effective uid",
    section: 'Layer 3b',
    tests: ["'an entry owned by another uid is kept as not-owner"],
  },
  {
    id: 'L3b.sweep.lock',
    rule: 'Nobody holds a flock on it; the lock is held while it is removed',
    section: 'Layer 3b',
    tests: [
      "'an entry whose lock a live process holds is kept as locked",
      "\"authority 'lock' removes an unlocked entry",
    ],
  },
  {
    id: 'L3b.sweep.socket',
    rule: 'A socket must refuse a non-blocking connect; a full backlog is a listener',
    section: 'Layer 3b',
    tests: [
      "'a socket with a listener is kept as listening",
      "'a socket whose listen backlog is full",
    ],
  },
  {
    id: 'L3b.sweep.replaced',
    rule: 'The path still names the inode that was checked (device and inode against the locked descriptor)',
    section: 'Layer 3b',
    tests: [
      '`a directory swapped for a symlink ${label} removes nothing outside`',
      "'a file swapped for a symlink after it is locked, before the unlink",
      "'a file swapped for a symlink after the checks is never opened through it",
      "'an entry flipped between a directory and a symlink while sweeps run",
    ],
  },
  {
    id: 'L3b.sweep.mount',
    rule: 'A directory is removed without following links and without descending into another mount',
    section: 'Layer 3b',
    tests: [
      '"a mount inside a dead owner\'s directory is not descended',
      "'a bind mount of the same filesystem inside a dead owner\\'s directory",
      "'a dead owner\\'s entry that is itself a mount point is kept as mount",
    ],
  },
  {
    id: 'L3b.sweep.report',
    rule: 'Per-entry trouble is reported, never thrown; an unreadable dir gives an empty report with error',
    section: 'Layer 3b',
    tests: [
      "'an unreadable or missing directory yields an empty report with its error",
      "'per-entry trouble is reported as an error on the entry",
      "'sweeping leaves no descriptor open",
      "'with the descriptor table full, spawn, sweep, claim and group cleanup fail clearly",
    ],
  },
  {
    id: 'L3b.sweep.exact',
    rule: 'Any depth is removed; names are reported exactly, also when not UTF-8',
    section: 'Layer 3b',
    tests: [
      "`a dead owner's directory ${depth} levels deep is removed",
      "'a claim whose directory grew past 128 levels is released",
      "'a name that is not UTF-8 is reported as a Buffer",
    ],
  },
  {
    id: 'L3b.sweep.foreign-proc',
    rule: "With another namespace's /proc, liveness is read through the kernel, and a doubt keeps the entry",
    section: 'Layer 3b',
    tests: ["'with /proc of another pid namespace, a sweep keeps a live owner\\'s entry"],
  },
  {
    id: 'L3b.sweep.race',
    rule: 'Racing claimants and sweepers never remove a live entry; a dead one goes exactly once',
    section: 'Layer 3b',
    tests: [
      "'claimants and sweepers racing in several processes never remove a live entry",
      "'claimants and two sweepers racing on one prefix",
      "'two sweepers over the same dead entries remove each exactly once",
      "'a claimant that is SIGKILLed leaves its entry, and the next claim removes it",
    ],
  },
  {
    id: 'L3b.claim.create',
    rule: 'claim sweeps first, makes a missing dir 0700, creates prefix<pid>-<random> exclusively (0700/0600), locked O_CLOEXEC',
    section: 'Layer 3b',
    tests: [
      "'claim sweeps first, then creates prefix<pid>-<random> exclusively",
      '"a file claim is created with mode 0600',
      "'claim creates a missing directory with mode 0700",
      '`a ${kind} claim that loses its entry before it is locked retries',
    ],
  },
  {
    id: 'L3b.claim.unsafe-dir',
    rule: 'claim refuses (ERR_PROCPIN_UNSAFE_DIR) a dir owned by another user or writable by all without sticky',
    section: 'Layer 3b',
    tests: ["'claim refuses a directory writable by all without the sticky bit"],
  },
  {
    id: 'L3b.claim.release',
    rule: 'release() removes the entry, then drops the lock; idempotent; leaves no descriptor',
    section: 'Layer 3b',
    tests: [
      "'release removes the entry with its contents, then unlocks",
      "'release of an entry someone already removed resolves",
      "'claim and release leave no descriptor open",
      "'claim, sweep and claimPidfile work in a Worker",
    ],
  },
  {
    id: 'L3b.pidfile.lock',
    rule: 'claimPidfile is taken when no one holds its flock (stale files taken over), else ERR_PROCPIN_LOCKED with err.pid',
    section: 'Layer 3b',
    tests: [
      "'claimPidfile takes a free pidfile and writes our pid",
      "'claimPidfile under contention rejects with ERR_PROCPIN_LOCKED",
      "'a holder that has locked but not written yet is named from /proc/locks",
      "'a pidfile left by a SIGKILLed holder is taken over",
      "'a pidfile naming a live pid (1) that nobody locks is taken over",
      "'contending claimPidfile calls in several processes",
      "'claimPidfile still takes an empty file and a stale one",
    ],
  },
  {
    id: 'L3b.pidfile.wait',
    rule: 'claimPidfile { wait: true } waits for the holder, abortably',
    section: 'Layer 3b',
    tests: ["'claimPidfile with wait: true waits for the holder to let go"],
  },
  {
    id: 'L3b.pidfile.not-pidfile',
    rule: 'A file that is not a pidfile is refused (ERR_PROCPIN_NOT_PIDFILE) and left exactly as it was',
    section: 'Layer 3b',
    tests: [
      "'claimPidfile refuses a JSON document with ERR_PROCPIN_NOT_PIDFILE",
      "'claimPidfile refuses a symlink at the path",
    ],
  },

  // --- The command line --------------------------------------------------------------------
  {
    id: 'CLI.run.status',
    rule: 'run exits with the code, 128+N, 124 on timeout, 125 own failure, 126 cannot run, 127 not found',
    section: 'The command line',
    tests: [
      "'exits 0 when the command exits 0",
      '"exits with the command\'s own status"',
      "'exits 128+N when signal N ended the command",
      "'exits 124 when the timeout fired, after cleaning the group",
      "'a command that ends before the timeout gives its own status",
      "'exits 127 when the command is not found",
      "'exits 126 when the command exists but cannot be executed",
      "'exits 125 when procpin itself fails",
      "'a failure inside procpin while the command runs still cleans the group",
      "'a command that did not start gives 127 when not found",
      "'the exit status is the code, 128+N for signal N",
    ],
  },
  {
    id: 'CLI.run.forward',
    rule: 'SIGINT/SIGTERM/SIGHUP to procpin are forwarded to the group; a leader that ignores SIGTERM gives 137',
    section: 'The command line',
    tests: [
      '`${sig} sent to procpin is forwarded to the group',
      "'a leader that ignores the forwarded SIGTERM is killed after the grace: exit 137",
      "'--kill-signal chooses the signal the cleanup starts with",
      "'--verbose says when procpin forwards a signal",
    ],
  },
  {
    id: 'CLI.run.parent-death',
    rule: 'The leader dies with a SIGKILLed procpin unless --no-parent-death',
    section: 'The command line',
    tests: [
      "'when procpin is SIGKILLed the leader dies by its parent-death signal",
      "'with --no-parent-death the leader outlives",
    ],
  },
  {
    id: 'CLI.run.io',
    rule: 'The command gets its arguments untouched and inherits stdio; procpin prints only with --verbose',
    section: 'The command line',
    tests: [
      '"the command\'s own options and arguments are passed untouched"',
      "'the command inherits standard input, output and error",
      "'--verbose prints the cleanup phases on stderr",
      "'without --verbose procpin prints nothing of its own",
    ],
  },
  {
    id: 'CLI.run.tty',
    rule: 'On a terminal run keeps job control: the group in the foreground, ^C and ^Z reach it, the terminal restored',
    section: 'The command line',
    tests: [
      "'on a terminal the group gets the foreground",
      '"the terminal\'s foreground and modes come back',
      "'a stop of the job with nobody to continue procpin",
      "'in an interactive shell ^Z stops the job",
      "'started in the background, a command that reads the terminal",
      "'a job brought to the foreground while running",
    ],
  },
  {
    id: 'CLI.run.contain',
    rule: 'run --contain[=auto|pidns|cgroup] is contain on the command line',
    section: 'Containment',
    tests: ["'procpin run --contain[=MODE] uses it"],
  },
  {
    id: 'CLI.usage',
    rule: '--help on every command; a usage error exits 2; durations take ms, s, m',
    section: 'The command line',
    tests: [
      "'--help and -h on every command",
      "'--version prints the package version",
      "'usage errors are reported on stderr with a hint and exit 2",
      "'a command that cannot be parsed is refused before anything runs",
      "'durations are milliseconds, or a number with ms, s, m or h",
      "'a duration that is not one is a usage error",
      "'a signal may be named with or without SIG",
      "'a pid is decimal, positive, without sign or leading zero",
    ],
  },
  {
    id: 'CLI.sweep',
    rule: 'sweep DIR --prefix P [--dry-run] [--json] prints what was removed and kept, and why',
    section: 'The command line',
    tests: [
      "'sweep prints what it removed and what it kept",
      "'sweep --dry-run says what it would remove",
      "'sweep --json prints the report",
      "'sweep of a directory that cannot be read exits 1",
      "'sweep refuses a prefix the library refuses",
    ],
  },
  {
    id: 'CLI.wait',
    rule: 'wait PID... waits by pidfd until all have exited; 0, or 124 on timeout',
    section: 'The command line',
    tests: [
      "'wait returns 0 once every named process has exited",
      "'wait exits 124 when the timeout expires first",
      "'wait counts a zombie as exited",
      "'wait on a pid that names no process is an error",
      "'wait --exited counts a pid that names no process as exited",
    ],
  },

  // --- Kernel floor and fallbacks ----------------------------------------------------------
  {
    id: 'K.no-pidfd',
    rule: 'Without pidfds: exit watched by a WNOHANG|WNOWAIT poll, signals by pid while unreaped',
    section: 'Kernel floor and fallbacks',
    tests: [
      "'the filter is in force only where it should be",
      "'exit code, zombie after exited, kill false after exit and after reap",
      "'kill reaches the running child and its signal is reported",
      "'ENOENT, EACCES, a bad cwd and E2BIG throw with no zombie left",
      "'new group, new session and inherited group",
      "'only fds 0-2 reach the child though the parent holds fd 100",
      "'empty signal mask, nothing ignored",
      "'4 MiB through cat with backpressure",
      "'the parent-death signal kills the child when its parent is SIGKILLed",
      "'100 cycles leave fds and zombies unchanged",
      "'close() of a running child: kill false, reaped when it exits",
      "'an unref()ed running child does not keep node alive'",
      "'inside a Worker: exit seen; the parent-death signal follows the thread",
      "'openProcess needs pidfd_open: ENOSYS on the old kernel",
      '`under the old-kernel filter pidfd_open and pidfd_send_signal fail',
      "'flock, tryLock and waitid work unchanged on the old kernel",
      "'on a kernel without pidfds the exit-status rules and the cleanup hold",
      "'on a kernel without pidfds wait watches /proc",
      "'old kernel without pidfds (seccomp): a child reaped by a foreign wait",
    ],
  },
  {
    id: 'K.close-range',
    rule: 'Without close_range (5.9): an equivalent loop, CLOSE_RANGE_CLOEXEC and the refusals included',
    section: 'Kernel floor and fallbacks',
    tests: [
      "'closeRange without the syscall closes exactly [first, last]",
      "'closeRange without the syscall honours CLOSE_RANGE_CLOEXEC",
      "'closeRange without the syscall still refuses CLOSE_RANGE_UNSHARE",
      "'closeRange without the syscall still refuses first > last",
    ],
  },
  {
    id: 'K.pidfd-group',
    rule: 'Without PIDFD_SIGNAL_PROCESS_GROUP (6.9): kill(-pgid) while the leader is reserved',
    section: 'Kernel floor and fallbacks',
    tests: ["'every group test passes with group signals forced through kill(-pgid)"],
  },
  {
    id: 'K.flock-wake',
    rule: 'Where the flock wait cannot be woken by a signal, it polls, and still waits, is granted and aborts cleanly',
    section: 'Kernel floor and fallbacks',
    tests: ['`${title}, flock still waits, is granted, aborts cleanly'],
  },
  {
    id: 'K.pidns',
    rule: 'pid namespaces are available where the tests need them (CI fails, not skips, without)',
    section: 'Kernel floor and fallbacks',
    tests: ["'pid namespaces are available for the pid-reuse tests"],
  },

  // --- The layout (docs/architecture.md): habits a build test holds ------------------------
  {
    id: 'A.core.no-js',
    rule: 'No file under native/core/ includes N-API, node-addon-api, libuv or the glue',
    section: 'docs/architecture.md',
    tests: [],
    pending: [
      "'no file under native/core/ includes N-API, node-addon-api, libuv, the glue",
      "'every source under native/core/ has its own header beside it",
      "'no header comment names a file that is not there",
    ],
  },
  {
    id: 'A.one-reader',
    rule: 'One reader each: getdents64 records, /proc/PID/stat (native/core/proc, lib/proc.ts)',
    section: 'docs/architecture.md',
    tests: [],
    pending: [
      "'one reader each: getdents64 records are declared once",
      "'readProcStat gives the state, parent, group, session and start time",
      "'readProcStat reads a command name holding spaces",
      "'readProcStat shows a stopped process as T, a zombie as Z",
    ],
  },
  {
    id: 'A.test-hooks',
    rule: 'Test-only hooks exist in a test build only, never in the production binding or a prebuild',
    section: 'docs/architecture.md',
    tests: [],
    pending: [
      '\'the addon require("procpin") loads exports no test hook',
      "'neither prebuild in the packed tarball holds a test hook",
    ],
  },

  // --- Packaging ---------------------------------------------------------------------------
  {
    id: 'P.prebuilds',
    rule: 'The tarball carries linux-x64 and linux-arm64 prebuilds (glibc ≥ 2.28), each executed; npm pack fails without one',
    section: 'Packaging',
    tests: [
      "'the tarball holds a prebuild for linux-x64 and linux-arm64",
      "'under qemu an arm64 Node loads the packed linux-arm64 prebuild",
      "'npm pack fails, and makes no tarball, when the arm64 cross compiler is missing",
      "'no build of the addon needs a glibc symbol newer than GLIBC_2.28",
    ],
  },
  {
    id: 'P.install',
    rule: 'The prebuild loads with install scripts off (npm --ignore-scripts, pnpm 10); elsewhere it builds from source',
    section: 'Packaging',
    tests: [
      "'npm install --ignore-scripts of the tarball loads the prebuild",
      "'pnpm 10 installs the tarball without running its install script",
      "'the tarball without its prebuilds builds the addon from source",
      "'npm pack gives a tarball with the prebuild; it installs into an empty project",
    ],
  },
  {
    id: 'P.bundlers',
    rule: 'A bundle that keeps procpin external finds its addon; one that inlined it says so',
    section: 'Packaging',
    tests: [
      '`an esbuild bundle (${format}) that keeps procpin external',
      '`an esbuild bundle (${format}) that inlined procpin fails',
    ],
  },
  {
    id: 'P.tarball',
    rule: 'The tarball holds nothing that points at files it does not ship; the README states its size',
    section: 'Packaging',
    tests: [
      "'the tarball ships no source map, no test, no build output",
      "'the README states the tarball size",
    ],
  },
  {
    id: 'P.build.flags',
    rule: 'Every build compiles with -Wall -Wextra -Werror and the hardening flags',
    section: 'Packaging',
    tests: [
      "'the cmake-js build compiles every source with -Wall -Wextra -Werror",
      "'node-gyp compile lines carry -Wall",
    ],
  },
  {
    id: 'P.bench',
    rule: 'The quick benchmark run completes and reports every benchmark',
    section: 'Packaging',
    tests: ["'the quick benchmark run completes"],
  },
];
