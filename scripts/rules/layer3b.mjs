// The SPEC rules of one part: Layer 3b: dead-pid sweeping.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_LAYER3B = [
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
];
