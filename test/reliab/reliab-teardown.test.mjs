// Teardown: the addon inside a Worker that is terminated while it waits (a child's exit, a flock),
// and a process that exits with children and waits pending. No crash, no hang, no descriptor
// left; the env cleanup hooks must run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as procpin from '../../dist/index.js';
import { fdTarget, isGone, need, openFds, pkg, runNode, tmpDirFor, waitFor } from '../helpers.mjs';
import { runs } from '../fixtures/reliab-lib.mjs';

const hasSpawn = typeof procpin.spawn === 'function';

function worker(code) {
  return new Worker(`import(${pkg}).then(async (procpin) => { ${code} })`, { eval: true });
}

/** A lock file in a scratch directory of test `t` that this process holds (LOCK_EX, `held`). */
function heldLock(t, prefix) {
  const lockPath = join(tmpDirFor(t, prefix).path, 'lock');
  const held = openSync(lockPath, 'w');
  procpin.flockSync(held, procpin.constants.LOCK_EX);
  return { lockPath, held };
}

test('a Worker terminated while it waits for a child and a flock leaves no descriptor and no crash [L2.worker]', async (t) => {
  if (!need(t, hasSpawn, 'spawn is not built yet')) return;
  // We hold the lock, so the Worker's flock waits.
  const { lockPath, held } = heldLock(t, 'procpin-teardown-');
  const rounds = runs(10, 100);
  const pids = [];
  let before = null;
  // Round 0 warms up what Node and libuv open once per process for Workers (a signal pipe).
  for (let i = 0; i <= rounds; i++) {
    if (i === 1) before = openFds();
    const w = worker(`
      const { parentPort } = await import('node:worker_threads');
      const { openSync } = await import('node:fs');
      const c = procpin.spawn('sleep', ['1000'], { stdio: 'ignore' });
      const g = procpin.spawnGroup('sleep', ['1000'], { stdio: 'ignore' });
      const fd = openSync(${JSON.stringify(lockPath)}, 'r');
      procpin.flock(fd, procpin.constants.LOCK_EX).catch(() => {});
      c.exited.then(() => {});
      parentPort.postMessage([c.pid, g.pid]);`);
    const [cpid, gpid] = await new Promise((res, rej) => {
      w.once('message', res);
      w.once('error', rej);
    });
    pids.push(cpid, gpid);
    await w.terminate();
  }
  // The Worker's children got their parent-death signal when its thread ended (the group's by
  // default; spawn has none by default, so the plain child is killed here) and are reaped or
  // zombies of ours: either way, none runs on.
  for (let i = 0; i < pids.length; i += 2) {
    await waitFor(() => isGone(pids[i + 1]), { timeout: 3000, what: `group leader ${pids[i + 1]} gone` });
    try {
      process.kill(pids[i], 'SIGKILL');
    } catch {}
  }
  await waitFor(() => openFds().join() === before.join(), {
    timeout: 3000,
    what: 'descriptors back to where they were',
  }).catch(() => {});
  const extra = openFds()
    .filter((f) => !before.includes(f))
    .map((f) => `${f} -> ${fdTarget(f)}`);
  assert.deepEqual(extra, [], 'descriptors left by terminated Workers');
  closeSync(held);
});

test('a process that exits with children, exit waits and a flock wait pending exits cleanly [L2.worker]', async (t) => {
  if (!need(t, hasSpawn, 'spawn is not built yet')) return;
  const { lockPath, held } = heldLock(t, 'procpin-exit-');
  t.after(() => closeSync(held));
  for (const how of ['process.exit(0)', "process.kill(process.pid, 'SIGTERM')", 'return']) {
    // 'return': the loop runs dry. A pending flock and a running group keep Node alive (as a
    // pending read would), so that case has only an unref'd child, which must not.
    const natural = how === 'return';
    const r = await runNode(
      `import * as procpin from ${pkg};
       import { openSync } from 'node:fs';
       const c = procpin.spawn('sleep', ['1000'], { stdio: 'ignore', parentDeathSignal: 'SIGKILL' });
       const g = ${natural ? 'null' : "procpin.spawnGroup('sleep', ['1000'], { stdio: 'ignore' })"};
       if (!${natural}) {
         const fd = openSync(${JSON.stringify(lockPath)}, 'r');
         procpin.flock(fd, procpin.constants.LOCK_EX).catch(() => {});
       }
       c.exited.then(() => {});
       c.unref();
       console.log(JSON.stringify([c.pid, g ? g.pid : c.pid]));
       await new Promise((r) => setTimeout(r, 20));
       ${natural ? '' : how};`,
      { timeout: 10000 },
    );
    assert.notEqual(r.signal, 'SIGKILL', `${how}: hung (killed by the timeout)`);
    assert.ok(r.code === 0 || r.signal === 'SIGTERM', `${how}: ${r.code} ${r.signal} ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /Assertion|Segmentation|abort|FATAL/i, how);
    const [cpid, gpid] = JSON.parse(r.stdout.trim().split('\n')[0]);
    await waitFor(() => isGone(cpid) && isGone(gpid), {
      timeout: 3000,
      what: `${how}: children gone by the parent-death signal`,
    });
  }
});
