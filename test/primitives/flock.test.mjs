// flockSync, tryLock and the asynchronous flock against real contention from other processes.
// /proc/locks is the kernel's record: it lists held locks and blocked waiters ("->") with the pid
// that took or waits for them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { ourLocks, root, tmpDir, waitFor } from '../helpers.mjs';

const { constants: C } = procpin;
const pkgUrl = JSON.stringify(`${root}/dist/index.js`);
const dir = tmpDir('procpin-flock-');
test.after(() => dir[Symbol.dispose]());
let n = 0;
function lockFile() {
  const p = join(dir.path, `lock-${n++}`);
  writeFileSync(p, '');
  return p;
}

/** Another process that takes LOCK_EX on `path`, says so, and releases when told (or exits). */
async function holder(path) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import * as p from ${pkgUrl}; import { openSync } from 'node:fs';
    const fd = openSync(${JSON.stringify(path)}, 'r');
    p.flockSync(fd, p.constants.LOCK_EX);
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => { p.flockSync(fd, p.constants.LOCK_UN); process.stdout.write('released\\n'); });
    process.stdin.on('end', () => process.exit(0));`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    lines.push(...d.split('\n').filter(Boolean));
  });
  const said = (what) => waitFor(() => lines.includes(what), { what: `holder to say ${what}`, interval: 1 });
  const exited = new Promise((r) => child.once('exit', r));
  await said('locked');
  return {
    pid: child.pid,
    release: async () => {
      child.stdin.write('x');
      await said('released');
    },
    exit: async () => {
      child.stdin.end();
      await exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Runs `fn({ path, h, fd })` against a holder: a fresh lock file, a process `h` that holds
 * LOCK_EX on it, and `fd`, our own descriptor of it. Closes `fd` and ends the holder after.
 */
async function againstHolder(fn) {
  const path = lockFile();
  const h = await holder(path);
  const fd = openSync(path, 'r');
  try {
    return await fn({ path, h, fd });
  } finally {
    closeSync(fd);
    await h.exit();
  }
}

/** Asks a fresh process whether LOCK_EX|LOCK_NB on `path` succeeds right now. */
async function probe(path) {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import * as p from ${pkgUrl}; import { openSync } from 'node:fs';
    process.stdout.write(String(p.tryLock(openSync(${JSON.stringify(path)}, 'r'), 'exclusive')));`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.once('close', r));
  return out === 'true';
}

const threads = () => readdirSync('/proc/self/task').length;
const fdCount = () => readdirSync('/proc/self/fd').length;

test('a lock another process holds makes tryLock false, and true once that holder exits [L1.trylock]', async () => {
  const path = lockFile();
  const h = await holder(path);
  const fd = openSync(path, 'r');
  try {
    assert.equal(procpin.tryLock(fd, 'exclusive'), false);
    assert.equal(procpin.tryLock(fd, 'shared'), false);
    assert.equal(ourLocks(path).held, 0);
    await h.exit();
    assert.equal(procpin.tryLock(fd, 'exclusive'), true);
    assert.equal(ourLocks(path).held, 1);
    assert.equal(await probe(path), false, 'another process now sees our lock');
  } finally {
    closeSync(fd);
  }
  assert.equal(await probe(path), true, 'closing the last descriptor released it');
});

test('shared locks coexist; an exclusive one excludes them [L1.flock.sync]', () => {
  const path = lockFile();
  const a = openSync(path, 'r');
  const b = openSync(path, 'r');
  try {
    assert.equal(procpin.tryLock(a, 'shared'), true);
    assert.equal(procpin.tryLock(b, 'shared'), true);
    assert.equal(procpin.tryLock(b, 'exclusive'), false, 'conversion blocked by the other shared holder');
    procpin.flockSync(a, C.LOCK_UN);
    assert.equal(procpin.tryLock(b, 'exclusive'), true);
    assert.equal(procpin.tryLock(a, 'shared'), false);
  } finally {
    closeSync(a);
    closeSync(b);
  }
});

test('flockSync with LOCK_NB under contention throws EAGAIN (EWOULDBLOCK) with errno -11 [L1.flock.sync]', async () => {
  await againstHolder(async ({ fd }) => {
    assert.throws(
      () => procpin.flockSync(fd, C.LOCK_EX | C.LOCK_NB),
      (/** @type {import('procpin').ProcpinSystemError} */ e) => {
        assert.equal(e.code, 'EAGAIN');
        assert.equal(e.errno, -11);
        assert.equal(e.syscall, 'flock');
        assert.equal(e.fd, fd);
        assert.equal(e.message, 'EAGAIN: resource temporarily unavailable, flock');
        return true;
      },
    );
    await assert.rejects(procpin.flock(fd, C.LOCK_SH | C.LOCK_NB), { code: 'EAGAIN', errno: -11 });
  });
});

test('flockSync blocks until the holder releases, then holds the lock [L1.flock.sync]', async () => {
  await againstHolder(async ({ path, h, fd }) => {
    // Release from a timer thread of the holder: ask it first, then block here.
    const released = h.release();
    await released;
    procpin.flockSync(fd, C.LOCK_EX);
    assert.equal(ourLocks(path).held, 1);
    procpin.flockSync(fd, C.LOCK_UN);
    assert.equal(ourLocks(path).held, 0);
  });
});

test('async flock waits off the event loop: a setInterval keeps ticking, and it resolves soon after the release [C.loop.no-block]', async () => {
  await againstHolder(async ({ path, h, fd }) => {
    const fdsBefore = fdCount();
    let ticks = 0;
    const iv = setInterval(() => ticks++, 5);
    let resolvedAt = 0;
    const p = procpin.flock(fd, C.LOCK_EX).then(() => (resolvedAt = performance.now()));
    await waitFor(() => ourLocks(path).waiting === 1, { what: 'our waiter in /proc/locks' });
    const t0 = performance.now();
    await waitFor(() => ticks >= 20, { what: '20 ticks', timeout: 2000 });
    assert.equal(resolvedAt, 0, 'still waiting');
    const releasedAt = performance.now();
    await h.release();
    await p;
    clearInterval(iv);
    assert.equal(fdCount(), fdsBefore, "the waiting thread's descriptor is closed");
    const latency = resolvedAt - releasedAt;
    console.log(
      `# ${ticks} ticks in ${Math.round(resolvedAt - t0)} ms of waiting; acquired ${latency.toFixed(1)} ms after the release was requested`,
    );
    assert.ok(latency < 500, `acquired ${latency} ms after the release`);
    assert.deepEqual(ourLocks(path), { held: 1, waiting: 0 });
  });
});

test('eight async flock waiters each on a thread of their own do not starve fs [C.loop.no-block]', async () => {
  const path = lockFile();
  const h = await holder(path);
  const fds = Array.from({ length: 8 }, () => openSync(path, 'r'));
  const threadsBefore = threads();
  try {
    const waits = fds.map((fd) => procpin.flock(fd, C.LOCK_SH));
    await waitFor(() => ourLocks(path).waiting === 8, { what: 'eight waiters in /proc/locks' });
    assert.equal(threads(), threadsBefore + 8, 'one thread per waiter');
    // The libuv threadpool has 4 threads: had the waiters been on it, these would never finish.
    const t0 = performance.now();
    await Promise.all([readFile(path), readFile('/proc/self/status'), readFile(path), readFile(path), readFile(path)]);
    const ms = performance.now() - t0;
    console.log(`# fs.promises.readFile x5 took ${ms.toFixed(1)} ms while 8 lock waits were pending`);
    assert.ok(ms < 1000, `readFile took ${ms} ms`);
    await h.release();
    await Promise.all(waits);
    assert.equal(ourLocks(path).held, 8, 'eight shared locks');
    await waitFor(() => threads() === threadsBefore, { what: 'the waiting threads to end' });
  } finally {
    for (const fd of fds) closeSync(fd);
    await h.exit();
  }
});

test('an AbortSignal cancels the wait: the rejection comes after the thread let go, and no lock is taken [L1.flock.abort]', async () => {
  await againstHolder(async ({ path, h, fd }) => {
    const fdsBefore = fdCount();
    const threadsBefore = threads();
    const ac = new AbortController();
    const p = procpin.flock(fd, C.LOCK_EX, { signal: ac.signal });
    await waitFor(() => ourLocks(path).waiting === 1, { what: 'our waiter in /proc/locks' });
    const reason = new Error('enough');
    ac.abort(reason);
    await assert.rejects(
      p,
      (/** @type {import('procpin').ProcpinSystemError} */ e) =>
        e.name === 'AbortError' && e.code === 'ABORT_ERR' && e.cause === reason,
    );
    // Right at the rejection: neither waiting nor holding, no thread, no descriptor left.
    assert.deepEqual(ourLocks(path), { held: 0, waiting: 0 });
    assert.equal(fdCount(), fdsBefore);
    await waitFor(() => threads() === threadsBefore, { what: 'the waiting thread to end' });
    // The holder lets go: nobody of ours takes it.
    await h.release();
    assert.equal(await probe(path), true, 'another process takes the lock');
    assert.deepEqual(ourLocks(path), { held: 0, waiting: 0 });
  });
});

test('an abort racing the grant never leaves the lock taken, whichever side wins (90 rounds) [L1.flock.abort]', async () => {
  const path = lockFile();
  const a = openSync(path, 'r');
  const b = openSync(path, 'r');
  const outcomes = { lateCancel: 0, sameTurn: 0, nextTurnResolved: 0, nextTurnRejected: 0 };
  try {
    for (let i = 0; i < 90; i++) {
      procpin.flockSync(a, C.LOCK_EX);
      const ac = new AbortController();
      const p = procpin.flock(b, C.LOCK_EX, { signal: ac.signal });
      await waitFor(() => ourLocks(path).waiting === 1, { what: 'the waiter', interval: 1 });
      const mode = i % 3;
      procpin.flockSync(a, C.LOCK_UN);
      if (mode === 0) {
        // The thread takes the lock now, but its result cannot be delivered before this turn
        // ends: the abort lands between grant and delivery, and the lock must be given back.
        // (A synchronous spin: any await would let the delivery in.)
        const end = performance.now() + 200;
        while (ourLocks(path).held !== 1 && performance.now() < end);
        assert.equal(ourLocks(path).held, 1, `round ${i}: granted to the thread`);
      }
      if (mode === 2) await new Promise((r) => setImmediate(r));
      ac.abort();
      const settled = await p.then(
        () => 'resolved',
        (e) => (assert.equal(e.name, 'AbortError'), 'rejected'),
      );
      if (mode === 2) {
        outcomes[settled === 'resolved' ? 'nextTurnResolved' : 'nextTurnRejected']++;
        if (settled === 'resolved') procpin.flockSync(b, C.LOCK_UN); // ours, as promised
      } else {
        // The abort came in the same turn as the release: no delivery can have come first.
        assert.equal(settled, 'rejected', `round ${i}: resolved although aborted before delivery`);
        outcomes[mode === 0 ? 'lateCancel' : 'sameTurn']++;
      }
      assert.deepEqual(ourLocks(path), { held: 0, waiting: 0 }, `round ${i}`);
      assert.equal(procpin.tryLock(a, 'exclusive'), true, `round ${i}: b left holding the lock`);
      procpin.flockSync(a, C.LOCK_UN);
    }
  } finally {
    closeSync(a);
    closeSync(b);
  }
  console.log(`# ${JSON.stringify(outcomes)}`);
});

test('an already aborted signal rejects at once without starting a wait [L1.flock.abort]', async () => {
  await againstHolder(async ({ path, fd }) => {
    const threadsBefore = threads();
    const reason = new Error('no');
    const p = procpin.flock(fd, C.LOCK_EX, { signal: AbortSignal.abort(reason) });
    assert.equal(threads(), threadsBefore);
    assert.deepEqual(ourLocks(path), { held: 0, waiting: 0 });
    await assert.rejects(
      p,
      (/** @type {import('procpin').ProcpinSystemError} */ e) => e.name === 'AbortError' && e.cause === reason,
    );
  });
});

test('a caller that closes its descriptor mid-wait does not make the thread lock a recycled number [L1.flock.async]', async () => {
  const path = lockFile();
  const other = lockFile();
  const h = await holder(path);
  const fd = openSync(path, 'r');
  const p = procpin.flock(fd, C.LOCK_EX);
  await waitFor(() => ourLocks(path).waiting === 1, { what: 'our waiter' });
  closeSync(fd);
  const reused = openSync(other, 'r'); // very likely the same number
  try {
    await h.release();
    await p; // the lock was taken on the original open file description, through the dup
    assert.equal(ourLocks(other).held, 0, 'nothing locked through the recycled number');
    // The dup was the last descriptor of that description: closing it released the lock.
    assert.equal(await probe(path), true);
  } finally {
    closeSync(reused);
    await h.exit();
  }
});

test('a holder that is SIGKILLed releases its lock to a pending async waiter [L1.flock.async]', async () => {
  const path = lockFile();
  const h = await holder(path);
  const fd = openSync(path, 'r');
  try {
    const p = procpin.flock(fd, C.LOCK_EX);
    await waitFor(() => ourLocks(path).waiting === 1, { what: 'our waiter' });
    await h.kill();
    await p;
    assert.deepEqual(ourLocks(path), { held: 1, waiting: 0 });
  } finally {
    closeSync(fd);
  }
});

test('async flock on a directory descriptor and on a bad descriptor [L1.flock.async]', async () => {
  const d = openSync(dir.path, 'r');
  try {
    await procpin.flock(d, C.LOCK_EX);
    await procpin.flock(d, C.LOCK_UN);
  } finally {
    closeSync(d);
  }
  // A descriptor that is not open: EBADF from the dup, reported as a rejection naming flock.
  await assert.rejects(procpin.flock(999999, C.LOCK_EX), { code: 'EBADF', errno: -9, syscall: 'flock', fd: 999999 });
});
