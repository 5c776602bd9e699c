// SPEC Layer 1 against the real kernel: the constants, waitid and pidfds (close_range and prctl:
// close-range.test.mjs, prctl.test.mjs). Anything that changes process-wide state runs in a child
// process. The record is the kernel's own: /proc/PID/stat, /proc/self/fdinfo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import * as procpin from '../../dist/index.js';
import { isGone, liveMembers, need, procLib, procState, root, runNode, waitFor } from '../helpers.mjs';
import { binding } from '../../dist/binding.js';

const { constants: C } = procpin;
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
    (/** @type {import('procpin').ProcpinSystemError} */ err) => {
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
      (/** @type {import('procpin').ProcpinSystemError} */ e) =>
        e.code === 'EINVAL' && e.errno === -22 && e.syscall === 'pidfd_send_signal',
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

test('waitid without WNOHANG on a process that is not our child fails with ECHILD at once [L1.waitid.info]', () => {
  assert.throws(
    () => procpin.waitid(C.P_PID, 1, C.WEXITED | C.WNOWAIT),
    (/** @type {import('procpin').ProcpinSystemError} */ e) => e.code === 'ECHILD' && e.pid === 1,
  );
  assert.equal(procState(process.pid), 'R');
});

test("a Worker's pidfd closed with closeRange(fd, fd), as the README says, draws no warning from Node and leaves no descriptor; fs.closeSync would [L1.pidfd.open]", async () => {
  const code = `
    import { Worker } from 'node:worker_threads';
    const w = new Worker(\`
      const { parentPort } = require('node:worker_threads');
      const { readdirSync, closeSync } = require('node:fs');
      const { pidfdOpen, closeRange } = require(${pkgUrl.replace(/"/g, '\\"')});
      const close = process.argv.includes('fs') ? (fd) => closeSync(fd) : (fd) => closeRange(fd, fd);
      const before = readdirSync('/proc/self/fd').length;
      for (let i = 0; i < 10; i++) close(pidfdOpen(process.pid));
      parentPort.postMessage({ before, after: readdirSync('/proc/self/fd').length });\`,
      { eval: true, argv: process.argv.slice(1), execArgv: [] });
    const out = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
    console.log(JSON.stringify(out));`;
  for (const how of ['closeRange', 'fs']) {
    const r = await runNode(code, { args: [how] });
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1));
    assert.equal(out.after, out.before, `${how}: descriptors left`);
    if (how === 'closeRange') assert.equal(r.stderr, '');
    else assert.match(r.stderr, /closed but not opened in unmanaged mode/);
  }
});
