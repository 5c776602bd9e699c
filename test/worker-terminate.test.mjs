// No Node-API call can take the process down while an environment terminates: Workers are
// terminated again and again with every kind of procpin work in flight (sweep, claim, claimPidfile,
// the group scan, spawn, openProcess, flock with and without an AbortSignal), in a child process
// whose status tells whether it survived.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pkg, runNode, tmpDir } from './helpers.mjs';
import { runs } from './fixtures/reliab-lib.mjs';

test('Workers terminated mid-work dozens of times in a loop never take the process down, and leave none of their groups', async (t) => {
  const dir = tmpDir('procpin-wterm-');
  t.after(() => dir[Symbol.dispose]());
  const rounds = runs(60, 300);
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
            const g = p.spawnGroup('sh', ['-c', 'sleep 1000 & exit 0'], { stdio: 'ignore', grace: 1000 });
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
    const live = () => readdirSync('/proc').filter((n) => {
      try {
        const s = readFileSync('/proc/' + n + '/stat', 'utf8');
        const r = s.slice(s.lastIndexOf(')') + 2).split(' ');
        return pgids.includes(Number(r[2])) && r[0] !== 'Z';
      } catch { return false; }
    }).length;
    const end = Date.now() + 5000;
    while (live() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    console.log(JSON.stringify({ survived, groups: pgids.length, alive: live() }));`;
  const r = await runNode(code, { timeout: 240000 });
  const line = r.stdout.trim().split('\n').at(-1);
  t.diagnostic(`rounds ${rounds}: status ${r.code ?? r.signal}; ${line}`);
  assert.equal(r.code, 0, r.stderr.slice(0, 2000));
  const out = JSON.parse(line);
  assert.equal(out.survived, rounds);
  assert.ok(out.groups >= rounds);
  assert.equal(out.alive, 0, 'members of terminated Workers still alive');
});
