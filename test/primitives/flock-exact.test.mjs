// The asynchronous flock keeps the application's signal dispositions, never drops a lock that an
// open file description was granted, and stays fair (queued in the kernel) when its usual wake
// signal belongs to somebody else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { need, procLib, root, runNode } from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);
const setup = `
  import { readFileSync, openSync, writeFileSync, mkdtempSync, readdirSync } from 'node:fs';
  import { tmpdir } from 'node:os';
  import { Worker } from 'node:worker_threads';
  const p = await import(${pkgUrl});
  const C = p.constants;
  const dir = mkdtempSync(tmpdir() + '/procpin-flock-');
  writeFileSync(dir + '/l', '');
  const lockPath = dir + '/l';
  const sigIgn = (n) => Number((BigInt('0x' + readFileSync('/proc/self/status', 'utf8').match(/^SigIgn:\\s*(\\S+)/m)[1]) >> BigInt(n - 1)) & 1n);
`;

test("the end of a Worker that used flock() leaves the application's disposition of the wake signal alone [L1.flock.disposition]", async (t) => {
  const so = compileC('wake_signal_taken', { output: 'wake_signal_taken.so', shared: true });
  if (!need(t, so !== null, `a C compiler: ${compileC.lastError}`)) return;
  const r = await runNode(
    `${setup}
    const a = openSync(lockPath, 'r'), b = openSync(lockPath, 'r');
    p.flockSync(a, C.LOCK_EX);
    const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(
      "import { parentPort, workerData } from 'node:worker_threads'; const p = await import(" + JSON.stringify(${pkgUrl}) + ");" +
      "p.flock(workerData.fd, p.constants.LOCK_EX).catch(() => {}); parentPort.postMessage('waiting');")), { workerData: { fd: b } });
    await new Promise((r) => w.once('message', r));
    // The application takes signal 63 (SIGRTMAX-1) for itself while the Worker waits.
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    const out = { ignoredWhileWaiting: sigIgn(63) };
    await w.terminate();
    out.ignoredAfterWorker = sigIgn(63);
    process.kill(process.pid, 63); // ignored: the process lives on
    await new Promise((r) => setTimeout(r, 20));
    out.alive = true;
    console.log(JSON.stringify(out));`,
    { timeout: 20000 },
  );
  assert.equal(r.signal, null, 'the process was not killed');
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { ignoredWhileWaiting: 1, ignoredAfterWorker: 1, alive: true });
});

test("a second flock() wait on one open file description is refused with ERR_PROCPIN_FLOCK_PENDING; its abort never drops the first one's lock [L1.flock.abort]", async () => {
  const r = await runNode(
    `${setup}
    const holder = openSync(lockPath, 'r'), fd = openSync(lockPath, 'r'), other = openSync(lockPath, 'r');
    const out = { codes: [], dropped: 0 };
    for (let i = 0; i < 50; i++) {
      p.flockSync(holder, C.LOCK_EX);
      const first = p.flock(fd, C.LOCK_EX);
      const ac = new AbortController();
      const second = p.flock(fd, C.LOCK_EX, { signal: ac.signal }).then(() => 'granted', (e) => e.code);
      p.flockSync(holder, C.LOCK_UN);
      await first;
      ac.abort();
      out.codes.push(await second);
      if (p.tryLock(other, 'exclusive')) { out.dropped++; p.flockSync(other, C.LOCK_UN); }
      p.flockSync(fd, C.LOCK_UN);
    }
    out.codes = [...new Set(out.codes)];
    // A description that already holds the lock gets it at once, and a later abort drops nothing.
    p.flockSync(fd, C.LOCK_EX);
    const ac = new AbortController();
    const again = p.flock(fd, C.LOCK_EX, { signal: ac.signal });
    ac.abort();
    out.again = await again.then(() => 'granted', (e) => e.code);
    out.stillHeld = !p.tryLock(other, 'exclusive');
    console.log(JSON.stringify(out));`,
    { timeout: 60000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    codes: ['ERR_PROCPIN_FLOCK_PENDING'],
    dropped: 0,
    again: 'granted',
    stillHeld: true,
  });
});

test('with the usual wake signal taken, a flock() wait still queues in the kernel (fair), and the taker keeps its signal [L1.flock.disposition]', async (t) => {
  const so = compileC('wake_signal_taken', { output: 'wake_signal_taken.so', shared: true });
  if (!need(t, so !== null, `a C compiler: ${compileC.lastError}`)) return;
  const r = await runNode(
    `${setup}
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    const a = openSync(lockPath, 'r'), b = openSync(lockPath, 'r');
    p.flockSync(a, C.LOCK_EX);
    const granted = p.flock(b, C.LOCK_EX);
    // A blocked waiter is listed in /proc/locks with "->"; a poller never is.
    const { procLocks } = await import(${procLib});
    const queued = () => procLocks().some((l) => l.blocked && l.type === 'FLOCK' && l.pid === process.pid);
    let seen = false;
    for (let i = 0; i < 400 && !(seen = queued()); i++) await new Promise((r) => setTimeout(r, 5));
    const t0 = performance.now();
    p.flockSync(a, C.LOCK_UN);
    await granted;
    console.log(JSON.stringify({ queued: seen, grantedWithinMs: performance.now() - t0 < 1000, ignored: sigIgn(63) }));`,
    { timeout: 20000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { queued: true, grantedWithinMs: true, ignored: 1 });
});

test('an abort of a wait whose wake signal the application took meanwhile settles at once, and no lock is left taken [L1.flock.disposition]', async (t) => {
  const so = compileC('wake_signal_taken', { output: 'wake_signal_taken.so', shared: true });
  if (!need(t, so !== null, `a C compiler: ${compileC.lastError}`)) return;
  const r = await runNode(
    `${setup}
    const a = openSync(lockPath, 'r'), b = openSync(lockPath, 'r'), c = openSync(lockPath, 'r');
    p.flockSync(a, C.LOCK_EX);
    const ac = new AbortController();
    const waiting = p.flock(b, C.LOCK_EX, { signal: ac.signal });
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    const t0 = performance.now();
    ac.abort();
    const out = { result: await waiting.then(() => 'granted', (e) => e.name) };
    out.settledQuickly = performance.now() - t0 < 1000;
    p.flockSync(a, C.LOCK_UN);
    // The given-up thread gets the lock once a lets go, and gives it back at once.
    let free = false;
    for (let i = 0; i < 400 && !(free = p.tryLock(c, 'exclusive')); i++) await new Promise((r) => setTimeout(r, 5));
    out.free = free;
    out.ignored = sigIgn(63);
    console.log(JSON.stringify(out));`,
    { timeout: 20000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { result: 'AbortError', settledQuickly: true, free: true, ignored: 1 });
});
