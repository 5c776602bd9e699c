// A default-environment spawn on the main thread racing a SHARE_ENV Worker that rewrites
// process.env: every spawn starts, and every child gets an environment that process.env held
// variable by variable (each variable once, the untouched ones intact), never a torn copy of the
// live `environ` that the Worker is reallocating.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { exitedZero, root, runNode } from '../helpers.mjs';

const pkgUrl = JSON.stringify(pathToFileURL(join(root, 'dist', 'index.js')).href);

test('default-environment spawns racing a SHARE_ENV Worker that rewrites process.env all start, each with a consistent environment [L2.spawn.exec]', async () => {
  const r = await runNode(
    `
    import { Worker, SHARE_ENV } from 'node:worker_threads';
    const p = await import(${pkgUrl});
    process.env.PROCPIN_STABLE = 'yes';
    const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(\`
      import { parentPort } from 'node:worker_threads';
      let i = 0, stop = false;
      parentPort.on('message', () => { stop = true; });
      parentPort.postMessage('go');
      (function churn() {
        for (let k = 0; k < 200; k++, i++) {
          // Grow and shrink the environment (glibc reallocates environ) and rewrite values.
          process.env['PROCPIN_RACE_' + (i % 64)] = String(i);
          if (i % 3 === 0) delete process.env['PROCPIN_RACE_' + ((i + 32) % 64)];
        }
        if (!stop) setImmediate(churn); else parentPort.close();
      })();\`)), { env: SHARE_ENV });
    await new Promise((r) => w.once('message', r));
    const out = { failed: {}, bad: 0, spawned: 0, samples: [] };
    const pending = [];
    for (let n = 0; n < 600; n++) {
      let c;
      try {
        c = p.spawn('/usr/bin/env', [], { stdio: ['ignore', 'pipe', 'ignore'] });
      } catch (e) {
        out.failed[e.code] = (out.failed[e.code] ?? 0) + 1;
        continue;
      }
      out.spawned++;
      let text = '';
      c.stdout.setEncoding('latin1');
      c.stdout.on('data', (d) => (text += d));
      pending.push(new Promise((res) => c.stdout.once('end', res)).then(async () => {
        await c.exited; c.reap();
        const lines = text.split('\\n').filter(Boolean);
        const names = lines.map((l) => l.slice(0, l.indexOf('=')));
        const ok = lines.includes('PROCPIN_STABLE=yes') && new Set(names).size === names.length &&
          lines.every((l) => !l.startsWith('PROCPIN_RACE_') || /^PROCPIN_RACE_\\d+=\\d+$/.test(l));
        if (!ok) { out.bad++; if (out.samples.length < 2) out.samples.push(text.slice(0, 400)); }
      }));
      if (pending.length % 50 === 0) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    w.postMessage('stop');
    await new Promise((r) => w.once('exit', r));
    console.log(JSON.stringify(out));`,
    { timeout: 120000 },
  );
  const out = JSON.parse(exitedZero(r));
  assert.deepEqual(
    { failed: out.failed, bad: out.bad, spawned: out.spawned, samples: out.samples },
    { failed: {}, bad: 0, spawned: 600, samples: [] },
  );
});
