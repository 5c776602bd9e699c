// The Layer 2 scenarios again on an "old kernel": a seccomp filter answers ENOSYS to pidfd_open,
// clone3, clone with CLONE_PIDFD, pidfd_send_signal, close_range and EINVAL to waitid(P_PIDFD)
// (test/oldkernel.mjs). Everything must still hold: exits seen by a WNOHANG|WNOWAIT poll, signals
// by pid while unreaped, descriptors closed by the loop. The same scenarios run on this kernel
// too, so that each expectation is seen to depend on the kernel only where it should (pidfd),
// and once more under a container-style policy that answers EPERM instead of ENOSYS: the same
// fallbacks, each feature probed once.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { CI, fixtures, need } from '../helpers.mjs';
import { oldKernelAvailable, runOldKernel } from '../oldkernel.mjs';

const script = join(fixtures, 'child-scenarios.mjs');
const code = `await import(${JSON.stringify(script)});`;

// fd 100 of the node process: an inherited descriptor without close-on-exec (child_process
// installs it with dup2; Node marks only the low run of inherited descriptors close-on-exec).
function extraStdio(fd) {
  const stdio = [];
  for (let i = 3; i < 100; i++) stdio.push('ignore');
  stdio.push(fd);
  return stdio;
}

function runNative() {
  return new Promise((resolve, reject) => {
    const fd = openSync('/dev/null', 'r');
    const p = cpSpawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'pipe', ...extraStdio(fd)],
    });
    closeSync(fd);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function runOld(errno) {
  const fd = openSync('/dev/null', 'r');
  try {
    return await runOldKernel(code, { extraStdio: extraStdio(fd), timeout: 120000, errno });
  } finally {
    closeSync(fd);
  }
}

const titles = {
  old: 'on an old kernel (seccomp filter)',
  eperm: 'under a seccomp policy that answers EPERM',
  native: 'on this kernel',
};
for (const kind of ['old', 'eperm', 'native']) {
  describe(titles[kind], () => {
    let results;
    let available = true;
    before(async () => {
      if (kind !== 'native' && !oldKernelAvailable()) {
        available = false;
        if (CI) throw new Error('the old-kernel filter is required under CI');
        return;
      }
      const r = kind === 'native' ? await runNative() : await runOld(kind === 'eperm' ? 'EPERM' : 'ENOSYS');
      assert.equal(r.code, 0, r.stderr);
      results = JSON.parse(r.stdout.trim().split('\n').pop());
    });
    const old = kind !== 'native';
    const value = (t, name) => {
      if (!need(t, available, 'cc and seccomp for the old-kernel filter')) return undefined;
      const r = results[name];
      assert.ok(r, `scenario ${name} did not run`);
      if (r.error) assert.fail(`${name}: ${r.error}`);
      return r.value;
    };

    test('the filter is in force only where it should be [K.no-pidfd]', (t) => {
      const v = value(t, 'kernel');
      if (v === undefined) return;
      assert.equal(v.pidfdOpen, { old: 'ENOSYS', eperm: 'EPERM', native: 'ok' }[kind]);
    });

    test('exit code, zombie after exited, kill false after exit and after reap, gone after reap [K.no-pidfd]', (t) => {
      const v = value(t, 'exitCode');
      if (v === undefined) return;
      if (old) assert.equal(v.pidfd, -1);
      else assert.ok(v.pidfd > 2);
      assert.equal(v.exitCode, 42);
      assert.equal(v.zombie, 'Z');
      assert.equal(v.stillZombie, 'Z');
      assert.equal(v.killAfterExit, false);
      assert.equal(v.poll, 42);
      assert.equal(v.reapedExitCode, 42);
      assert.equal(v.afterReap, null);
      assert.equal(v.killAfterReap, false);
    });

    test('kill reaches the running child and its signal is reported [K.no-pidfd]', (t) => {
      const v = value(t, 'signal');
      if (v === undefined) return;
      assert.deepEqual(v, { running: null, sent: true, code: 'CLD_KILLED', signal: 'SIGTERM' });
    });

    test('ENOENT, EACCES, a bad cwd and E2BIG throw with no zombie left [K.no-pidfd]', (t) => {
      const v = value(t, 'failures');
      if (v === undefined) return;
      assert.deepEqual(v.enoent, { code: 'ENOENT', syscall: 'execve', path: 'procpin-no-such-program' });
      assert.deepEqual(v.eacces, { code: 'EACCES', syscall: 'execve', path: '/dev/null' });
      assert.deepEqual(v.chdir, { code: 'ENOENT', syscall: 'chdir', path: '/nonexistent-procpin-dir' });
      assert.equal(v.e2big.code, 'E2BIG');
      assert.equal(v.zombiesAdded, 0);
    });

    test('new group, new session and inherited group [K.no-pidfd]', (t) => {
      const v = value(t, 'groups');
      if (v === undefined) return;
      assert.deepEqual(v.new, { leadsGroup: true, leadsSession: false, ourGroup: false });
      assert.deepEqual(v.session, { leadsGroup: true, leadsSession: true, ourGroup: false });
      assert.deepEqual(v.inherit, { leadsGroup: false, leadsSession: false, ourGroup: true });
    });

    test('only fds 0-2 reach the child though the parent holds fd 100 without close-on-exec [K.no-pidfd]', (t) => {
      const v = value(t, 'closeFds');
      if (v === undefined) return;
      assert.equal(v.parentFd100Cloexec, false);
      assert.deepEqual(v.closed, [0, 1, 2]);
      assert.ok(v.kept.includes(100), 'closeFds: false passes it on (the check can fail)');
    });

    test('empty signal mask, nothing ignored [K.no-pidfd]', (t) => {
      const v = value(t, 'signals');
      if (v === undefined) return;
      assert.deepEqual(v, { SigBlk: '0000000000000000', SigIgn: '0000000000000000' });
    });

    test('4 MiB through cat with backpressure [K.no-pidfd]', (t) => {
      const v = value(t, 'stdio');
      if (v === undefined) return;
      assert.deepEqual(v, { same: true, refused: true, exitCode: 0 });
    });

    test('the parent-death signal kills the child when its parent is SIGKILLed [K.no-pidfd]', (t) => {
      const v = value(t, 'parentDeath');
      if (v === undefined) return;
      assert.deepEqual(v, { wasChildOfParent: true, died: true });
    });

    test('100 cycles leave fds and zombies unchanged; 50 concurrent children all resolve [K.no-pidfd]', (t) => {
      const v = value(t, 'cycles');
      if (v === undefined) return;
      assert.deepEqual(v, { fdsAdded: 0, zombiesAdded: 0 });
      assert.deepEqual(value(t, 'concurrent'), { allRight: true });
    });

    test('close() of a running child: kill false, reaped when it exits [K.no-pidfd]', (t) => {
      const v = value(t, 'closeRunning');
      if (v === undefined) return;
      assert.deepEqual(v, { killAfterClose: false, signal: 'SIGKILL', after: null });
    });

    test('an unref()ed running child does not keep node alive [K.no-pidfd]', (t) => {
      const v = value(t, 'unrefRunning');
      if (v === undefined) return;
      assert.deepEqual(v, { exitCode: 0, childStillRan: true });
    });

    test('inside a Worker: exit seen; the parent-death signal follows the thread; no zombie [K.no-pidfd]', (t) => {
      const v = value(t, 'worker');
      if (v === undefined) return;
      assert.deepEqual(v, { exitCode: 7, sleeperReaped: true });
    });

    test('openProcess needs pidfd_open: ENOSYS on the old kernel and where a policy refuses it [K.no-pidfd]', (t) => {
      const v = value(t, 'openProcess');
      if (v === undefined) return;
      if (old) assert.deepEqual(v, { code: 'ENOSYS', syscall: 'pidfd_open' });
      else assert.equal(v, 'opened');
    });
  });
}
