// Sweep of 10,000 entries (95% dead owners) on tmpfs: procpin's sweep against the C loop doing
// the same checks and a naive Node loop. The measurement lives in bench/sweep.mjs (with
// bench/c/sweep.c), which interleaves its own rounds and prints its rows in this harness's shape
// with --json; this runs it and folds them into the table.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { benchDir } from '../lib/cbin.mjs';

export const id = 'sweep';
export const title = 'sweep of pid-named entries on tmpfs (95% dead owners)';

const script = join(benchDir, 'sweep.mjs');

export async function run(ctx) {
  const entries = ctx.quick ? 1000 : 10000;
  if (!existsSync(script)) {
    return {
      rows: [
        {
          bench: id,
          case: `${entries} entries`,
          contender: 'procpin sweep',
          status: 'not available yet (bench/sweep.mjs has not landed)',
        },
      ],
    };
  }
  ctx.log(`sweep: bench/sweep.mjs, ${entries} entries`);
  const args = [script, '--json', '--entries', String(entries), ...(ctx.quick ? ['--quick'] : [])];
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let s = '';
    p.stdout.on('data', (d) => (s += d));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(s) : reject(new Error(`bench/sweep.mjs exited ${code}`))));
  });
  const json = JSON.parse(out.trim().split('\n').pop());
  if (!Array.isArray(json.rows) || json.rows.length === 0) throw new Error('bench/sweep.mjs reported no rows');
  const rows = json.rows.map((r) => ({
    ...r,
    bench: id,
    case: `${r.case}${json.filesystem ? ` on ${json.filesystem}` : ''}`,
    note: r.entriesPerSec === undefined ? undefined : `${r.entriesPerSec} entries/s`,
  }));
  return { rows, ref: json.ref };
}
