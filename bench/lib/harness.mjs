// The measuring core: contenders run interleaved in one loop (each round in a shuffled order)
// after a warm-up, so that whatever the shared machine does meanwhile lands on all of them alike.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Milliseconds on the monotonic clock (the same clock C's CLOCK_MONOTONIC reads). */
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** median, p95, p99, min, mean of samples. */
export function summarize(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    median: percentile(s, 50),
    p95: percentile(s, 95),
    p99: percentile(s, 99),
    min: s[0] ?? NaN,
    mean,
  };
}

// A fixed-seed generator (mulberry32): every run shuffles its rounds the same way.
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

function shuffled(list, random) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Runs `contenders` interleaved, each round in a new order (shuffled, with a fixed seed): a
 * rotation kept every contender behind the same neighbour, and what a neighbour leaves behind
 * (a cold cache, work still running) then weighed on one contender only (in one spawn run the
 * same build measured 1.3x slower in one slot than in another). Each contender is `{ name, run, reps? }` where `run()` returns
 * (or resolves to) one sample in ms, or `{ ms, ...extra }`. A contender with fewer `reps` drops
 * out of later rounds. Returns `{ [name]: { samples, extras } }`.
 */
export async function interleave(contenders, { reps, warmup = 1 }) {
  const out = Object.fromEntries(contenders.map((c) => [c.name, { samples: [], extras: [] }]));
  for (let w = 0; w < warmup; w++) {
    for (const c of contenders) if ((c.reps ?? reps) > 0 && (c.warmup ?? true)) await c.run();
  }
  const random = seeded(0x5eed);
  for (let i = 0; i < reps; i++) {
    const round = contenders.filter((c) => (c.reps ?? reps) > i);
    for (const c of shuffled(round, random)) {
      const r = await c.run();
      const rec = out[c.name];
      if (typeof r === 'number') rec.samples.push(r);
      else {
        rec.samples.push(r.ms);
        rec.extras.push(r);
      }
    }
  }
  return out;
}

/**
 * A long-lived helper process driven line by line over stdin/stdout (the C floors and the pidfd
 * watcher). `request(line)` resolves with the next line it prints.
 */
export class LineProcess {
  constructor(file, args = []) {
    this.proc = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = [];
    this.waiters = [];
    this.exited = new Promise((resolve) => this.proc.once('exit', resolve));
    createInterface({ input: this.proc.stdout }).on('line', (l) => {
      const w = this.waiters.shift();
      if (w) w(l);
      else this.lines.push(l);
    });
    this.proc.once('exit', (code, sig) => {
      for (const w of this.waiters.splice(0)) w(`error exited ${code ?? sig}`);
    });
  }

  /** The next line printed. */
  next() {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends `line` and resolves with the reply line. */
  request(line) {
    this.proc.stdin.write(line + '\n');
    return this.next();
  }

  /** Sends `line` without waiting. */
  send(line) {
    this.proc.stdin.write(line + '\n');
  }

  async close() {
    this.proc.stdin.end();
    await this.exited;
  }
}

/** Parses a C floor's reply (ns) into ms, throwing on "error ...". */
export function replyMs(line) {
  if (!/^\d+$/.test(line)) throw new Error(`floor replied: ${line}`);
  return Number(line) / 1e6;
}
