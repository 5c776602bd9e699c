// The addon is context-aware: it loads in several worker_threads at once, each with its own
// state, and a Worker terminated in the middle of a flock wait tears down cleanly (no crash, no
// hang, no descriptor or thread left, no lock taken).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { closeSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as procpin from '../../dist/index.js';
import { ourLocks, root, runNode, tmpDir, waitFor } from '../helpers.mjs';

const { constants: C } = procpin;
const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);
const dir = tmpDir('procpin-worker-');
test.after(() => dir[Symbol.dispose]());

const threads = () => readdirSync('/proc/self/task').length;
const fdCount = () => readdirSync('/proc/self/fd').length;

const workerBody = `
  import { parentPort, workerData } from 'node:worker_threads';
  import { openSync, closeSync, writeFileSync } from 'node:fs';
  const p = await import(${pkgUrl});
  const C = p.constants;
  const out = {};
  const pidfd = p.pidfdOpen(process.pid);
  try { p.pidfdSendSignal(pidfd, 0); out.probe = true; } finally { closeSync(pidfd); }
  out.pdeathsig = p.getParentDeathSignal();
  out.lockConst = C.LOCK_EX;
  try { p.pidfdOpen(0x3fffffff); } catch (e) { out.esrch = e.message; }
  writeFileSync(workerData.path, '');
  const a = openSync(workerData.path, 'r');
  const b = openSync(workerData.path, 'r');
  await p.flock(a, C.LOCK_EX);
  out.tryWhileHeld = p.tryLock(b, 'exclusive');
  const ac = new AbortController();
  const pending = p.flock(b, C.LOCK_EX, { signal: ac.signal });
  setTimeout(() => ac.abort(), 20);
  try { await pending; } catch (e) { out.aborted = e.name; }
  p.flockSync(a, C.LOCK_UN);
  await p.flock(b, C.LOCK_EX);
  out.acquired = true;
  closeSync(a); closeSync(b);
  parentPort.postMessage(out);
`;

test('the addon loads in several Workers at once and each runs the primitives and an async flock [L2.worker]', async () => {
  const fdsBefore = fdCount();
  const workers = Array.from(
    { length: 4 },
    (_, i) =>
      new Worker(new URL(`data:text/javascript,${encodeURIComponent(workerBody)}`), {
        workerData: { path: join(dir.path, `w${i}`) },
      }),
  );
  const exits = workers.map((w) => new Promise((r) => w.once('exit', r)));
  const results = await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
  assert.deepEqual(await Promise.all(exits), [0, 0, 0, 0]);
  for (const out of results) {
    assert.deepEqual(out, {
      probe: true,
      pdeathsig: 0,
      lockConst: 2,
      esrch: 'ESRCH: no such process, pidfd_open',
      tryWhileHeld: false,
      aborted: 'AbortError',
      acquired: true,
    });
  }
  // The main thread's copy still works after the Workers are gone.
  assert.equal(procpin.getParentDeathSignal(), 0);
  assert.equal(fdCount(), fdsBefore);
});

/** A fresh lock file `name` that this thread holds through `mine` (LOCK_EX). */
function heldLock(name) {
  const path = join(dir.path, name);
  writeFileSync(path, '');
  const mine = openSync(path, 'r');
  procpin.flockSync(mine, C.LOCK_EX);
  return { path, mine };
}

test('terminating a Worker while its flock wait is pending: no crash, no hang, no descriptor, thread or lock left [L2.worker]', async () => {
  // the main thread holds it: the Worker must wait
  const { path, mine } = heldLock('terminate');
  const theirs = openSync(path, 'r'); // the Worker waits through this one (a raw fd outlives a Worker)
  const fdsBefore = fdCount();
  const threadsBefore = threads();
  try {
    const w = new Worker(
      new URL(
        `data:text/javascript,${encodeURIComponent(`
      import { parentPort, workerData } from 'node:worker_threads';
      const p = await import(${pkgUrl});
      p.flock(workerData.fd, p.constants.LOCK_EX).then(() => parentPort.postMessage('locked'));
      parentPort.postMessage('waiting');`)}`,
      ),
      { workerData: { fd: theirs } },
    );
    const messages = [];
    w.on('message', (m) => messages.push(m));
    await waitFor(() => messages.includes('waiting') && ourLocks(path).waiting === 1, { what: "the Worker's waiter" });
    const t0 = performance.now();
    const code = await w.terminate();
    const ms = performance.now() - t0;
    console.log(`# terminate() took ${ms.toFixed(1)} ms`);
    assert.equal(code, 1);
    assert.ok(ms < 2000, `terminate took ${ms} ms`);
    assert.deepEqual(messages, ['waiting']);
    // At once: no waiter left in the kernel, the dup closed, the waiting thread gone.
    assert.deepEqual(ourLocks(path), { held: 1, waiting: 0 }, "only the main thread's lock");
    assert.equal(fdCount(), fdsBefore);
    await waitFor(() => threads() <= threadsBefore, { what: "the Worker's threads to end" });
    // Release ours: nobody takes it on the Worker's behalf.
    procpin.flockSync(mine, C.LOCK_UN);
    assert.deepEqual(ourLocks(path), { held: 0, waiting: 0 });
    assert.equal(procpin.tryLock(theirs, 'exclusive'), true, 'the lock is free');
  } finally {
    closeSync(mine);
    closeSync(theirs);
  }
});

test('terminating Workers in a loop while waits are pending or being cancelled never crashes [L2.worker]', async () => {
  const { path, mine } = heldLock('churn');
  const theirs = openSync(path, 'r');
  const fdsBefore = fdCount();
  try {
    for (let i = 0; i < 12; i++) {
      const w = new Worker(
        new URL(
          `data:text/javascript,${encodeURIComponent(`
        import { parentPort, workerData } from 'node:worker_threads';
        const p = await import(${pkgUrl});
        const ac = new AbortController();
        for (let k = 0; k < 3; k++) p.flock(workerData.fd, p.constants.LOCK_EX, { signal: ac.signal }).catch(() => {});
        if (workerData.i % 2) ac.abort();  // terminate while a cancel is in flight
        parentPort.postMessage('go');`)}`,
        ),
        { workerData: { fd: theirs, i } },
      );
      await new Promise((r) => w.once('message', r));
      if (i % 3 === 0) await new Promise((r) => setImmediate(r));
      // 1 when terminated mid-wait; an aborted Worker may already have finished on its own.
      assert.ok([0, 1, undefined].includes(await w.terminate()));
    }
    assert.deepEqual(ourLocks(path), { held: 1, waiting: 0 });
    assert.equal(fdCount(), fdsBefore);
  } finally {
    closeSync(mine);
    closeSync(theirs);
  }
});

test('a process that exits while a flock wait is pending exits promptly with its own code [L2.worker]', async () => {
  const { path, mine } = heldLock('exit');
  try {
    const t0 = performance.now();
    const r = await runNode(
      `import * as p from ${pkgUrl}; import { openSync } from 'node:fs';
      p.flock(openSync(${JSON.stringify(path)}, 'r'), p.constants.LOCK_EX).then(() => process.exit(9));
      setTimeout(() => process.exit(3), 50);`,
      { timeout: 10000 },
    );
    assert.equal(r.code, 3, r.stderr);
    assert.ok(performance.now() - t0 < 5000);
  } finally {
    closeSync(mine);
  }
});

test('a pending flock wait keeps the process alive until it is granted [L2.worker]', async () => {
  const path = join(dir.path, 'alive');
  writeFileSync(path, '');
  const r = await runNode(
    `import * as p from ${pkgUrl}; import { openSync } from 'node:fs';
    const a = openSync(${JSON.stringify(path)}, 'r'); const b = openSync(${JSON.stringify(path)}, 'r');
    p.flockSync(a, p.constants.LOCK_EX);
    p.flock(b, p.constants.LOCK_EX).then(() => console.log('granted'));
    // The only other thing on the loop is an unref'd timer that releases the lock.
    setTimeout(() => p.flockSync(a, p.constants.LOCK_UN), 30).unref();`,
    { timeout: 10000 },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'granted');
});

test('Workers that alone load the addon can finish flock waits and exit after the last of them is gone [L2.worker]', async () => {
  // Node would unload the addon when the last environment that loaded it is gone; procpin pins
  // its library for the life of the process, so the wake signal's handler, which stays installed
  // (restoring SIG_DFL later could overwrite a handler the application set meanwhile), never
  // points into unmapped code.
  const r = await runNode(
    `
    import { Worker } from 'node:worker_threads';
    const body = ${JSON.stringify(`
      import { parentPort, workerData } from 'node:worker_threads';
      import { openSync, closeSync, writeFileSync } from 'node:fs';
      const p = await import(PKG);
      writeFileSync(workerData.path, '');
      const a = openSync(workerData.path, 'r');
      const b = openSync(workerData.path, 'r');
      await p.flock(a, p.constants.LOCK_EX);
      const ac = new AbortController();
      const pending = p.flock(b, p.constants.LOCK_EX, { signal: ac.signal });
      setTimeout(() => ac.abort(), 2);
      await pending.catch(() => {});
      closeSync(a); closeSync(b);
      parentPort.postMessage('ok');`)}.replace('PKG', ${JSON.stringify(pkgUrl)});
    for (let round = 0; round < 6; round++) {
      await Promise.all(Array.from({ length: 8 }, (_, i) => new Promise((resolve, reject) => {
        const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(body)), {
          workerData: { path: ${JSON.stringify(dir.path)} + '/unload-' + i } });
        w.on('error', reject);
        w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error('exit ' + code))));
      })));
    }
    console.log('workers done');
    // Every environment that loaded the addon is gone: a stray wake signal still finds the
    // handler mapped (a no-op), never unmapped code.
    process.kill(process.pid, 63);
    setTimeout(() => console.log('survived'), 100);`,
    { timeout: 60000 },
  );
  assert.equal(r.stdout.trim(), 'workers done\nsurvived', r.stderr);
  assert.notEqual(r.signal, 'SIGSEGV', r.stderr);
  assert.notEqual(r.signal, 'SIGABRT', r.stderr);
  assert.equal(r.stderr, '');
});
