// procpin.spawn against child_process.spawn, standalone:
//   node bench/spawn.mjs [--reps N] [--mib M]
// Two measurements, each in a fresh Node process, contenders interleaved round by round:
//   1. spawn + exit + reap of /bin/true, from a small parent and from one holding M MiB
//      (default 1024; off-heap Buffers with every page written);
//   2. exit -> notification: the child stamps CLOCK_MONOTONIC just before _exit, the parent
//      subtracts it from the moment it is told (Child.exited vs child_process 'exit').
// Prints medians (p95 too) and the ratios against the goals: spawn >= 2.5x faster (small),
// >= 8x (1 GiB), exit noticed >= 1.8x sooner.
import * as cp from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '200' },
    mib: { type: 'string', default: '1024' },
    measure: { type: 'string' }, // internal: the measuring process
  },
});
const reps = Number(values.reps);
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}
function p95(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(0.95 * s.length) - 1)];
}

/** Runs the contenders interleaved (A B, B A, ...) after a warm-up; returns samples per name. */
async function interleave(contenders, n, warmup = 10) {
  for (let i = 0; i < warmup; i++) for (const c of contenders) await c.run();
  const out = Object.fromEntries(contenders.map((c) => [c.name, []]));
  for (let i = 0; i < n; i++) {
    const order = i % 2 ? [...contenders].reverse() : contenders;
    for (const c of order) out[c.name].push(await c.run());
  }
  return out;
}

async function measure(kind) {
  const procpin = createRequire(import.meta.url)(join(root, 'dist', 'index.js'));
  if (kind === 'spawn') {
    const hold = [];
    for (let left = Number(values.mib); left > 0; left -= 256) {
      hold.push(Buffer.alloc(Math.min(256, left) << 20).fill(1));
    }
    const res = await interleave(
      [
        {
          name: 'procpin',
          run: async () => {
            const t0 = nowMs();
            const c = procpin.spawn('/bin/true', [], { stdio: 'ignore' });
            await c.exited;
            c.reap();
            return nowMs() - t0;
          },
        },
        {
          name: 'child_process',
          run: () =>
            new Promise((resolve, reject) => {
              const t0 = nowMs();
              const c = cp.spawn('/bin/true', [], { stdio: 'ignore' });
              c.once('error', reject);
              c.once('exit', () => resolve(nowMs() - t0));
            }),
        },
      ],
      reps,
    );
    hold.length = 0;
    return res;
  }
  // exit -> notification
  const stampBin = buildStamp();
  const dir = mkdtempSync('/dev/shm/procpin-bench-');
  const stampOf = (f) => Number(readFileSync(f, 'utf8')) / 1e6;
  try {
    return await interleave(
      [
        {
          name: 'procpin',
          run: async () => {
            const f = join(dir, 'pp');
            const c = procpin.spawn(stampBin, [f, '5'], { stdio: 'ignore' });
            await c.exited;
            const t = nowMs();
            c.reap();
            return t - stampOf(f);
          },
        },
        {
          name: 'child_process',
          run: () =>
            new Promise((resolve, reject) => {
              const f = join(dir, 'cp');
              const c = cp.spawn(stampBin, [f, '5'], { stdio: 'ignore' });
              c.once('error', reject);
              c.once('exit', () => resolve(nowMs() - stampOf(f)));
            }),
        },
      ],
      Math.min(reps, 200),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function buildStamp() {
  const src = join(here, 'c', 'exit_stamp.c');
  const bin = join(here, '.bin', 'exit_stamp');
  const r = cp.spawnSync('sh', [
    '-c',
    `mkdir -p "$(dirname "$2")" && [ "$2" -nt "$1" ] || cc -O2 -o "$2" "$1"`,
    'sh',
    src,
    bin,
  ]);
  if (r.status !== 0) throw new Error(`cannot build ${bin}: ${r.stderr}`);
  return bin;
}

function run(kind, mib) {
  const r = cp.spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--measure', kind, '--reps', String(reps), '--mib', String(mib)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`measuring ${kind} failed (${r.status})`);
  return JSON.parse(r.stdout);
}

if (values.measure) {
  process.stdout.write(JSON.stringify(await measure(values.measure)));
} else {
  const fmt = (x) => x.toFixed(2).padStart(7);
  const lines = [];
  const report = (label, res, goal) => {
    const pp = median(res.procpin);
    const cpm = median(res.child_process);
    const ratio = cpm / pp;
    lines.push(
      `${label.padEnd(34)} procpin ${fmt(pp)} ms (p95 ${fmt(p95(res.procpin))})  ` +
        `child_process ${fmt(cpm)} ms (p95 ${fmt(p95(res.child_process))})  ` +
        `ratio ${ratio.toFixed(2)}x  goal >= ${goal}x ${ratio >= goal ? 'met' : 'NOT met'}`,
    );
    console.log(lines.at(-1));
  };
  console.log(`node ${process.version}, ${reps} interleaved rounds per measurement (medians)`);
  report('spawn+exit+reap, small parent', run('spawn', 0), 2.5);
  report(`spawn+exit+reap, ${values.mib} MiB parent`, run('spawn', Number(values.mib)), 8);
  report('exit -> notified', run('exit', 0), 1.8);
}
