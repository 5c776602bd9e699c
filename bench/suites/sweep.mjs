// Sweep of 10,000 entries (95% dead owners) on tmpfs: procpin's sweep against the C loop doing
// the same checks and a naive Node loop. The measurement lives in bench/sweep.mjs (with
// bench/c/sweep.c), which interleaves its own rounds; this runs it and folds its medians into
// the table.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchDir } from '../lib/cbin.mjs';

export const id = 'sweep';
export const title = 'sweep of pid-named entries on tmpfs (95% dead owners)';

const script = join(benchDir, 'sweep.mjs');
const NAMES = { procpin: 'procpin sweep', c: 'C loop (same checks)', naive: 'naive Node loop' };
const REF = NAMES.c;

export async function run(ctx) {
  const entries = ctx.quick ? 1000 : 10000;
  const rounds = ctx.quick ? 1 : 7;
  const label = `${entries} entries`;
  if (!existsSync(script)) {
    return { rows: [{ bench: id, case: label, contender: NAMES.procpin, status: 'not available yet (bench/sweep.mjs has not landed)' }] };
  }
  ctx.log(`sweep: bench/sweep.mjs, ${entries} entries, ${rounds} rounds`);
  const args = [script, '--json', '--entries', String(entries), '--rounds', String(rounds)];
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    p.stdout.on('data', (d) => (s += d));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(s) : reject(new Error(`bench/sweep.mjs exited ${code}`))));
  });
  const json = JSON.parse(out);
  const rows = (json.results ?? []).map((r) => ({
    bench: id,
    case: `${json.entries ?? entries} entries on ${json.filesystem ?? 'tmpfs'}`,
    contender: NAMES[r.sweeper] ?? r.sweeper,
    unit: 'ms',
    median: r['median ms'],
    n: json.rounds,
    note: `${r['entries/s']} entries/s; min ${r['min ms']}, max ${r['max ms']} ms`,
  }));
  if (rows.length === 0) throw new Error('bench/sweep.mjs reported no results');
  return { rows, ref: REF };
}
