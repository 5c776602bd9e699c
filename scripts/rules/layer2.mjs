// The SPEC rules of one part: Layer 2 (the children the addon owns) and Layer 2b (the child_process drop-in).
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_LAYER2 = [
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
      "'the main thread and four Workers spawning at once",
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
      "'once exited has resolved the pidfd is no longer watched by the event loop",
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
      "'a lost status that nobody awaits raises no unhandled rejection",
    ],
  },
  {
    id: 'L2.identity.pidfd-closed',
    rule: "Closing Child.pidfd behind procpin's back neither crashes nor makes procpin act on the next descriptor",
    section: 'Layer 2',
    tests: [
      '"closing child.pidfd behind procpin\'s back',
      '"an application\'s own pidfd of the child that took the number',
    ],
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
];
