// Layer 1 on a simulated old kernel (test/oldkernel.mjs: a seccomp filter answering ENOSYS to
// pidfd_open, pidfd_send_signal, close_range, clone3, and EINVAL to waitid(P_PIDFD)): closeRange
// falls back to its loop with the same semantics, the missing calls fail with Node-shaped
// errors, and flock and waitid still work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { need, root } from '../helpers.mjs';
import { oldKernelAvailable, oldKernelErrno, runOldKernel } from '../oldkernel.mjs';
import { CLOSE_RANGE_PRELUDE, HIGH } from './close-range-helpers.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);

/** Runs `body` under the filter with /dev/null at 100..105 (no O_CLOEXEC); returns its `out`. */
async function underOldKernel(t, body) {
  if (!need(t, oldKernelAvailable(), 'a C compiler and seccomp for the old-kernel filter')) return null;
  const devnull = HIGH.map(() => openSync('/dev/null', 'r'));
  /** @type {Array<'ignore' | number>} */
  const extraStdio = [];
  for (let i = 3; i < 100; i++) extraStdio.push('ignore');
  extraStdio.push(...devnull);
  try {
    const r = await runOldKernel(
      `import * as p from ${pkgUrl};
      import { readdirSync, readFileSync } from 'node:fs';${CLOSE_RANGE_PRELUDE}
      const out = { start: fds() };
      ${body}
      console.log(JSON.stringify(out));`,
      { extraStdio, timeout: 20000 },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.deepEqual(out.start, HIGH, 'the child got its six descriptors');
    return out;
  } finally {
    for (const fd of devnull) closeSync(fd);
  }
}

test(`under the old-kernel filter pidfd_open and pidfd_send_signal fail with ${oldKernelErrno}, waitid(P_PIDFD) with EINVAL [K.no-pidfd]`, async (t) => {
  const out = await underOldKernel(
    t,
    `
    out.seccomp = readFileSync('/proc/self/status', 'utf8').match(/^Seccomp:\\s*(\\d+)/m)[1];
    out.open = errOf(() => p.pidfdOpen(process.pid));
    out.send = errOf(() => p.pidfdSendSignal(0, 0));
    out.waitid = errOf(() => p.waitid(C.P_PIDFD, 0, C.WEXITED | C.WNOHANG));`,
  );
  if (!out) return;
  assert.equal(out.seccomp, '2', 'a seccomp filter is installed');
  assert.deepEqual(
    out.open,
    oldKernelErrno === 'EPERM'
      ? { code: 'EPERM', errno: -1, syscall: 'pidfd_open', message: 'EPERM: operation not permitted, pidfd_open' }
      : { code: 'ENOSYS', errno: -38, syscall: 'pidfd_open', message: 'ENOSYS: function not implemented, pidfd_open' },
  );
  assert.equal(out.send.code, oldKernelErrno);
  assert.equal(out.send.syscall, 'pidfd_send_signal');
  assert.equal(out.waitid.code, 'EINVAL');
});

test('closeRange without the syscall closes exactly [first, last] through its loop [K.close-range]', async (t) => {
  const out = await underOldKernel(
    t,
    `
    p.closeRange(b, d);
    out.after = fds();
    p.closeRange(f);
    out.openEnded = fds();`,
  );
  if (!out) return;
  const [a, , , , e, f] = HIGH;
  assert.deepEqual(out.after, [a, e, f]);
  assert.deepEqual(out.openEnded, [a, e]);
});

test('closeRange without the syscall honours CLOSE_RANGE_CLOEXEC: O_CLOEXEC in fdinfo, nothing closed [K.close-range]', async (t) => {
  const out = await underOldKernel(
    t,
    `
    out.before = opened.map(flags);
    p.closeRange(b, c, C.CLOSE_RANGE_CLOEXEC);
    out.after = opened.map(flags);
    out.open = fds();`,
  );
  if (!out) return;
  const O_CLOEXEC = 0o2000000;
  assert.deepEqual(
    out.before.map((x) => x & O_CLOEXEC),
    [0, 0, 0, 0, 0, 0],
  );
  assert.deepEqual(
    out.after.map((x) => (x & O_CLOEXEC) !== 0),
    [false, true, true, false, false, false],
  );
  assert.deepEqual(out.open, HIGH);
});

test('closeRange without the syscall still refuses CLOSE_RANGE_UNSHARE on a JavaScript thread, closing nothing [K.close-range]', async (t) => {
  const out = await underOldKernel(
    t,
    `
    out.refused = errOf(() => p.closeRange(b, c, C.CLOSE_RANGE_UNSHARE));
    out.open = fds();`,
  );
  if (!out) return;
  assert.equal(out.refused.code, 'ERR_INVALID_ARG_VALUE');
  assert.deepEqual(out.open, HIGH);
});

test('closeRange without the syscall still refuses first > last and unknown flags with EINVAL [K.close-range]', async (t) => {
  const out = await underOldKernel(
    t,
    `
    out.reversed = errOf(() => p.closeRange(d, b));
    out.unknown = errOf(() => p.closeRange(b, d, 1));
    out.open = fds();`,
  );
  if (!out) return;
  assert.deepEqual(out.reversed, {
    code: 'EINVAL',
    errno: -22,
    syscall: 'close_range',
    message: 'EINVAL: invalid argument, close_range',
  });
  assert.equal(out.unknown.code, 'EINVAL');
  assert.deepEqual(out.open, HIGH);
});

test('flock, tryLock and waitid work unchanged on the old kernel [K.no-pidfd]', async (t) => {
  const out = await underOldKernel(
    t,
    `
    const { openSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const path = tmpdir() + '/procpin-oldkernel-' + process.pid;
    writeFileSync(path, '');
    const x = openSync(path, 'r'), y = openSync(path, 'r');
    p.flockSync(x, C.LOCK_EX);
    out.busy = p.tryLock(y, 'exclusive');
    const wait = p.flock(y, C.LOCK_EX);
    setTimeout(() => p.flockSync(x, C.LOCK_UN), 20);
    await wait;
    out.granted = true;
    (await import('node:fs')).unlinkSync(path);
    out.echild = errOf(() => p.waitid(C.P_ALL, 0, C.WEXITED | C.WNOHANG));`,
  );
  if (!out) return;
  assert.equal(out.busy, false);
  assert.equal(out.granted, true);
  assert.equal(out.echild.code, 'ECHILD');
});
