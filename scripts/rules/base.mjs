// The SPEC rules of one part: The three facts and the conventions.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_BASE = [
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
      "'the addon refuses an out array that is not an Int32Array",
      "'an env value that cannot become a string is refused",
      "'args with a hole are refused with ERR_INVALID_ARG_TYPE",
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
      "'pidns: a spawn whose procpin-init someone else stopped returns without waiting for it",
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
];
