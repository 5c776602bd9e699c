// When the usual wake signal (SIGRTMAX-1) already belongs to someone else, the asynchronous flock
// leaves it alone and takes another free real-time signal (its threads poll with LOCK_NB only
// when none is free): waits, aborts and a terminated Worker behave the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { need, root, runNode } from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);

for (const [title, env] of /** @type {Array<[string, Record<string, string>]>} */ ([
  ['with the wake signal taken', {}],
  ['with every real-time signal taken (polling)', { PROCPIN_TEST_TAKE_ALL: '1' }],
])) {
  test(`${title}, flock still waits, is granted, aborts cleanly, and a Worker tears down [K.flock-wake]`, async (t) => {
    const so = compileC('wake_signal_taken', { output: 'wake_signal_taken.so', shared: true });
    if (!need(t, so !== null, `a C compiler: ${compileC.lastError}`)) return;
    const r = await runNode(
      `
      import { readFileSync, openSync, writeFileSync, mkdtempSync, readdirSync } from 'node:fs';
      import { tmpdir } from 'node:os';
      import { Worker } from 'node:worker_threads';
      try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
      const ignored = () => (BigInt('0x' + readFileSync('/proc/self/status', 'utf8').match(/^SigIgn:\\s*(\\S+)/m)[1]) >> 62n) & 1n;
      const out = { ignoredBefore: Number(ignored()) };
      const p = await import(${pkgUrl});
      const C = p.constants;
      const dir = mkdtempSync(tmpdir() + '/procpin-poll-');
      writeFileSync(dir + '/l', '');
      const a = openSync(dir + '/l', 'r'), b = openSync(dir + '/l', 'r');
      p.flockSync(a, C.LOCK_EX);
      let ticks = 0;
      const iv = setInterval(() => ticks++, 5);
      const t0 = performance.now();
      const granted = p.flock(b, C.LOCK_EX);
      setTimeout(() => { out.ticksBeforeUnlock = ticks; p.flockSync(a, C.LOCK_UN); }, 60);
      await granted;
      out.waitedMs = Math.round(performance.now() - t0);
      out.ticks = ticks;
      out.aHasIt = p.tryLock(a, 'exclusive');
      p.flockSync(b, C.LOCK_UN);
      p.flockSync(a, C.LOCK_EX);
      const ac = new AbortController();
      const aborted = p.flock(b, C.LOCK_EX, { signal: ac.signal });
      setTimeout(() => ac.abort(), 20);
      out.abort = await aborted.then(() => 'resolved', (e) => e.name);
      p.flockSync(a, C.LOCK_UN);
      out.freeAfterAbort = p.tryLock(a, 'exclusive');
      // A first Worker makes the process-wide things Workers need; count after it.
      await new Promise((r) => new Worker('', { eval: true }).once('exit', r));
      const fdsBefore = readdirSync('/proc/self/fd').length;
      const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(
        "import { parentPort, workerData } from 'node:worker_threads'; const p = await import(" + JSON.stringify(${pkgUrl}) + ");" +
        "p.flock(workerData.fd, p.constants.LOCK_EX); parentPort.postMessage('waiting');")), { workerData: { fd: b } });
      await new Promise((r) => w.once('message', r));
      await w.terminate();
      out.fdsAfterTerminate = readdirSync('/proc/self/fd').length - fdsBefore;
      p.flockSync(a, C.LOCK_UN);
      out.freeAfterTerminate = p.tryLock(b, 'exclusive');
      out.ignoredAfter = Number(ignored());
      clearInterval(iv);
      console.log(JSON.stringify(out));`,
      { timeout: 20000, env },
    );
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop());
    assert.equal(out.ignoredBefore, 1, 'the fixture made SIGRTMAX-1 ignored');
    assert.equal(out.ignoredAfter, 1, 'procpin left it ignored');
    assert.ok(out.waitedMs >= 50 && out.waitedMs < 1000, `granted after ${out.waitedMs} ms`);
    // The loop runs while the lock is pending: the interval ticks before the unlock, which is
    // itself a timer on the loop (a blocked loop would never unlock, and never be granted). How
    // many ticks fit in 60 ms depends on the CPU the machine gives this process.
    assert.ok(out.ticksBeforeUnlock >= 1, `${out.ticksBeforeUnlock} ticks before the unlock`);
    assert.equal(out.aHasIt, false, 'b holds the lock once granted');
    assert.equal(out.abort, 'AbortError');
    assert.equal(out.freeAfterAbort, true);
    assert.equal(out.fdsAfterTerminate, 0);
    assert.equal(out.freeAfterTerminate, true);
  });
}
