// @ts-nocheck -- not type-checked yet: its deliberate wrong-type calls (abuse, validation) are not marked with @ts-expect-error and its inferred types are not declared.
// SPEC Layer 1 against the real kernel: waitid, pidfds, close_range, the parent-death signal
// and the child subreaper. Anything that changes process-wide state runs in a child process.
// The record is the kernel's own: /proc/PID/stat, /proc/self/fd, /proc/self/fdinfo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import * as procpin from '../../dist/index.js';
import {
  isGone,
  liveMembers,
  need,
  procLib,
  procStat,
  procState,
  root,
  runNode,
  testBinding,
  waitFor,
} from '../helpers.mjs';
import { binding } from '../../dist/binding.js';
import { CLOSE_RANGE_PRELUDE, HIGH } from './close-range-helpers.mjs';

const { constants: C } = procpin;
const bindingUrl = JSON.stringify(`${root}/dist/binding.js`);
const pkgUrl = JSON.stringify(`${root}/dist/index.js`);

/**
 * Runs `code` (an ES module) in a node process that has a child libuv knows nothing of: the shell
 * starts `background` and then execs node, so the background job becomes node's own child, which
 * libuv never reaps. The child's pid is process.argv[1] (as a string). Resolves with the JSON the
 * code printed as its last line.
 */
async function withForeignChild(background, code) {
  const prelude = `import * as p from ${pkgUrl}; import { readFileSync } from 'node:fs';
    import { procState as state } from ${procLib};
    const { constants: C } = p; const child = Number(process.argv[1]);
    const out = {}; const errOf = (f) => { try { f(); return null; } catch (e) {
      return { code: e.code, errno: e.errno, syscall: e.syscall, message: e.message, pid: e.pid, fd: e.fd }; } };
  `;
  const r = await new Promise((resolve, reject) => {
    const c = spawn('sh', ['-c', `${background} & exec "$NODE" --input-type=module -e "$CODE" $!`], {
      env: { ...process.env, NODE: process.execPath, CODE: `${prelude}\n${code}\nconsole.log(JSON.stringify(out));` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  assert.equal(r.code, 0, `fixture failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('constants carry the kernel ABI values [L1.constants]', () => {
  assert.deepEqual(
    [C.P_ALL, C.P_PID, C.P_PGID, C.P_PIDFD, C.WEXITED, C.WSTOPPED, C.WCONTINUED, C.WNOHANG, C.WNOWAIT],
    [0, 1, 2, 3, 4, 2, 8, 1, 0x01000000],
  );
  assert.deepEqual(
    [C.CLD_EXITED, C.CLD_KILLED, C.CLD_DUMPED, C.CLD_TRAPPED, C.CLD_STOPPED, C.CLD_CONTINUED],
    [1, 2, 3, 4, 5, 6],
  );
  assert.deepEqual(
    [C.PIDFD_NONBLOCK, C.PIDFD_SIGNAL_THREAD, C.PIDFD_SIGNAL_THREAD_GROUP, C.PIDFD_SIGNAL_PROCESS_GROUP],
    [0o4000, 1, 2, 4],
  );
  assert.deepEqual([C.CLOSE_RANGE_UNSHARE, C.CLOSE_RANGE_CLOEXEC], [2, 4]);
  assert.deepEqual([C.LOCK_SH, C.LOCK_EX, C.LOCK_NB, C.LOCK_UN], [1, 2, 4, 8]);
  assert.ok(Object.isFrozen(C));
});

test('waitid with WNOWAIT leaves the child a zombie, and a second wait without it reaps it [L1.waitid.wnowait]', async () => {
  const out = await withForeignChild(
    'sleep 0.05',
    `
    out.first = p.waitid(C.P_PID, child, C.WEXITED | C.WNOWAIT);
    out.stateAfterFirst = state(child);
    out.again = p.waitid(C.P_PID, child, C.WEXITED | C.WNOWAIT | C.WNOHANG);
    out.stateAfterAgain = state(child);
    out.reaped = p.waitid(C.P_PID, child, C.WEXITED);
    out.stateAfterReap = state(child);
    out.after = errOf(() => p.waitid(C.P_PID, child, C.WEXITED | C.WNOHANG));
    out.child = child; out.uid = process.getuid();
  `,
  );
  const expected = { pid: out.child, uid: out.uid, code: 'CLD_EXITED', status: 0, exitCode: 0, signal: null };
  assert.deepEqual(out.first, expected);
  assert.equal(out.stateAfterFirst, 'Z');
  assert.deepEqual(out.again, expected);
  assert.equal(out.stateAfterAgain, 'Z');
  assert.deepEqual(out.reaped, expected);
  assert.equal(out.stateAfterReap, null);
  assert.deepEqual(out.after, {
    code: 'ECHILD',
    errno: -10,
    syscall: 'waitid',
    message: 'ECHILD: no child processes, waitid',
    pid: out.child,
  });
});

test('waitid reports an exit code, and a signal death as CLD_KILLED with the signal name [L1.waitid.info]', async () => {
  const out = await withForeignChild(
    'sh -c "exit 42"',
    `
    out.exited = p.waitid(C.P_PID, child, C.WEXITED);
  `,
  );
  assert.equal(out.exited.code, 'CLD_EXITED');
  assert.equal(out.exited.exitCode, 42);
  assert.equal(out.exited.status, 42);
  assert.equal(out.exited.signal, null);

  const killed = await withForeignChild(
    'sleep 30',
    `
    out.before = p.waitid(C.P_PID, child, C.WEXITED | C.WNOHANG);
    out.stateBefore = state(child);
    process.kill(child, 'SIGKILL');
    out.info = p.waitid(C.P_PID, child, C.WEXITED);
  `,
  );
  assert.equal(killed.before, null, 'WNOHANG with a running child gives null');
  assert.match(killed.stateBefore, /^[RS]$/);
  assert.equal(killed.info.code, 'CLD_KILLED');
  assert.equal(killed.info.signal, 'SIGKILL');
  assert.equal(killed.info.status, 9);
  assert.equal(killed.info.exitCode, null);
});

test('waitid reports stops and continuations with WSTOPPED and WCONTINUED [L1.waitid.info]', async () => {
  const out = await withForeignChild(
    'sleep 30',
    `
    process.kill(child, 'SIGSTOP');
    out.stopped = p.waitid(C.P_PID, child, C.WSTOPPED);
    process.kill(child, 'SIGCONT');
    out.continued = p.waitid(C.P_PID, child, C.WCONTINUED);
    process.kill(child, 'SIGKILL');
    out.killed = p.waitid(C.P_PID, child, C.WEXITED);
  `,
  );
  assert.equal(out.stopped.code, 'CLD_STOPPED');
  assert.equal(out.stopped.signal, 'SIGSTOP');
  assert.equal(out.continued.code, 'CLD_CONTINUED');
  assert.equal(out.continued.signal, 'SIGCONT');
  assert.equal(out.killed.code, 'CLD_KILLED');
});

test('waitid(P_PGID) waits for a member of that process group [L1.waitid.info]', async () => {
  // setsid in the background job (not a group leader) makes it a session and group leader itself.
  const out = await withForeignChild(
    'setsid sleep 0.05',
    `
    out.pgid = Number(readFileSync('/proc/' + child + '/stat', 'utf8').split(') ')[1].split(' ')[2]);
    out.otherGroup = errOf(() => p.waitid(C.P_PGID, process.pid, C.WEXITED | C.WNOWAIT | C.WNOHANG));
    out.info = p.waitid(C.P_PGID, child, C.WEXITED);
    out.child = child;
  `,
  );
  assert.equal(out.pgid, out.child);
  assert.equal(out.otherGroup.code, 'ECHILD', 'no child of ours is in the group named by our pid');
  assert.equal(out.info.pid, out.child);
  assert.equal(out.info.code, 'CLD_EXITED');
});

test('a pidfd names its process in fdinfo, reports the exit before the reap, and waitid(P_PIDFD) reaps [L1.pidfd.open]', async () => {
  const out = await withForeignChild(
    'sleep 30',
    `
    const fd = p.pidfdOpen(child);
    out.fdinfo = readFileSync('/proc/self/fdinfo/' + fd, 'utf8');
    out.fdFlags = out.fdinfo.match(/flags:\\s*(\\d+)/)[1];
    out.running = p.waitid(C.P_PIDFD, fd, C.WEXITED | C.WNOWAIT | C.WNOHANG);
    process.kill(child, 'SIGTERM');
    let info = null; const start = Date.now();
    while (info === null && Date.now() - start < 5000) info = p.waitid(C.P_PIDFD, fd, C.WEXITED | C.WNOWAIT | C.WNOHANG);
    out.exitSeen = info; out.stateAtExit = state(child);
    out.reaped = p.waitid(C.P_PIDFD, fd, C.WEXITED);
    out.stateAfterReap = state(child);
    out.again = errOf(() => p.waitid(C.P_PIDFD, fd, C.WEXITED | C.WNOHANG));
    out.fdinfoAfter = readFileSync('/proc/self/fdinfo/' + fd, 'utf8');
    out.signalAfterReap = errOf(() => p.pidfdSendSignal(fd, 0));
    out.openAfterReap = errOf(() => p.pidfdOpen(child));
    out.child = child; out.fd = fd;
  `,
  );
  assert.match(out.fdinfo, new RegExp(`^Pid:\\s+${out.child}$`, 'm'));
  assert.ok(Number.parseInt(out.fdFlags, 8) & 0o2000000, 'pidfd is O_CLOEXEC');
  assert.equal(out.running, null);
  assert.equal(out.exitSeen.pid, out.child);
  assert.equal(out.exitSeen.signal, 'SIGTERM');
  assert.equal(out.stateAtExit, 'Z', 'exit seen through the pidfd while the child is still a zombie');
  assert.equal(out.reaped.pid, out.child);
  assert.equal(out.stateAfterReap, null);
  assert.equal(out.again.code, 'ECHILD');
  assert.equal(out.again.fd, out.fd);
  assert.match(out.fdinfoAfter, /^Pid:\s+-1$/m);
  assert.deepEqual(out.signalAfterReap, {
    code: 'ESRCH',
    errno: -3,
    syscall: 'pidfd_send_signal',
    message: 'ESRCH: no such process, pidfd_send_signal',
    fd: out.fd,
  });
  assert.equal(out.openAfterReap.code, 'ESRCH');
  assert.equal(out.openAfterReap.pid, out.child);
});

test('pidfdSendSignal delivers a signal by name or number and probes with 0 [L1.pidfd.send]', async () => {
  const out = await withForeignChild(
    'sleep 30',
    `
    const fd = p.pidfdOpen(child);
    out.probe = errOf(() => p.pidfdSendSignal(fd, 0));
    out.stateAfterProbe = state(child);
    p.pidfdSendSignal(fd, 'SIGTERM');
    out.info = p.waitid(C.P_PIDFD, fd, C.WEXITED);
  `,
  );
  assert.equal(out.probe, null);
  assert.match(out.stateAfterProbe, /^[RS]$/);
  assert.equal(out.info.code, 'CLD_KILLED');
  assert.equal(out.info.signal, 'SIGTERM');

  const byNumber = await withForeignChild(
    'sleep 30',
    `
    const fd = p.pidfdOpen(child);
    p.pidfdSendSignal(fd, 10);
    out.info = p.waitid(C.P_PIDFD, fd, C.WEXITED);
  `,
  );
  assert.equal(byNumber.info.signal, 'SIGUSR1');
});

test('a PIDFD_NONBLOCK pidfd makes a blocking waitid on a running child fail with EAGAIN [L1.pidfd.open]', async () => {
  const out = await withForeignChild(
    'sleep 30',
    `
    const fd = p.pidfdOpen(child, C.PIDFD_NONBLOCK);
    out.flags = Number.parseInt(readFileSync('/proc/self/fdinfo/' + fd, 'utf8').match(/flags:\\s*(\\d+)/)[1], 8);
    out.blocking = errOf(() => p.waitid(C.P_PIDFD, fd, C.WEXITED));
    out.nohang = p.waitid(C.P_PIDFD, fd, C.WEXITED | C.WNOHANG);
    p.pidfdSendSignal(fd, 'SIGKILL');
    out.after = null;  // a blocking wait would be EAGAIN until the exit: look until it is there
    while (out.after === null) out.after = p.waitid(C.P_PIDFD, fd, C.WEXITED | C.WNOHANG);
  `,
  );
  assert.ok(out.flags & 0o4000, 'O_NONBLOCK in fdinfo flags');
  assert.equal(out.blocking.code, 'EAGAIN');
  assert.equal(out.blocking.errno, -11);
  assert.equal(out.nohang, null);
  assert.equal(out.after.signal, 'SIGKILL');
});

test('pidfdOpen on a pid that names no process throws a Node-shaped ESRCH [C.error.shape]', () => {
  // A pid above pid_max never exists.
  assert.throws(
    () => procpin.pidfdOpen(0x3fffffff),
    (err) => {
      assert.equal(err.code, 'ESRCH');
      assert.equal(err.errno, -3);
      assert.equal(err.syscall, 'pidfd_open');
      assert.equal(err.pid, 0x3fffffff);
      assert.equal(err.message, 'ESRCH: no such process, pidfd_open');
      return true;
    },
  );
});

// `sh -c script` leading a new session (and group); SIGKILLed with its group after the test.
// Resolves once the script has written its first output.
async function groupLeader(t, script) {
  const leader = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => {
    try {
      process.kill(-leader.pid, 'SIGKILL');
    } catch {}
  });
  await new Promise((r) => leader.stdout.once('data', r));
  return leader;
}

test("pidfdSendSignal with PIDFD_SIGNAL_PROCESS_GROUP reaches every member of the leader's group [L1.pidfd.send]", async (t) => {
  if (!need(t, binding.hasPidfdGroupSignal(), 'PIDFD_SIGNAL_PROCESS_GROUP (Linux 6.9+)')) return;
  // A new session: sh leads the group; its two sleeps are members.
  const leader = await groupLeader(t, 'sleep 30 & sleep 30 & echo ready; wait');
  const pgid = leader.pid;
  await waitFor(() => liveMembers(pgid).length === 3, { what: 'leader and two members' });
  const fd = procpin.pidfdOpen(leader.pid);
  try {
    assert.throws(
      () => procpin.pidfdSendSignal(fd, 0, C.PIDFD_SIGNAL_THREAD | C.PIDFD_SIGNAL_PROCESS_GROUP),
      (e) => e.code === 'EINVAL' && e.errno === -22 && e.syscall === 'pidfd_send_signal',
    );
    assert.equal(liveMembers(pgid).length, 3, 'the EINVAL call sent nothing');
    procpin.pidfdSendSignal(fd, 'SIGKILL', C.PIDFD_SIGNAL_PROCESS_GROUP);
    await waitFor(() => liveMembers(pgid).length === 0, { what: 'every member gone' });
  } finally {
    closeSync(fd);
  }
});

test('PIDFD_SIGNAL_THREAD_GROUP signals only the process, not its group [L1.pidfd.send]', async (t) => {
  const leader = await groupLeader(t, 'sleep 30 & echo ready; wait');
  await waitFor(() => liveMembers(leader.pid).length === 2, { what: 'leader and member' });
  const fd = procpin.pidfdOpen(leader.pid);
  try {
    procpin.pidfdSendSignal(fd, 'SIGKILL', C.PIDFD_SIGNAL_THREAD_GROUP);
    await waitFor(() => isGone(leader.pid), { what: 'leader gone' });
    assert.equal(liveMembers(leader.pid).length, 1, 'the member lives on');
  } finally {
    closeSync(fd);
  }
});

// close_range: run in a child so that closing descriptors cannot hurt the test runner. The child
// inherits six /dev/null descriptors at 100..105 without O_CLOEXEC (node marks inherited
// descriptors close-on-exec only up to the first gap; 3..99 are a gap here), so the CLOEXEC flag
// starts clear. Listings count only those six (readdir's own descriptor comes and goes).
function closeRangeScript(call) {
  return `import * as p from ${pkgUrl}; import { binding } from ${bindingUrl};
    import { readdirSync, readFileSync, readlinkSync } from 'node:fs';${CLOSE_RANGE_PRELUDE}
    const out = { opened, targets: opened.map((x) => readlinkSync('/proc/self/fd/' + x)) };
    ${call}
    console.log(JSON.stringify(out));`;
}

async function runClose(call, env = {}) {
  const devnull = HIGH.map(() => openSync('/dev/null', 'r'));
  const extraStdio = [];
  for (let i = 3; i < 100; i++) extraStdio.push('ignore');
  extraStdio.push(...devnull);
  const r = await runNode(closeRangeScript(call), { env, extraStdio });
  for (const fd of devnull) closeSync(fd);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.deepEqual(
    out.targets,
    HIGH.map(() => '/dev/null'),
    'the child got its six descriptors',
  );
  return out;
}

// The loop alone is a test-only export: the test build has it.
for (const [label, fn, env] of [
  ['closeRange', 'p.closeRange', {}],
  [
    'the close loop fallback',
    '((a, b = 0xffffffff, f = 0) => { const r = binding.closeRangeLoop(a, b, f); if (r < 0) { const e = new Error(String(r)); e.code = r === -22 ? "EINVAL" : String(r); e.errno = r; throw e; } })',
    { PROCPIN_BINDING: testBinding },
  ],
]) {
  test(`${label} closes exactly the descriptors in [first, last], checked in /proc/self/fd [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      close(b, d);
      out.after = fds();
      close(f);  // last defaults to ~0U
      out.afterOpenEnded = fds();`,
      env,
    );
    const [a, b, c, d, e, f] = out.opened;
    assert.deepEqual(
      [b, c, d].filter((x) => out.after.includes(x)),
      [],
    );
    assert.ok(out.after.includes(a) && out.after.includes(e) && out.after.includes(f));
    assert.deepEqual(out.afterOpenEnded, [a, e], 'f closed by the open-ended range');
  });

  test(`${label} with CLOSE_RANGE_CLOEXEC sets O_CLOEXEC in fdinfo flags and closes nothing [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      out.before = [a, b, c, d].map(flags);
      close(b, c, C.CLOSE_RANGE_CLOEXEC);
      out.after = [a, b, c, d].map(flags);
      out.open = fds();`,
      env,
    );
    const O_CLOEXEC = 0o2000000;
    assert.deepEqual(
      out.before.map((x) => x & O_CLOEXEC),
      [0, 0, 0, 0],
    );
    assert.deepEqual(
      out.after.map((x) => (x & O_CLOEXEC) !== 0),
      [false, true, true, false],
    );
    assert.ok(
      out.opened.every((x) => out.open.includes(x)),
      'all still open',
    );
  });

  test(`${label} refuses CLOSE_RANGE_UNSHARE on a JavaScript thread, closing nothing [L1.close-range.unshare]`, async () => {
    // A private table would leave libuv's threads acting on the numbers of the shared one
    // (test/primitives/ltp-ports.test.mjs checks the kernel's and the loop's UNSHARE from a C++ helper).
    const out = await runClose(
      `
      const close = ${fn};
      out.refused = errOf(() => close(b, c, C.CLOSE_RANGE_UNSHARE));
      out.open = fds();`,
      env,
    );
    const [, b, c] = out.opened;
    assert.ok(out.open.includes(b) && out.open.includes(c));
    if (label === 'closeRange') assert.equal(out.refused.code, 'ERR_INVALID_ARG_VALUE');
    else assert.deepEqual([out.refused.code, out.refused.errno], ['EINVAL', -22]);
  });

  test(`${label} refuses first > last and unknown flags with EINVAL, closing nothing [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      out.reversed = errOf(() => close(d, b));
      out.unknown = errOf(() => close(b, d, 1));
      out.open = fds();`,
      env,
    );
    assert.equal(out.reversed.code, 'EINVAL');
    assert.equal(out.reversed.errno, -22);
    assert.equal(out.unknown.code, 'EINVAL');
    assert.ok(out.opened.every((x) => out.open.includes(x)));
    if (label === 'closeRange') {
      assert.equal(out.reversed.syscall, 'close_range');
      assert.equal(out.reversed.message, 'EINVAL: invalid argument, close_range');
    }
  });
}

test('setParentDeathSignal round-trips through getParentDeathSignal, by name and number, and 0 clears it [L1.prctl.pdeathsig]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    const out = [p.getParentDeathSignal()];
    p.setParentDeathSignal('SIGTERM'); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal(9); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal('SIGRTMIN+2'); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal(0); out.push(p.getParentDeathSignal());
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [0, 15, 9, 36, 0]);
});

test('a grandchild that set a parent-death signal dies when its parent is SIGKILLed; one that did not lives on [L1.prctl.pdeathsig]', async (t) => {
  // parent (node) spawns two grandchildren (node); only `armed` calls setParentDeathSignal. The
  // signal belongs to the grandchild and fires when the thread that forked it (the parent's main
  // thread, where libuv forks) exits.
  const grandchild = (arm) => `import * as p from ${pkgUrl};
    const ppid = process.ppid;
    ${arm ? "p.setParentDeathSignal('SIGKILL');" : ''}
    if (process.ppid !== ppid) process.exit(3);  // the parent died before the prctl: no signal will come
    console.log('ready ' + p.getParentDeathSignal());
    setInterval(() => {}, 1000);`;
  const parent = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import { spawn } from 'node:child_process';
    const start = (code) => new Promise((resolve) => {
      const c = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
      c.stdout.once('data', (d) => resolve({ pid: c.pid, said: String(d).trim() }));
    });
    const armed = await start(${JSON.stringify(grandchild(true))});
    const control = await start(${JSON.stringify(grandchild(false))});
    console.log(JSON.stringify({ armed, control }));
    setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(String(d))));
  const { armed, control } = JSON.parse(line);
  t.after(() => {
    for (const pid of [armed.pid, control.pid])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
  });
  assert.equal(armed.said, 'ready 9');
  assert.equal(control.said, 'ready 0');
  assert.equal(procStat(armed.pid).ppid, parent.pid);
  const exited = new Promise((r) => parent.once('exit', r));
  parent.kill('SIGKILL');
  await exited;
  await waitFor(() => isGone(armed.pid), { what: 'the armed grandchild to die' });
  assert.ok(!isGone(control.pid), 'the unarmed grandchild is still alive');
  assert.notEqual(procStat(control.pid).ppid, parent.pid);
});

test('setChildSubreaper round-trips, and an orphaned grandchild is re-parented to the subreaper [L1.prctl.subreaper]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    import { execFileSync } from 'node:child_process'; import { readFileSync } from 'node:fs';
    const ppidOf = (pid) => Number(readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1]);
    const out = { before: p.isChildSubreaper() };
    p.setChildSubreaper(true); out.on = p.isChildSubreaper();
    // sh exits at once; its background sleep is orphaned and must come to us, not to init.
    out.orphan = Number(execFileSync('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }));
    out.orphanPpid = ppidOf(out.orphan);
    process.kill(out.orphan, 'SIGKILL');
    out.reaped = p.waitid(p.constants.P_PID, out.orphan, p.constants.WEXITED);
    p.setChildSubreaper(false); out.off = p.isChildSubreaper();
    out.self = process.pid;
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.before, false);
  assert.equal(out.on, true);
  assert.equal(out.orphanPpid, out.self, 'the orphan was re-parented to the subreaper');
  assert.equal(out.reaped.pid, out.orphan);
  assert.equal(out.reaped.signal, 'SIGKILL');
  assert.equal(out.off, false);
});

test('waitid without WNOHANG on a process that is not our child fails with ECHILD at once [L1.waitid.info]', () => {
  assert.throws(
    () => procpin.waitid(C.P_PID, 1, C.WEXITED | C.WNOWAIT),
    (e) => e.code === 'ECHILD' && e.pid === 1,
  );
  assert.equal(procState(process.pid), 'R');
});
