// The child's stack is kept per thread: several threads spawning at once (the main thread and
// Workers) each run their own children with their own arguments, and a Worker's stack goes with
// its thread. The stacks are read from /proc/self/maps: a 4 KiB PROT_NONE guard right below a
// 64 KiB read-write mapping.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exitedZero, root, runNode } from '../helpers.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);

test('the main thread and four Workers spawning at once each get their own children, and an ended Worker leaves no child stack mapped [L2.spawn.exec]', async () => {
  const r = await runNode(
    `
    import { Worker } from 'node:worker_threads';
    import { readFileSync } from 'node:fs';
    const p = await import(${pkgUrl});
    // Guard + stack pairs in our own address space.
    const stacks = () => {
      const maps = readFileSync('/proc/self/maps', 'utf8').trim().split('\\n').map((l) => {
        const [range, perms] = l.split(' ');
        const [a, b] = range.split('-').map((x) => BigInt('0x' + x));
        return { a, b, perms };
      });
      let n = 0;
      for (let i = 0; i + 1 < maps.length; i++) {
        const g = maps[i], s = maps[i + 1];
        if (g.perms === '---p' && g.b - g.a === 4096n && s.a === g.b && s.perms === 'rw-p' && s.b - s.a === 65536n) n++;
      }
      return n;
    };
    // Each child exits with a code that names its thread and its turn: a child that ran on
    // another thread's stack, or with another's request, shows up as a wrong code.
    const run = async (t, n) => {
      const bad = [];
      for (let k = 0; k < n; k++) {
        const want = (t * 50 + k) % 250;
        const c = p.spawn('/bin/sh', ['-c', 'exit ' + want], { stdio: 'ignore' });
        const info = await c.exited;
        c.reap();
        if (info.exitCode !== want) bad.push([t, k, info.exitCode]);
      }
      return bad;
    };
    const src = \`
      import { parentPort, workerData } from 'node:worker_threads';
      const p = await import(\${JSON.stringify(${pkgUrl})});
      const run = \${run.toString()};
      parentPort.once('message', async () => {
        const bad = await run(workerData, 40);
        parentPort.postMessage(bad);
        parentPort.once('message', () => parentPort.close());
      });
      parentPort.postMessage('ready');\`;
    await run(0, 1);
    const base = stacks();
    const workers = [1, 2, 3, 4].map((t) => new Worker(new URL('data:text/javascript,' + encodeURIComponent(src)), { workerData: t }));
    await Promise.all(workers.map((w) => new Promise((res) => w.once('message', res))));
    const done = workers.map((w) => new Promise((res) => w.once('message', res)));
    for (const w of workers) w.postMessage('go');
    const mine = await run(0, 40);
    const theirs = (await Promise.all(done)).flat();
    const during = stacks();
    const ended = workers.map((w) => new Promise((res) => w.once('exit', res)));
    for (const w of workers) w.postMessage('end');
    await Promise.all(ended);
    console.log(JSON.stringify({ bad: [...mine, ...theirs], base, during: during - base, after: stacks() - base }));`,
    { timeout: 120000 },
  );
  const out = JSON.parse(exitedZero(r));
  assert.deepEqual(
    { bad: out.bad, base: out.base, during: out.during, after: out.after },
    { bad: [], base: 1, during: 4, after: 0 },
  );
});
