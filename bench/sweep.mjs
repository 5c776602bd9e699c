// Benchmark: sweeping 10,000 pid-named entries, 95% of them dead, on tmpfs (a disk filesystem
// measures its discards, not the sweep). Three sweepers over identical directories, in
// interleaved rounds so that drift hits all of them alike:
//   procpin  sweep(dir, { prefix })  (all seven conditions, off the event loop, full report)
//   c        bench/c/sweep.c: a plain C loop with the same checks (lstat, kill, open O_NOFOLLOW,
//            fstat, flock, the name re-checked, unlinkat/rmdir), compiled here with cc
//   naive    a synchronous Node loop (readdirSync, lstatSync, process.kill, openSync, fstatSync,
//            flockSync, unlinkSync/rmdirSync)
// Usage: node bench/sweep.mjs [--entries N] [--rounds R] [--quick] [--json]
// --json prints one line: { bench, ..., ref, rows: [{ case, contender, unit, n, median, ... }] },
// the shape bench/index.mjs collects.
// Mounts a private tmpfs when run as root, else uses /dev/shm.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    entries: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: process.env.BENCH_ROUNDS ?? '7' },
    'dead-ratio': { type: 'string', default: '0.95' },
    json: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
  },
});
const ENTRIES = Number(args.entries);
const ROUNDS = args.quick ? Math.min(3, Number(args.rounds)) : Number(args.rounds);
const DEAD_RATIO = Number(args['dead-ratio']);
const PREFIX = 'bench-';

const procpin = await import(process.env.PROCPIN_DIST || join(here, '..', 'dist', 'index.js'));
// PROCPIN_BEFORE: a second build swept in the same rounds (see bench/lib/procpin.mjs).
const before = process.env.PROCPIN_BEFORE ? await import(process.env.PROCPIN_BEFORE) : null;

// The C baseline, built once into bench/.bin.
const bin = join(here, '.bin', 'sweep');
const src = join(here, 'c', 'sweep.c');
if (!fs.existsSync(bin) || fs.statSync(bin).mtimeMs < fs.statSync(src).mtimeMs) {
  fs.mkdirSync(dirname(bin), { recursive: true });
  const cc = spawnSync(process.env.CC ?? 'cc', ['-O2', '-Wall', '-o', bin, src], { stdio: 'inherit' });
  if (cc.status !== 0) throw new Error('cannot compile bench/c/sweep.c');
}

// A private tmpfs when we may mount one, else /dev/shm.
let base = fs.mkdtempSync(join(tmpdir(), 'procpin-bench-'));
let mounted = false;
if (process.getuid?.() === 0) {
  mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=512m,mode=0700', 'procpin-bench', base]).status === 0;
}
if (!mounted) {
  fs.rmdirSync(base);
  base = fs.mkdtempSync('/dev/shm/procpin-bench-');
}
function cleanup() {
  if (mounted) spawnSync('umount', ['-l', base]);
  fs.rmSync(base, { recursive: true, force: true });
}
process.on('exit', cleanup);

const child = spawn('/bin/true');
const deadPid = child.pid;
await once(child, 'exit');
const livePid = process.pid;

// ENTRIES entries, alternately an empty directory and a file; DEAD_RATIO of them name a dead
// pid, the rest our own (live) pid. Plus a few names that are not candidates.
function populate(dir) {
  fs.mkdirSync(dir);
  const liveEvery = Math.round(1 / (1 - DEAD_RATIO));
  let dead = 0;
  for (let i = 0; i < ENTRIES; i++) {
    const live = i % liveEvery === 0;
    if (!live) dead++;
    const name = `${PREFIX}${live ? livePid : deadPid}-${i}`;
    if (i % 2) fs.writeFileSync(join(dir, name), '');
    else fs.mkdirSync(join(dir, name));
  }
  for (let i = 0; i < 10; i++) fs.writeFileSync(join(dir, `other-${i}`), '');
  return dead;
}

const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK } = fs.constants;
const candidate = new RegExp(`^${PREFIX}([1-9][0-9]*)(?:$|[-.])`);

function naiveSweep(dir) {
  let removed = 0;
  const euid = process.geteuid();
  for (const name of fs.readdirSync(dir)) {
    const m = candidate.exec(name);
    if (!m) continue;
    const p = join(dir, name);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st || !(st.isDirectory() || st.isFile()) || st.uid !== euid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue;
    } catch (e) {
      if (e.code !== 'ESRCH') continue;
    }
    const fd = fs.openSync(p, O_RDONLY | O_NOFOLLOW | (st.isDirectory() ? O_DIRECTORY : O_NONBLOCK));
    try {
      const fst = fs.fstatSync(fd);
      if (fst.ino !== st.ino || fst.dev !== st.dev) continue;
      if (!procpin.tryLock(fd, 'exclusive')) continue;
      if (st.isDirectory()) fs.rmdirSync(p);
      else fs.unlinkSync(p);
      removed++;
    } finally {
      fs.closeSync(fd);
    }
  }
  return removed;
}

const impls = {
  async procpin(dir) {
    const t0 = process.hrtime.bigint();
    const r = await procpin.sweep(dir, { prefix: PREFIX });
    const ns = Number(process.hrtime.bigint() - t0);
    return { ns, removed: r.removed.length };
  },
  ...(before && {
    async before(dir) {
      const t0 = process.hrtime.bigint();
      const r = await before.sweep(dir, { prefix: PREFIX });
      return { ns: Number(process.hrtime.bigint() - t0), removed: r.removed.length };
    },
  }),
  async c(dir) {
    const r = spawnSync(bin, [dir, PREFIX], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const [removed, , ns] = r.stdout.trim().split(' ').map(Number);
    return { ns, removed };
  },
  async naive(dir) {
    const t0 = process.hrtime.bigint();
    const removed = naiveSweep(dir);
    return { ns: Number(process.hrtime.bigint() - t0), removed };
  },
};
const order = Object.keys(impls);
const times = Object.fromEntries(order.map((k) => [k, []]));

// One warm-up round (not counted), then ROUNDS interleaved rounds, rotating the order.
let run = 0;
for (let round = -1; round < ROUNDS; round++) {
  for (let j = 0; j < order.length; j++) {
    const name = order[(j + Math.max(round, 0)) % order.length];
    const dir = join(base, `r${run++}`);
    const dead = populate(dir);
    const { ns, removed } = await impls[name](dir);
    if (removed !== dead) throw new Error(`${name} removed ${removed}, expected ${dead}`);
    fs.rmSync(dir, { recursive: true, force: true });
    if (round >= 0) times[name].push(ns);
  }
}

const CONTENDER = {
  procpin: 'procpin sweep()',
  before: 'procpin sweep() (before)',
  c: 'C loop (same checks)',
  naive: 'naive Node loop',
};
const sorted = (a) => [...a].sort((x, y) => x - y);
const median = (a) => {
  const s = sorted(a);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (a, p) => {
  const s = sorted(a);
  return s[Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length))) - 1];
};
const ms = (ns) => +(ns / 1e6).toFixed(2);
const cMed = median(times.c);
const rows = order.map((name) => {
  const t = times[name];
  const med = median(t);
  return {
    case: `${ENTRIES} entries`,
    contender: CONTENDER[name],
    unit: 'ms',
    n: t.length,
    median: ms(med),
    p95: ms(pct(t, 95)),
    min: ms(Math.min(...t)),
    max: ms(Math.max(...t)),
    mean: ms(t.reduce((x, y) => x + y, 0) / t.length),
    entriesPerSec: Math.round(ENTRIES / (med / 1e9)),
    vsC: +(med / cMed).toFixed(2),
  };
});

const meta = {
  entries: ENTRIES,
  deadRatio: DEAD_RATIO,
  rounds: ROUNDS,
  filesystem: mounted ? 'tmpfs (private mount)' : '/dev/shm',
  node: process.version,
};
if (args.json) {
  console.log(JSON.stringify({ bench: 'sweep', ...meta, ref: CONTENDER.c, rows }));
} else {
  console.log(
    `sweep: ${ENTRIES} entries (${Math.round(DEAD_RATIO * 100)}% dead, half empty directories, half files) on ${meta.filesystem}; ` +
      `${ROUNDS} interleaved rounds`,
  );
  const table = rows.map((r) => ({
    sweeper: r.contender,
    'median ms': r.median,
    'min ms': r.min,
    'max ms': r.max,
    'entries/s': r.entriesPerSec,
    'time vs C': r.vsC,
  }));
  const cols = Object.keys(table[0]);
  const width = cols.map((c) => Math.max(c.length, ...table.map((r) => String(r[c]).length)));
  const line = (cells) => cells.map((c, i) => String(c)[i ? 'padStart' : 'padEnd'](width[i])).join('  ');
  console.log(line(cols));
  for (const r of table) console.log(line(cols.map((c) => r[c])));
  console.log(`procpin takes ${rows[0].vsC}x the C loop's time (goal: within 2x).`);
}
