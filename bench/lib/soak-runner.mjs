// N spawn/exit/reap cycles of /bin/true in this process; prints the descriptor count and RSS
// after a warm-up and at the end (each after a full GC). Run with --expose-gc.
//   node --expose-gc soak-runner.mjs --impl procpin|child_process --cycles N
import * as cp from 'node:child_process';
import { readdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { nowMs } from './harness.mjs';
import { loadProcpin } from './procpin.mjs';

const { values } = parseArgs({
  options: { impl: { type: 'string' }, cycles: { type: 'string', default: '10000' } },
});
const cycles = Number(values.cycles);
const pp = loadProcpin();

const once =
  values.impl === 'procpin'
    ? async () => {
        const c = pp.spawn('/bin/true', [], { stdio: 'ignore' });
        await c.exited;
        c.reap();
        c.close?.();
      }
    : () =>
        new Promise((resolve, reject) => {
          const c = cp.spawn('/bin/true', [], { stdio: 'ignore' });
          c.once('error', reject);
          c.once('exit', resolve);
        });

function snapshot() {
  globalThis.gc?.();
  return { fds: readdirSync('/proc/self/fd').length, rss: process.memoryUsage().rss };
}

const warm = Math.min(500, Math.ceil(cycles / 10));
for (let i = 0; i < warm; i++) await once();
const before = snapshot();
const t0 = nowMs();
for (let i = 0; i < cycles; i++) await once();
const ms = nowMs() - t0;
const after = snapshot();
process.stdout.write(
  JSON.stringify({
    cycles,
    ms,
    fdGrowth: after.fds - before.fds,
    rssGrowthMB: (after.rss - before.rss) / 1e6,
    rssMB: after.rss / 1e6,
  }) + '\n',
);
