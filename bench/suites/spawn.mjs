// spawn+exit+reap of /bin/true against the parent's memory. Each size runs in its own Node
// process holding that much (off-heap, touched), with all contenders interleaved there.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { benchDir } from '../lib/cbin.mjs';
import { summarize } from '../lib/harness.mjs';
import { NOT_YET } from '../lib/procpin.mjs';

export const id = 'spawn';
export const title = 'spawn + exit + reap of /bin/true, by parent memory';

function runSize(ctx, mib, reps, warmup) {
  return new Promise((resolve, reject) => {
    const args = [join(benchDir, 'lib', 'spawn-runner.mjs'), '--mib', String(mib), '--reps', String(reps)];
    args.push('--warmup', String(warmup), '--floor', ctx.bins.floor);
    if (ctx.bins['pollfloor.node']) args.push('--addon', ctx.bins['pollfloor.node']);
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.once('error', reject);
    p.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`spawn-runner --mib ${mib} exited ${code}`));
      resolve(JSON.parse(out));
    });
  });
}

export async function run(ctx) {
  const plan = ctx.quick
    ? [
        [0, 5, 1],
        [256, 5, 1],
      ]
    : [
        [0, 300, 20],
        [256, 200, 10],
        [1024, 150, 10],
        [4096, 60, 5],
      ];
  const rows = [];
  const series = [];
  for (const [mib, reps, warmup] of plan) {
    ctx.log(`spawn: parent holding ${mib} MiB, ${reps} rounds`);
    const r = await runSize(ctx, mib, reps, warmup);
    const label = `parent ${mib} MiB`;
    for (const [name, { samples }] of Object.entries(r.results)) {
      rows.push({ bench: id, case: label, contender: name, unit: 'ms', ...summarize(samples), mib });
    }
    if (!r.procpinSpawn) rows.push({ bench: id, case: label, contender: 'procpin.spawn', status: NOT_YET, mib });
    series.push({ mib, rssMiB: r.rssMiB });
  }
  return { rows, ref: 'C posix_spawn', series };
}
