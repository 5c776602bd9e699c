// Sweep of 10,000 entries (95% dead owners) on tmpfs: procpin's sweep against the C loop doing
// the same checks and a naive Node loop. The measurement itself lives in bench/sweep.mjs (with
// bench/c/sweep.c); this wires it into the table.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchDir } from '../lib/cbin.mjs';

export const id = 'sweep';
export const title = 'sweep of 10,000 entries on tmpfs (95% dead owners)';

const script = join(benchDir, 'sweep.mjs');

export async function run(ctx) {
  if (!existsSync(script)) {
    return { rows: [{ bench: id, case: '10000 entries', contender: 'procpin sweep', status: 'not available yet (bench/sweep.mjs has not landed)' }] };
  }
  ctx.log('sweep: bench/sweep.mjs');
  const args = [script, '--json', ...(ctx.quick ? ['--quick'] : [])];
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    p.stdout.on('data', (d) => (s += d));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(s) : reject(new Error(`bench/sweep.mjs exited ${code}`))));
  });
  const json = JSON.parse(out.trim().split('\n').pop());
  const rows = (json.rows ?? json.results ?? []).map((r) => ({ bench: id, case: r.case ?? '10000 entries', ...r }));
  return { rows, ref: json.ref };
}
