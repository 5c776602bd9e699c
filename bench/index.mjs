// procpin benchmarks: one entry point that runs every benchmark, contenders interleaved, and
// prints a table (or JSON with --json).
//   node bench/index.mjs [--quick] [--json | --md] [--only spawn,exit,...] [--svg | --no-svg]
//   node bench/index.mjs --from bench/out/latest.json --md [--svg]   (re-render a saved run)
//   node bench/index.mjs --from bench/out/latest.json --update-doc   (its figures into
//     BENCHMARKS.md, between the figures markers)
// --quick: a few repetitions of each, only to prove the benchmarks still run (CI).
// Every run is saved as bench/out/latest.json (quick runs as bench/out/quick.json).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchDir, buildC } from './lib/cbin.mjs';
import { evaluateGoals } from './lib/goals.mjs';
import { ensureBuilt, features, loadProcpin } from './lib/procpin.mjs';
import { spawnChart } from './lib/svg.mjs';
import * as spawnSuite from './suites/spawn.mjs';
import * as exitSuite from './suites/exit.mjs';
import * as groupSuite from './suites/group.mjs';
import * as sweepSuite from './suites/sweep.mjs';
import * as overheadSuite from './suites/overhead.mjs';
import * as soakSuite from './suites/soak.mjs';
import * as containSuite from './suites/contain.mjs';

export const suites = [spawnSuite, exitSuite, groupSuite, sweepSuite, overheadSuite, soakSuite, containSuite];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    md: { type: 'boolean', default: false },
    from: { type: 'string' },
    'update-doc': { type: 'boolean', default: false },
    only: { type: 'string' },
    svg: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout
    .write(`usage: node bench/index.mjs [--quick] [--json | --md] [--only spawn,exit,group,sweep,overhead,soak] [--svg | --no-svg]
       node bench/index.mjs --from bench/out/latest.json [--md] [--svg] [--update-doc]
Runs every benchmark with its contenders interleaved and prints median, p95 and ratios.
--quick only proves the benchmarks still run; --update-doc writes a saved run into BENCHMARKS.md.
`);
  process.exit(0);
}
const only = values.only ? new Set(values.only.split(',')) : null;
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

if (values.from) {
  const saved = JSON.parse(readFileSync(values.from, 'utf8'));
  saved.goals = evaluateGoals(saved.rows); // the goals of this version, on the saved rows
  if (values.svg) writeChart(saved);
  output(saved);
} else {
  output(await runAll());
}

async function runAll() {
  const built = ensureBuilt();
  if (!built.ok) log(built.why);
  const pp = loadProcpin();
  const ctx = { quick: values.quick, log, pp, has: features(pp), bins: buildC() };

  const machine = {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cpus: os.cpus().length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
    libuv: process.versions.uv,
  };

  const started = Date.now();
  const rows = [];
  let failed = false;
  for (const s of suites) {
    if (only && !only.has(s.id)) continue;
    const t = Date.now();
    try {
      const r = await s.run(ctx);
      // Ratios against the reference contender of the same case.
      for (const row of r.rows) {
        const ref =
          r.ref && r.rows.find((x) => x.case === row.case && x.contender === r.ref && typeof x.median === 'number');
        if (ref && typeof row.median === 'number') row.vsRef = row.median / ref.median;
        if (ref) row.ref = r.ref;
        row.title = s.title;
      }
      rows.push(...r.rows);
    } catch (err) {
      failed = true;
      log(`${s.id} failed: ${err.stack ?? err}`);
      rows.push({ bench: s.id, case: '-', contender: '-', title: s.title, status: `error: ${err.message}` });
    }
    log(`${s.id} done in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  }
  const goals = evaluateGoals(rows);
  const report = {
    date: new Date().toISOString(),
    quick: values.quick,
    machine,
    seconds: (Date.now() - started) / 1000,
    rows,
    goals,
  };

  mkdirSync(join(benchDir, 'out'), { recursive: true });
  writeFileSync(
    join(benchDir, 'out', values.quick ? 'quick.json' : 'latest.json'),
    JSON.stringify(report, null, 2) + '\n',
  );
  if (values.svg ?? !values.quick) writeChart(report);
  process.exitCode = failed ? 1 : 0;
  return report;
}

/** docs/spawn-vs-memory.svg from the spawn rows of `report`. */
function writeChart(report) {
  const rows = report.rows.filter((r) => r.bench === 'spawn');
  if (!rows.some((r) => typeof r.median === 'number')) return;
  const m = report.machine;
  const docs = join(benchDir, '..', 'docs');
  mkdirSync(docs, { recursive: true });
  writeFileSync(
    join(docs, 'spawn-vs-memory.svg'),
    spawnChart(rows, { machine: `${m.cpus} vCPU, Linux ${m.kernel.split('-')[0]}, Node ${m.node}` }),
  );
  log('wrote docs/spawn-vs-memory.svg');
}

function output(report) {
  if (values['update-doc']) {
    const file = join(benchDir, '..', 'BENCHMARKS.md');
    const doc = readFileSync(file, 'utf8');
    const begin = '<!-- figures:begin -->';
    const end = '<!-- figures:end -->';
    const i = doc.indexOf(begin);
    const j = doc.indexOf(end);
    if (i < 0 || j < i) throw new Error('BENCHMARKS.md has no figures markers');
    writeFileSync(file, `${doc.slice(0, i + begin.length)}\n${formatMarkdown(report)}\n${doc.slice(j)}`);
    log('updated BENCHMARKS.md');
  }
  if (values.json) process.stdout.write(JSON.stringify(report) + '\n');
  else if (values.md) process.stdout.write(formatMarkdown(report) + '\n');
  else process.stdout.write(formatTable(report.rows) + '\n' + formatGoals(report.goals, report.quick) + '\n');
}

function fmt(v) {
  if (typeof v !== 'number' || Number.isNaN(v)) return '';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function notes(r) {
  const n = [];
  if (r.status) n.push(r.status);
  if (r.survivors !== undefined) n.push(`survivors ${r.survivors}`);
  if (r.doneMedian !== undefined) n.push(`done ${fmt(r.doneMedian)} ms`);
  if (r.goneMedian !== undefined && r.goneMedian !== null) n.push(`members gone ${fmt(r.goneMedian)} ms`);
  if (r.p99 !== undefined && r.bench === 'exit') n.push(`p99 ${fmt(r.p99)}`);
  if (r.fdGrowth !== undefined) n.push(`fd growth ${r.fdGrowth}, RSS growth ${fmt(r.rssGrowthMB)} MB`);
  if (r.note) n.push(r.note);
  return n.join('; ');
}

/** The results as an aligned text table, one block per benchmark. */
export function formatTable(all) {
  const head = ['case', 'contender', 'median', 'p95', 'n', 'vs ref', 'notes'];
  const lines = [];
  for (const bench of [...new Set(all.map((r) => r.bench))]) {
    const rs = all.filter((r) => r.bench === bench);
    const unit = rs.find((r) => r.unit)?.unit ?? '';
    lines.push('', `## ${bench}: ${rs[0].title}${unit ? ` (${unit})` : ''}`);
    const body = rs.map((r) => [
      r.case,
      r.contender,
      fmt(r.median),
      fmt(r.p95),
      r.n === undefined ? '' : String(r.n),
      r.vsRef === undefined ? '' : `${r.vsRef.toFixed(2)}x`,
      notes(r),
    ]);
    const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
    const line = (cells) =>
      cells
        .map((c, i) => (i >= 2 && i <= 5 ? c.padStart(w[i]) : c.padEnd(w[i])))
        .join('  ')
        .trimEnd();
    lines.push(line(head), line(w.map((x) => '-'.repeat(x))), ...body.map(line));
  }
  return lines.join('\n');
}

/** The goals as met / missed / n/a. */
export function formatGoals(goals, quick) {
  const lines = ['', `## goals${quick ? ' (quick run: figures too few to judge)' : ''}`];
  for (const g of goals) {
    const detail = g.detail ? ` (${g.detail})` : '';
    lines.push(`${g.status.padEnd(6)}  ${g.goal} ${g.target}${g.value === null ? '' : `: ${fmt(g.value)}`}${detail}`);
  }
  return lines.join('\n');
}

/** The results as Markdown (for BENCHMARKS.md). */
export function formatMarkdown(report) {
  const m = report.machine;
  const lines = [
    `Run of ${report.date}${report.quick ? ' (quick)' : ''}, ${fmt(report.seconds)} s: ${m.cpus} × ${m.cpu}, ${m.memGiB} GiB, Linux ${m.kernel}, Node ${m.node} (libuv ${m.libuv}).`,
  ];
  for (const bench of [...new Set(report.rows.map((r) => r.bench))]) {
    const rs = report.rows.filter((r) => r.bench === bench);
    const unit = rs.find((r) => r.unit)?.unit ?? '';
    lines.push('', `### ${bench}: ${rs[0].title}${unit ? ` (${unit})` : ''}`, '');
    lines.push(
      `| case | contender | median | p95 | n | vs ${rs.find((r) => r.ref)?.ref ?? 'ref'} | notes |`,
      '|---|---|--:|--:|--:|--:|---|',
    );
    for (const r of rs) {
      const cells = [
        r.case,
        r.contender,
        fmt(r.median),
        fmt(r.p95),
        r.n ?? '',
        r.vsRef === undefined ? '' : `${r.vsRef.toFixed(2)}×`,
        notes(r),
      ];
      lines.push(`| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`);
    }
  }
  lines.push('', '### goals', '', '| goal | target | measured | status | floor |', '|---|---|--:|---|---|');
  for (const g of report.goals)
    lines.push(
      `| ${g.goal} | ${g.target} | ${g.value === null ? '' : fmt(g.value)} | ${g.status} | ${g.detail ?? ''} |`,
    );
  return lines.join('\n');
}
