// A long spawn/exit/reap soak: descriptor and RSS growth between a warm-up and the end.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { benchDir } from '../lib/cbin.mjs';
import { NOT_YET } from '../lib/procpin.mjs';

export const id = 'soak';
export const title = 'spawn/exit/reap soak: descriptor and RSS growth';

function soak(impl, cycles) {
  return new Promise((resolve, reject) => {
    const args = ['--expose-gc', join(benchDir, 'lib', 'soak-runner.mjs'), '--impl', impl, '--cycles', String(cycles)];
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.once('error', reject);
    p.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`soak ${impl} exited ${code}`)),
    );
  });
}

export async function run(ctx) {
  const rows = [];
  const plan = [
    ['procpin.spawn', 'procpin', ctx.quick ? 200 : 10000, ctx.has.spawn],
    ['child_process.spawn', 'child_process', ctx.quick ? 100 : 1000, true],
  ];
  for (const [name, impl, cycles, ok] of plan) {
    const label = `${cycles} cycles`;
    if (!ok) {
      rows.push({ bench: id, case: label, contender: name, status: NOT_YET });
      continue;
    }
    ctx.log(`soak: ${name} ${cycles} cycles`);
    const r = await soak(impl, cycles);
    rows.push({
      bench: id,
      case: label,
      contender: name,
      unit: 'ms/cycle',
      n: cycles,
      median: r.ms / cycles,
      fdGrowth: r.fdGrowth,
      rssGrowthMB: r.rssGrowthMB,
      rssMB: r.rssMB,
    });
  }
  return { rows };
}
