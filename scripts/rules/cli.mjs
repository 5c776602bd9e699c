// The SPEC rules of one part: The command line.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_CLI = [
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
    tests: ["'procpin run --contain[=MODE] uses it", "'procpin run --contain=pidns on a terminal"],
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
];
