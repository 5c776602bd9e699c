// A Worker's end removes the cgroup directories of its 'cgroup' groups (its JavaScript no longer
// runs: the environment's teardown does it natively, after cgroup.kill, once cgroup.events says
// `populated 0`), waiting a short bound for the kernel to empty them: what is not empty by then
// stays for the main thread's end or a sweep. Read from the cgroup tree while the main thread runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupBase, cgroupsOf, marked } from './contain-helpers.mjs';
import { isRoot, need, pkg, waitFor } from '../helpers.mjs';

const cgroupOk = isRoot && cgroupBase !== null;

test.after(() => {
  assert.deepEqual(cgroupsOf(process.pid), []);
});

function events(dir) {
  return readFileSync(join(dir, 'cgroup.events'), 'latin1');
}

// A Worker that starts `n` contained groups (each a setsid daemon and a sleep), posts 'ready',
// then runs `then` (JavaScript in the Worker).
function startWorker(tok, n, then = '') {
  const script = `setsid sleep 1000.${tok} </dev/null >/dev/null 2>&1 & echo ready; exec sleep 1000.${tok}`;
  const w = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const { spawnGroup } = require(${pkg});
     let ready = 0;
     for (let i = 0; i < ${n}; i++) {
       const g = spawnGroup('sh', ['-c', ${JSON.stringify(script)}],
         { contain: 'cgroup', stdio: ['ignore', 'pipe', 'ignore'] });
       g.leader.stdout.once('data', () => {
         if (++ready === ${n}) { parentPort.postMessage('ready'); ${then} }
       });
     }`,
    { eval: true },
  );
  const ready = new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  const exited = new Promise((resolve) => w.once('exit', resolve));
  return { w, ready, exited };
}

test(
  'cgroup: a Worker terminated with 5 groups running leaves none of its cgroup directories behind while the main thread runs [L3a.end.worker]',
  { timeout: 60000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    for (let round = 0; round < 5; round++) {
      const tok = `${process.pid}1${round}${Math.floor(Math.random() * 1e6)}`;
      const { w, ready } = startWorker(tok, 5);
      await ready;
      await waitFor(() => marked(tok).length === 10, { timeout: 5000, what: 'ten members alive' });
      assert.equal(cgroupsOf(process.pid).length, 5);
      await w.terminate();
      // Right after terminate() resolves: the environment's teardown has run.
      assert.deepEqual(cgroupsOf(process.pid), [], `round ${round}: the Worker's cgroup directories`);
      await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
    }
  },
);

test(
  'cgroup: a Worker that ends by itself with groups unreleased leaves none of its cgroup directories behind [L3a.end.worker]',
  { timeout: 30000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    const tok = `${process.pid}2${Math.floor(Math.random() * 1e6)}`;
    const { ready, exited } = startWorker(tok, 3, 'process.exit(0);');
    await ready;
    assert.equal(await exited, 0);
    assert.deepEqual(cgroupsOf(process.pid), []);
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
  },
);

test(
  "cgroup: a terminated Worker's frozen cgroup is killed and removed [L3a.end.worker]",
  { timeout: 30000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    const tok = `${process.pid}3${Math.floor(Math.random() * 1e6)}`;
    const { w, ready } = startWorker(tok, 1);
    await ready;
    await waitFor(() => marked(tok).length === 2, { timeout: 5000, what: 'two members alive' });
    const [name] = cgroupsOf(process.pid);
    const dir = join(cgroupBase, name);
    writeFileSync(join(dir, 'cgroup.freeze'), '1');
    await waitFor(() => /^frozen 1/m.test(events(dir)), { timeout: 5000, what: 'the cgroup frozen' });
    await w.terminate();
    assert.equal(existsSync(dir), false, 'the frozen cgroup was removed');
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
  },
);

test(
  "cgroup: a cgroup that something outside keeps populated holds a Worker's terminate() no longer than the bound, and stays for the sweep [L3a.end.worker]",
  { timeout: 30000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    const tok = `${process.pid}4${Math.floor(Math.random() * 1e6)}`;
    const { w, ready } = startWorker(tok, 1);
    await ready;
    const [name] = cgroupsOf(process.pid);
    const dir = join(cgroupBase, name);
    // Four loops move new processes into the cgroup again and again, also after its cgroup.kill:
    // it never stays empty long enough to be seen empty (one loop alone left gaps a busy machine
    // could see). Each stops by itself once the directory is gone; all are one process group.
    const loop = `while :; do sleep 1000.${tok} & echo $! > "$1/cgroup.procs" 2>/dev/null || break; done`;
    const filler = spawn('sh', ['-c', `for i in 1 2 3 4; do (${loop}) & done; wait`, 'sh', dir], {
      stdio: 'ignore',
      detached: true,
    });
    const killFiller = () => {
      try {
        process.kill(-(/** @type {number} */ (filler.pid)), 'SIGKILL');
      } catch {}
    };
    t.after(killFiller);
    await waitFor(() => marked(tok).length > 20, { timeout: 5000, what: 'the filler at work' });
    const t0 = performance.now();
    await w.terminate();
    const ms = performance.now() - t0;
    assert.ok(ms < 1000, `terminate() took ${ms} ms`);
    assert.equal(existsSync(dir), true, 'a cgroup the kernel could not empty is left for the sweep');
    killFiller();
    await new Promise((r) => (filler.exitCode === null && filler.signalCode === null ? filler.once('exit', r) : r()));
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    await waitFor(() => /^populated 0/m.test(events(dir)), { timeout: 3000, what: 'the cgroup empty' });
    rmdirSync(dir);
    // The filler's last sleeps, started outside the cgroup.
    for (const pid of marked(tok)) process.kill(pid, 'SIGKILL');
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
  },
);

test(
  "cgroup: two Workers of one process running 'cgroup' groups at once each get their own cgroup [L3a.end.worker]",
  { timeout: 30000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    const tok = `${process.pid}5${Math.floor(Math.random() * 1e6)}`;
    const a = startWorker(tok, 2);
    await a.ready;
    const b = startWorker(tok, 2);
    await b.ready;
    await waitFor(() => marked(tok).length === 8, { timeout: 5000, what: 'eight members alive' });
    assert.equal(cgroupsOf(process.pid).length, 4);
    await Promise.all([a.w.terminate(), b.w.terminate()]);
    assert.deepEqual(cgroupsOf(process.pid), []);
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
  },
);
