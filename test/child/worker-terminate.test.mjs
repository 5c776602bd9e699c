// No Node-API call can take the process down while an environment terminates: Workers are
// terminated again and again with every kind of procpin work in flight (sweep, claim, claimPidfile,
// the group scan, spawn, openProcess, flock with and without an AbortSignal), in a child process
// whose status tells whether it survived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pkg, procLib, root, runNode, testBinding, tmpDirFor } from '../helpers.mjs';
import { runs } from '../fixtures/reliab-lib.mjs';

test('Workers terminated mid-work dozens of times in a loop never take the process down, and leave none of their groups [L3a.end.worker]', async (t) => {
  const dir = tmpDirFor(t, 'procpin-wterm-');
  const rounds = runs(60, 300);
  // Every member carries this marker, so one that escaped before the Worker posted its pgid (or
  // that the group never knew) is counted too.
  const marker = `wterm-${process.pid}-${Date.now()}`;
  const code = `
    import { Worker } from 'node:worker_threads';
    import { openSync, readdirSync, readFileSync } from 'node:fs';
    import * as procpin from ${pkg};
    const d = ${JSON.stringify(dir.path)};
    const held = openSync(d + '/lock', 'w');
    procpin.flockSync(held, procpin.constants.LOCK_EX); // the Workers' flock waits stay pending
    const pgids = [];
    let survived = 0;
    for (let i = 0; i < ${rounds}; i++) {
      const w = new Worker(\`import(${pkg.replace(/"/g, '\\"')}).then(async (p) => {
        const { parentPort } = await import('node:worker_threads');
        const { openSync } = await import('node:fs');
        const d = ${JSON.stringify(dir.path)};
        const fd = openSync(d + '/lock', 'r');
        const ac = new AbortController();
        p.flock(fd, p.constants.LOCK_EX).catch(() => {});
        p.flock(fd, p.constants.LOCK_EX, { signal: ac.signal }).catch(() => {});
        for (let n = 0; ; n++) {
          p.sweep(d, { prefix: 'x-' }).catch(() => {});
          p.claim(d, 'c-').then((c) => c.release()).catch(() => {});
          p.claimPidfile(d + '/pid').then((f) => f.release()).catch(() => {});
          try { const c = p.spawn('true', [], { stdio: 'ignore' }); c.exited.then(() => c.reap()).catch(() => {}); } catch {}
          try { p.openProcess(process.pid).close(); } catch {}
          try {
            const g = p.spawnGroup('sh', ['-c', 'sleep 1000 & exit 0'], { stdio: 'ignore', grace: 1000, env: { ...process.env, PROCPIN_WTERM: ${JSON.stringify(marker)} } });
            parentPort.postMessage(g.pgid);
          } catch {}
          if (n % 3 === 0) ac.abort();
          await new Promise((r) => setImmediate(r));
        }
      })\`, { eval: true });
      w.on('message', (pgid) => pgids.push(pgid));
      await new Promise((r) => w.once('message', r));
      await new Promise((r) => setTimeout(r, i % 5));
      await w.terminate();
      survived++;
    }
    const { markedLive } = await import(${procLib});
    const live = () => markedLive('PROCPIN_WTERM', ${JSON.stringify(marker)}).length;
    const end = Date.now() + 5000;
    while (live() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const alive = live();
    // Survivors (a failure) are ended here, by pid, so that none outlives the test.
    for (const st of markedLive('PROCPIN_WTERM', ${JSON.stringify(marker)})) process.kill(st.pid, 'SIGKILL');
    console.log(JSON.stringify({ survived, groups: pgids.length, alive }));`;
  const r = await runNode(code, { timeout: 240000 });
  const line = r.stdout.trim().split('\n').at(-1);
  t.diagnostic(`rounds ${rounds}: status ${r.code ?? r.signal}; ${line}`);
  assert.equal(r.code, 0, r.stderr.slice(0, 2000));
  const out = JSON.parse(line);
  assert.equal(out.survived, rounds);
  assert.ok(out.groups >= rounds);
  assert.equal(out.alive, 0, 'members of terminated Workers still alive');
});

// The window the loop above hits by chance, made exact: the Worker is blocked in a synchronous
// flock when terminate() is called, then the lock is released, so its next statement, a direct
// binding call, runs while the environment is already stopping (every Node-API call that could
// run JavaScript fails then). Fresh heap memory is filled with a non-zero byte so that a value
// read before it was ever written takes the process down at once instead of now and then.
const lateCalls = {
  sweepDirectory: (d) => `binding.sweepDirectory(${JSON.stringify(d)}, 'x-', 0)`,
  createLocked: (d) => `binding.createLocked(${JSON.stringify(d)}, 'c-1', false, 0o600)`,
  removeHeld: (d) => `binding.removeHeld(${JSON.stringify(d)}, 'c-1', 0, false)`,
  // A literal: process.pid is a getter, JavaScript that would notice the termination first.
  scanGroup: () => 'binding.scanGroup(1, 10)',
  createScanMemory: () => 'binding.createScanMemory()',
  // The defaults again (in the child process only).
  scanTestHook: () => 'binding.scanTestHook(0, false)',
};
for (const [name, call] of Object.entries(lateCalls)) {
  test(`A binding call (${name}) made after terminate() was called, before the Worker stopped, does not take the process down [L2.worker]`, async (t) => {
    const dir = tmpDirFor(t, 'procpin-wlate-');
    const binding = JSON.stringify(join(root, 'dist', 'binding.js'));
    const lock = JSON.stringify(join(dir.path, 'lock'));
    const code = `
      import { Worker } from 'node:worker_threads';
      import { openSync, fstatSync, readFileSync } from 'node:fs';
      const { binding } = await import(${binding});
      const held = openSync(${lock}, 'w');
      binding.flock(held, 2); // LOCK_EX
      const ino = fstatSync(held).ino;
      const w = new Worker(\`
        const { parentPort } = require('node:worker_threads');
        const { openSync } = require('node:fs');
        const { binding } = require(${binding.replace(/"/g, '\\"')});
        const fd = openSync(${lock.replace(/"/g, '\\"')}, 'r');
        parentPort.postMessage('blocking');
        binding.flock(fd, 2);
        globalThis.result = ${call(dir.path).replace(/"/g, '\\"')};
        // A native call, as the binding call was: the message is delivered at the Worker's exit.
        parentPort.postMessage(typeof globalThis.result);\`, { eval: true, execArgv: [] });
      const said = [];
      w.on('message', (m) => said.push(m));
      await new Promise((r) => w.once('message', r));
      // The Worker's flock is blocked: the kernel lists it as a waiter on the lock's inode.
      const { procLocks } = await import(${procLib});
      const blocked = () => procLocks().some((l) => l.blocked && l.type === 'FLOCK' && l.ino === String(ino));
      const end = Date.now() + 10000;
      while (!blocked() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
      const wasBlocked = blocked();
      const stopped = w.terminate();
      binding.flock(held, 8); // LOCK_UN: the Worker's flock returns
      await stopped;
      console.log(JSON.stringify({ wasBlocked, said }));`;
    const r = await runNode(code, {
      timeout: 60000,
      env: {
        MALLOC_PERTURB_: '165',
        GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0',
        // scanTestHook is the test build's (the production addon has no hooks).
        ...(name === 'scanTestHook' ? { PROCPIN_BINDING: testBinding } : {}),
      },
    });
    const line = r.stdout.trim().split('\n').at(-1);
    t.diagnostic(`status ${r.code ?? r.signal}; ${line}`);
    assert.equal(r.code, 0, `status ${r.code ?? r.signal}: ${r.stderr.slice(0, 2000)}`);
    const out = JSON.parse(line);
    assert.equal(out.wasBlocked, true, 'the Worker never blocked in flock');
    // The call ran, in the stopping environment: it made no promise (nor queued any work).
    assert.deepEqual(out.said, ['blocking', 'undefined']);
  });
}
