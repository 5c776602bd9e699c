// SPEC Layer 1 is the kernel's contract, not a stricter one: what the kernel takes is taken
// (signals 32 and 33, PIDFD_SELF_*, waitid's __W* bits, P_ALL with any id), what it answers comes
// back (EINTR from an interrupted blocking flockSync or waitid), and the one thing that would
// break Node itself (CLOSE_RANGE_UNSHARE on a JavaScript thread) is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as procpin from '../../dist/index.js';
import { need, root, runNode } from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);
const C = procpin.constants;

test('signals 32 and 33 are taken by number and by name, as process.kill takes them [L1.kernel.accepts]', async () => {
  const child = procpin.spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    process.kill(child.pid, 0); // Node's own kill takes any number the kernel does
    procpin.pidfdSendSignal(child.pidfd, 0);
    assert.equal(procpin.pidfdSendSignal(child.pidfd, 33), undefined);
    const info = await child.exited;
    assert.equal(info.signal, 'SIG33');
  } finally {
    child.kill('SIGKILL');
    await child.exited;
    child.reap();
  }
  assert.throws(() => procpin.pidfdSendSignal(0, 31.5), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => procpin.pidfdSendSignal(0, 65), { code: 'ERR_UNKNOWN_SIGNAL' });
});

test('a child killed by signal 32 or 33 reports its signal by name [L1.kernel.accepts]', async () => {
  for (const [sig, name] of /** @type {Array<[import('procpin').Signal, string]>} */ ([
    [32, 'SIG32'],
    ['SIG33', 'SIG33'],
  ])) {
    const child = procpin.spawn('sleep', ['30'], { stdio: 'ignore' });
    child.kill(sig);
    const info = await child.exited;
    child.reap();
    assert.deepEqual(
      [info.code, info.status, info.signal, info.exitCode],
      ['CLD_KILLED', name === 'SIG32' ? 32 : 33, name, null],
    );
  }
});

test('pidfdSendSignal takes PIDFD_SELF_THREAD and PIDFD_SELF_THREAD_GROUP: the kernel answers 0 for signal 0 [L1.kernel.accepts]', () => {
  assert.equal(C.PIDFD_SELF_THREAD, -10000);
  assert.equal(C.PIDFD_SELF_THREAD_GROUP, -10001);
  assert.equal(procpin.pidfdSendSignal(C.PIDFD_SELF_THREAD, 0), undefined);
  assert.equal(procpin.pidfdSendSignal(C.PIDFD_SELF_THREAD_GROUP, 0), undefined);
  // Any other negative number still cannot be a descriptor.
  assert.throws(() => procpin.pidfdSendSignal(-1, 0), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => procpin.pidfdSendSignal(-10002, 0), { code: 'ERR_OUT_OF_RANGE' });
});

test("waitid takes __WALL, __WCLONE and __WNOTHREAD, and P_ALL with any id; unknown bits get the kernel's EINVAL [L1.kernel.accepts]", async () => {
  assert.deepEqual([C.__WNOTHREAD, C.__WALL, C.__WCLONE], [0x20000000, 0x40000000, 0x80000000]);
  const child = procpin.spawn('sh', ['-c', 'exit 7'], { stdio: 'ignore' });
  await child.exited;
  const look = procpin.waitid(C.P_PID, child.pid, C.WEXITED | C.WNOWAIT | C.WNOHANG | C.__WALL | C.__WNOTHREAD);
  assert.deepEqual([look.pid, look.code, look.exitCode], [child.pid, 'CLD_EXITED', 7]);
  // __WCLONE alone waits only for "clone" children (no SIGCHLD at exit): ours is not one, and
  // the kernel says so.
  assert.throws(() => procpin.waitid(C.P_PID, child.pid, C.WEXITED | C.WNOWAIT | C.WNOHANG | C.__WCLONE), {
    code: 'ECHILD',
    errno: -10,
    syscall: 'waitid',
  });
  // P_ALL ignores the id, whatever it is.
  const any = procpin.waitid(C.P_ALL, -1, C.WEXITED | C.WNOWAIT | C.WNOHANG);
  assert.ok(any === null || typeof any.pid === 'number');
  assert.throws(() => procpin.waitid(C.P_ALL, 0, 0x10000000 | C.WEXITED | C.WNOHANG), {
    code: 'EINVAL',
    errno: -22,
    syscall: 'waitid',
  });
  child.reap();
});

test('closeRange with CLOSE_RANGE_UNSHARE is refused with ERR_INVALID_ARG_VALUE on the main thread and in a Worker, closing nothing [L1.close-range.unshare]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    import { openSync, readdirSync } from 'node:fs';
    import { Worker } from 'node:worker_threads';
    const C = p.constants;
    const fd = openSync('/dev/null', 'r');
    const errOf = (f) => { try { f(); return null; } catch (e) { return e.code + ' ' + e.name; } };
    const out = {
      main: errOf(() => p.closeRange(fd, fd, C.CLOSE_RANGE_UNSHARE)),
      both: errOf(() => p.closeRange(fd, fd, C.CLOSE_RANGE_UNSHARE | C.CLOSE_RANGE_CLOEXEC)),
      open: readdirSync('/proc/self/fd').map(Number).includes(fd),
    };
    out.worker = await new Promise((res) => {
      const code = "import { parentPort } from 'node:worker_threads'; const p = await import(" + JSON.stringify(${pkgUrl}) + ");" +
        "let r = null; try { p.closeRange(" + fd + ", " + fd + ", p.constants.CLOSE_RANGE_UNSHARE); } catch (e) { r = e.code; } parentPort.postMessage(r);";
      const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(code)));
      w.once('message', res);
    });
    // A Worker still starts (it aborted the process after an unshare on the main thread).
    out.later = await new Promise((res) => new Worker(new URL('data:text/javascript,1')).once('exit', res));
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.deepEqual(out, {
    main: 'ERR_INVALID_ARG_VALUE TypeError',
    both: 'ERR_INVALID_ARG_VALUE TypeError',
    open: true,
    worker: 'ERR_INVALID_ARG_VALUE',
    later: 0,
  });
});

for (const call of ['flockSync', 'waitid']) {
  test(`a blocking ${call} interrupted by a handler without SA_RESTART throws EINTR [L1.kernel.eintr]`, async (t) => {
    const so = compileC('alarm_norestart', { output: 'alarm_norestart.so', shared: true });
    if (!need(t, so !== null, `a C compiler: ${compileC.lastError}`)) return;
    const blocked =
      call === 'flockSync'
        ? `const { openSync, writeFileSync, mkdtempSync } = await import('node:fs');
         const dir = mkdtempSync((await import('node:os')).tmpdir() + '/procpin-eintr-');
         writeFileSync(dir + '/l', '');
         const a = openSync(dir + '/l', 'r'), b = openSync(dir + '/l', 'r');
         p.flockSync(a, C.LOCK_EX);
         const run = () => p.flockSync(b, C.LOCK_EX);`
        : `const child = p.spawn('sleep', ['30'], { stdio: 'ignore' });
         const run = () => p.waitid(C.P_PID, child.pid, C.WEXITED | C.WNOWAIT);`;
    const r = await runNode(
      `import * as p from ${pkgUrl};
      const C = p.constants;
      ${blocked}
      const t0 = performance.now();
      try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
      let out;
      try { run(); out = { returned: true }; } catch (e) { out = { code: e.code, errno: e.errno, syscall: e.syscall, message: e.message }; }
      out.ms = Math.round(performance.now() - t0);
      ${call === 'waitid' ? "child.kill('SIGKILL'); await child.exited; child.reap();" : ''}
      console.log(JSON.stringify(out));`,
      { timeout: 10000, env: { PROCPIN_TEST_ALARM_MS: '100' } },
    );
    assert.equal(r.signal, null, `the call never returned: ${r.stderr}`);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(
      { ...out, ms: undefined },
      {
        code: 'EINTR',
        errno: -4,
        syscall: call === 'flockSync' ? 'flock' : 'waitid',
        message: `EINTR: interrupted system call, ${call === 'flockSync' ? 'flock' : 'waitid'}`,
        ms: undefined,
      },
    );
    assert.ok(out.ms >= 90 && out.ms < 5000, `interrupted by the alarm after ${out.ms} ms`);
  });
}
