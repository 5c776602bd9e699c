// The SPEC rules of one part: Layer 3a: process groups, the supervisor's end, containment.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_LAYER3A = [
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
      '`${mode}: foreground: true on a terminal: stty at once works every time',
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
      "`${mode}: a Worker's contained groups close every descriptor exactly once",
      '`${mode}: Workers terminated while their contained groups run',
      '"pidns: Workers terminated just after their group ended',
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
      "'sweepCgroups leaves a cgroup whose name no procpin makes",
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
];
