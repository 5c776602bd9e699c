// Spawning from worker_threads: each Worker has its own watchers; the parent-death signal
// follows the spawning thread (a kernel rule: PR_SET_PDEATHSIG fires when the thread that forked
// the child exits); a Worker's children are never left as zombies of the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { pkg, procStat, procState, waitFor } from '../helpers.mjs';

/**
 * A Worker with its exit code (a promise, attached at once) and its next message.
 * @typedef {Worker & { exitCode: Promise<number>, next: () => Promise<any> }} TestWorker
 */

/**
 * A Worker running `body` (an async function body; `spawn`, `post` and `fs` in scope).
 * @returns {TestWorker}
 */
function moduleWorker(body) {
  const w = /** @type {TestWorker} */ (
    new Worker(
      `const { parentPort } = require('node:worker_threads');
     const fs = require('node:fs');
     const { spawn } = require(${pkg});
     const post = (m) => parentPort.postMessage(m);
     (async () => { ${body} })();`,
      { eval: true },
    )
  );
  w.exitCode = once(w, 'exit').then(([code]) => code); // attached now: the exit may come early
  const messages = [];
  const waiters = [];
  w.on('message', (m) => {
    messages.push(m);
    for (const f of waiters.splice(0)) f();
  });
  w.next = async () => {
    while (messages.length === 0) await new Promise((r) => waiters.push(r));
    return messages.shift();
  };
  return w;
}

test('a Child spawned inside a Worker reports its exit there; the Worker ends cleanly [L2.worker]', async () => {
  const w = moduleWorker(`
    const c = spawn('sh', ['-c', 'exit 7'], { stdio: 'ignore' });
    const info = await c.exited;
    post({ pid: c.pid, state: fs.readFileSync('/proc/' + c.pid + '/stat', 'utf8').split(') ')[1][0], info });
    c.reap();
  `);
  const m = await w.next();
  assert.equal(m.info.exitCode, 7);
  assert.equal(m.state, 'Z');
  assert.equal(await w.exitCode, 0);
  assert.equal(procState(m.pid), null);
});

test('parentDeathSignal follows the spawning thread: the child dies when its Worker ends, and is reaped [L2.spawn.pdeathsig]', async () => {
  const w = moduleWorker(`
    const c = spawn('sleep', ['60'], { stdio: 'ignore', parentDeathSignal: 'SIGKILL' });
    post(c.pid);
    setInterval(() => {}, 1000);
  `);
  const pid = await w.next();
  try {
    assert.equal(procStat(pid).ppid, process.pid);
    // spawn returns once execve replaced the memory; the arguments appear a moment later
    await waitFor(() => /^sleep\0/.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8')), {
      what: 'sleep to run',
    });
  } finally {
    await w.terminate();
  }
  // the process lives on; the child got SIGKILL when the Worker's thread ended, and since it is
  // a child of this process nobody but procpin can reap it: it must not stay a zombie
  await waitFor(() => procState(pid) === null, { what: 'the child to die and be reaped', timeout: 5000 });
});

test("a Worker's child that outlives the Worker is reaped by the process when it exits [L2.worker]", async () => {
  const w = moduleWorker(`
    const c = spawn('sleep', ['60'], { stdio: 'ignore' });
    c.unref(); // else the Worker would wait for it
    post(c.pid);
  `);
  const pid = await w.next();
  await w.exitCode;
  // still running, still our child: nothing killed it
  assert.notEqual(procState(pid), null);
  assert.notEqual(procState(pid), 'Z');
  assert.equal(procStat(pid).ppid, process.pid);
  process.kill(pid, 'SIGTERM'); // safe: unreaped, the pid is still that child's
  await waitFor(() => procState(pid) === null, { what: 'the orphaned child to be reaped', timeout: 5000 });
});

test('a Worker that ends with exited but unreaped children leaves no zombie [L2.worker]', async () => {
  const w = moduleWorker(`
    const kids = [spawn('true', [], { stdio: 'ignore' }), spawn('sh', ['-c', 'exit 3'], { stdio: 'pipe' })];
    await Promise.all(kids.map((k) => k.exited));
    post(kids.map((k) => k.pid));
    process.exit(0);
  `);
  const pids = await w.next();
  await w.exitCode;
  await waitFor(() => pids.every((p) => procState(p) === null), { what: 'the zombies to be reaped' });
});

test('terminating a Worker while its child runs and is watched does not crash [L2.worker]', async () => {
  for (let i = 0; i < 5; i++) {
    const w = moduleWorker(`
      const c = spawn('sleep', ['0.05'], { stdio: 'pipe' });
      post(c.pid);
      c.exited.then(() => post('exited'));
    `);
    const pid = await w.next();
    await w.terminate();
    await waitFor(() => procState(pid) === null, { what: 'the child to be reaped', timeout: 5000 });
  }
});
