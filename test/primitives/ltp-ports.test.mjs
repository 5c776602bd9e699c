// Cases of the Linux Test Project that the suite lacked, ported against the installed package:
// flock03 (an unlock through an inherited descriptor), pidfd_send_signal01/03 (signals through
// /proc/<pid> directory descriptors, and ESRCH once that pid is someone else's), close_range01
// (CLOEXEC seen by a thread sharing the table; the CLOEXEC|UNSHARE combination from a C++ helper,
// since JavaScript refuses UNSHARE) and the child-subreaper setting, which fork does not pass on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, constants as fsc, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as procpin from '../../dist/index.js';
import { isRoot, need, pkg, root, runCmd, runNode, tmpDirFor } from '../helpers.mjs';
import { tmp } from '../oldkernel.mjs';

const C = procpin.constants;
const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);

test('flock03: a child unlocks through the descriptor it inherited, and can then lock through its own [L1.flock.sync]', async (t) => {
  const d = tmpDirFor(t);
  const file = join(d.path, 'flock03');
  writeFileSync(file, '');
  const fd = openSync(file, 'r+');
  procpin.flockSync(fd, C.LOCK_EX | C.LOCK_NB);
  const other = openSync(file, 'r');
  try {
    assert.equal(procpin.tryLock(other, 'exclusive'), false, 'the parent holds it');
    const child = procpin.spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      import * as p from ${pkg};
      import { openSync } from 'node:fs';
      const own = openSync(${JSON.stringify(file)}, 'r+');
      const out = { lockedBefore: !p.tryLock(own, 'exclusive') };
      p.flockSync(3, p.constants.LOCK_UN);   // the parent's open file description, inherited
      out.ownAfter = p.tryLock(own, 'exclusive');
      console.log(JSON.stringify(out));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit', fd] },
    );
    let text = '';
    child.stdout.on('data', (b) => (text += b));
    const info = await child.exited;
    child.reap();
    assert.equal(info.exitCode, 0);
    assert.deepEqual(JSON.parse(text), { lockedBefore: true, ownAfter: true });
    // The parent's lock went with the unlock: its description holds nothing now.
    assert.equal(procpin.tryLock(other, 'exclusive'), true);
  } finally {
    closeSync(other);
    closeSync(fd);
  }
});

test('pidfd_send_signal01: a /proc/<pid> directory descriptor is a pidfd: a signal through it reaches the process [L1.pidfd.send]', async () => {
  const child = procpin.spawn('sleep', ['30'], { stdio: 'ignore' });
  const dirfd = openSync(`/proc/${child.pid}`, fsc.O_RDONLY | fsc.O_DIRECTORY);
  try {
    procpin.pidfdSendSignal(dirfd, 0);
    procpin.pidfdSendSignal(dirfd, 'SIGTERM');
    const info = await child.exited;
    assert.deepEqual([info.code, info.signal], ['CLD_KILLED', 'SIGTERM']);
    child.reap();
    // Reaped: the directory descriptor names a process that is gone.
    assert.throws(() => procpin.pidfdSendSignal(dirfd, 0), { code: 'ESRCH', errno: -3, syscall: 'pidfd_send_signal' });
  } finally {
    closeSync(dirfd);
  }
  const self = openSync('/proc/self', fsc.O_RDONLY | fsc.O_DIRECTORY);
  try {
    procpin.pidfdSendSignal(self, 0);
    // A descriptor that is not a process directory: EBADF from the kernel.
    const file = openSync('/proc/self/status', 'r');
    try {
      assert.throws(() => procpin.pidfdSendSignal(file, 0), { code: 'EBADF', errno: -9, syscall: 'pidfd_send_signal' });
    } finally {
      closeSync(file);
    }
  } finally {
    closeSync(self);
  }
});

test('pidfd_send_signal03: through the /proc/<pid> descriptor of a reaped process, a signal never reaches the next process with that pid (ESRCH) [F.stranger.never]', async (t) => {
  if (
    !need(t, isRoot && spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0, 'root and unshare --pid --fork')
  )
    return;
  // In a pid namespace of its own (with its own /proc), so that ns_last_pid is ours alone.
  const r = await runCmd('unshare', [
    '--pid',
    '--fork',
    '--mount-proc',
    process.execPath,
    '--input-type=module',
    '-e',
    `
    import * as p from ${pkgUrl};
    import { openSync, writeFileSync, constants as fsc } from 'node:fs';
    const out = {};
    for (let tries = 0; tries < 3 && out.same === undefined; tries++) {
      const first = p.spawn('sleep', ['30'], { stdio: 'ignore' });
      const dirfd = openSync('/proc/' + first.pid, fsc.O_RDONLY | fsc.O_DIRECTORY);
      first.kill('SIGKILL'); await first.exited; first.reap();
      writeFileSync('/proc/sys/kernel/ns_last_pid', String(first.pid - 1));
      const second = p.spawn('sleep', ['30'], { stdio: 'ignore' });
      if (second.pid === first.pid) {
        out.same = true;
        try { p.pidfdSendSignal(dirfd, 'SIGUSR1'); out.sent = 'sent'; } catch (e) { out.sent = e.code; }
        out.secondRuns = second.poll() === null;
      }
      second.kill('SIGKILL'); await second.exited; second.reap();
    }
    console.log(JSON.stringify(out));`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { same: true, sent: 'ESRCH', secondRuns: true });
});

test('close_range01: CLOSE_RANGE_CLOEXEC set on the main thread is seen by a Worker sharing the table, and the other way round [L1.close-range.exact]', async () => {
  const high = [0, 1, 2, 3].map(() => openSync('/dev/null', 'r'));
  const r = await runNode(
    `import * as p from ${pkgUrl};
    import { openSync, readFileSync } from 'node:fs';
    import { Worker } from 'node:worker_threads';
    const flags = (fd) => Number.parseInt(readFileSync('/proc/self/fdinfo/' + fd, 'utf8').match(/flags:\\s*(\\d+)/)[1], 8) & 0o2000000 ? 1 : 0;
    // Without close-on-exec, as LTP's case has them: inherited ones above a gap.
    const fds = [100, 101, 102, 103];
    const out = { before: fds.map(flags) };
    p.closeRange(100, 101, p.constants.CLOSE_RANGE_CLOEXEC);
    const code = "import { parentPort } from 'node:worker_threads'; import { readFileSync } from 'node:fs'; const p = await import(" + JSON.stringify(${pkgUrl}) + ");" +
      "const flags = (fd) => Number.parseInt(readFileSync('/proc/self/fdinfo/' + fd, 'utf8').match(/flags:\\\\s*(\\\\d+)/)[1], 8) & 0o2000000 ? 1 : 0;" +
      "const seen = [100, 101, 102, 103].map(flags); p.closeRange(102, 103, p.constants.CLOSE_RANGE_CLOEXEC); parentPort.postMessage(seen);";
    out.workerSaw = await new Promise((res) => new Worker(new URL('data:text/javascript,' + encodeURIComponent(code))).once('message', res));
    out.mainSeesWorkers = fds.map(flags);
    console.log(JSON.stringify(out));`,
    { extraStdio: [...Array(97).fill('ignore'), ...high] },
  );
  for (const fd of high) closeSync(fd);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    before: [0, 0, 0, 0],
    workerSaw: [1, 1, 0, 0],
    mainSeesWorkers: [1, 1, 1, 1],
  });
});

test("close_range01: plain, UNSHARE, CLOEXEC and CLOEXEC|UNSHARE through a table shared by clone(CLONE_FILES), for the syscall and for procpin's loop [L1.close-range.exact]", async (t) => {
  mkdirSync(tmp, { recursive: true });
  const bin = join(tmp, 'close_range_ltp');
  const cc = spawnSync(
    'c++',
    [
      '-std=c++17',
      '-O1',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-I${join(root, 'native', 'core')}`,
      '-o',
      bin,
      join(root, 'test', 'fixtures', 'close_range_ltp.cc'),
      join(root, 'native', 'core', 'sys.cc'),
      join(root, 'native', 'core', 'dir.cc'),
    ],
    { encoding: 'utf8' },
  );
  if (!need(t, cc.status === 0, `a C++ compiler: ${cc.error?.message ?? cc.stderr}`)) return;
  const r = spawnSync(bin, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.deepEqual(lines, [
    'syscall 0 ok ok',
    'syscall 1 ok ok',
    'syscall 2 ok ok',
    'syscall 3 ok ok',
    'loop 0 ok ok',
    'loop 1 ok ok',
    'loop 2 ok ok',
    'loop 3 ok ok',
  ]);
  // And from JavaScript the combination is refused, closing and marking nothing.
  const fd = openSync('/dev/null', 'r');
  try {
    assert.throws(() => procpin.closeRange(fd, fd, C.CLOSE_RANGE_CLOEXEC | C.CLOSE_RANGE_UNSHARE), {
      code: 'ERR_INVALID_ARG_VALUE',
      name: 'TypeError',
    });
    assert.equal(
      Number.parseInt(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').match(/flags:\s*(\d+)/)[1], 8) & 0o2000000,
      0o2000000,
      'Node opened it close-on-exec; unchanged',
    );
  } finally {
    closeSync(fd);
  }
});

test('prctl: the child-subreaper setting is not inherited by a child, while the parent keeps it [L1.prctl.subreaper]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    p.setChildSubreaper(true);
    const c = p.spawn(process.execPath, ['--input-type=module', '-e', 'import * as p from ' + JSON.stringify(${pkgUrl}) + '; console.log(p.isChildSubreaper())'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    c.stdout.on('data', (b) => (text += b));
    await c.exited; c.reap();
    console.log(JSON.stringify({ parent: p.isChildSubreaper(), child: text.trim() }));`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { parent: true, child: 'false' });
});
