// The SPEC rules of one part: The kernel floor and fallbacks, the layout, packaging.
// scripts/rules.mjs joins the parts in the SPEC's order; see there for the shape of a rule.

/** @typedef {import('../rules.mjs').Rule} Rule */

/** @type {Rule[]} */
export const RULES_FLOOR = [
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
  {
    id: 'A.promise-worker',
    rule: 'One async-work base: every threadpool job that settles a promise is a PromiseWorker',
    section: 'docs/architecture.md',
    tests: ["'one async-work base: only native/promise_worker.h derives from Napi::AsyncWorker"],
  },
  {
    id: 'A.no-backdoor',
    rule: 'No veto or pidfd-keeping reap on a public class: the group reaches its leader through LeaderControl',
    section: 'docs/architecture.md',
    tests: ["'no backdoor on a public class"],
  },
  {
    id: 'A.size',
    rule: 'No source under lib/ or native/ over 400 lines',
    section: 'docs/architecture.md',
    tests: ["'no source under lib/ or native/ is over 400 lines"],
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
