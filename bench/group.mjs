// A group of N sleeping members, stopped: time from the stop until no member lives, and until
// the stopper says it is done (procpin: `closed`; raw kill: the leader's exit; tree-kill: its
// callback), for procpin's stop() against a raw kill(-pgid, SIGKILL) and tree-kill, interleaved.
// Two shapes: members that are the leader's children, and orphaned members (their parent died;
// the leader still runs), where a walk of the parent tree cannot find them. Survivors (members
// still alive a second after the stopper said it was done) are counted, then killed.
//
//   node bench/group.mjs [--members 500] [--rounds 5] [--tree-rounds 1] [--json]
import * as cp from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import treeKill from 'tree-kill';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { spawnGroup } = createRequire(import.meta.url)(join(root, 'dist', 'index.js'));

const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '5' },
    'tree-rounds': { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const N = Number(values.members);
const ROUNDS = Number(values.rounds);
const TREE_ROUNDS = Number(values['tree-rounds']);
const log = (m) => process.stderr.write(`[group] ${m}\n`);

const scripts = {
  // Members are the leader's children; the leader waits for them.
  children: `for i in $(seq ${N}); do sleep 1000 & done; echo ready; wait`,
  // Members' parent (a subshell) exits at once: they are orphans in the leader's group.
  orphans: `(for i in $(seq ${N}); do sleep 1000 & done); echo ready; exec sleep 1000`,
};

function stat(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const rest = s.slice(s.lastIndexOf(')') + 2).split(' ', 3);
    return { state: rest[0], pgid: Number(rest[2]) };
  } catch {
    return null;
  }
}
const alive = (pid) => {
  const st = stat(pid)?.state;
  return st !== undefined && st !== 'Z' && st !== 'X';
};

/** Live members of `pgid` other than the leader. */
function members(pgid) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === pgid) continue;
    const st = stat(name);
    if (st && st.pgid === pgid && st.state !== 'Z' && st.state !== 'X') out.push(Number(name));
  }
  return out;
}

async function ready(stream) {
  let buf = '';
  for await (const chunk of stream) {
    buf += chunk;
    if (buf.includes('ready\n')) return;
  }
  throw new Error('the leader ended before it was ready');
}

async function waitMembers(pgid) {
  for (let i = 0; i < 2000; i++) {
    const m = members(pgid);
    if (m.length >= N) return m;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`fewer than ${N} members in ${pgid}`);
}

// Resolves with the time at which none of `pids` lives; checks the first one still alive, so a
// poll costs one read while they live. Gives up (null) after `limit` ms.
function goneAt(pids, limit = 60000) {
  return new Promise((resolve) => {
    let i = 0;
    const end = performance.now() + limit;
    const tick = () => {
      while (i < pids.length && !alive(pids[i])) i++;
      if (i === pids.length) return resolve(performance.now());
      if (performance.now() > end) return resolve(null);
      setImmediate(tick);
    };
    tick();
  });
}

async function settle(pgid, pids) {
  const gone = await goneAt(pids, 1000);
  if (gone !== null) return 0;
  const survivors = pids.filter(alive).length;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {}
  await goneAt(pids, 10000);
  return survivors;
}

async function viaChildProcess(shape, stopper) {
  const sub = cp.spawn('sh', ['-c', scripts[shape]], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  const exit = once(sub, 'exit');
  await ready(sub.stdout);
  const pids = await waitMembers(sub.pid);
  const t0 = performance.now();
  const gone = goneAt(pids);
  await stopper(sub);
  const done = performance.now() - t0;
  const survivors = await settle(sub.pid, pids);
  const g = await gone;
  try {
    process.kill(-sub.pid, 'SIGKILL');
  } catch {}
  await exit;
  return { goneMs: survivors ? null : g - t0, doneMs: done, survivors };
}

const contenders = {
  'procpin stop()': async (shape) => {
    const g = spawnGroup('sh', ['-c', scripts[shape]], { stdio: ['ignore', 'pipe', 'ignore'] });
    await ready(g.leader.stdout);
    const pids = await waitMembers(g.pgid);
    const t0 = performance.now();
    const gone = goneAt(pids);
    await g.stop();
    const done = performance.now() - t0;
    const survivors = await settle(g.pgid, pids);
    const at = await gone;
    return { goneMs: survivors ? null : at - t0, doneMs: done, survivors };
  },
  'procpin stop() killSignal SIGKILL': async (shape) => {
    const g = spawnGroup('sh', ['-c', scripts[shape]], { stdio: ['ignore', 'pipe', 'ignore'], killSignal: 'SIGKILL' });
    await ready(g.leader.stdout);
    const pids = await waitMembers(g.pgid);
    const t0 = performance.now();
    const gone = goneAt(pids);
    await g.stop();
    const done = performance.now() - t0;
    const survivors = await settle(g.pgid, pids);
    const at = await gone;
    return { goneMs: survivors ? null : at - t0, doneMs: done, survivors };
  },
  'raw kill(-pgid, SIGKILL)': (shape) =>
    viaChildProcess(shape, async (sub) => {
      process.kill(-sub.pid, 'SIGKILL');
      await once(sub, 'exit');
    }),
  'tree-kill': (shape) => viaChildProcess(shape, (sub) => new Promise((r) => treeKill(sub.pid, 'SIGKILL', () => r()))),
};

const median = (xs) => {
  const s = xs.filter((x) => x !== null).sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const results = [];
for (const shape of ['children', 'orphans']) {
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, in a rotating order, so drift in the machine touches every contender alike.
    const names = Object.keys(contenders);
    const order = names.slice(round % names.length).concat(names.slice(0, round % names.length));
    for (const name of order) {
      // tree-kill on the children shape takes tens of seconds: fewer rounds.
      if (name === 'tree-kill' && shape === 'children' && round >= TREE_ROUNDS) continue;
      const r = await contenders[name](shape);
      samples[name].push(r);
      log(`${shape} round ${round} ${name}: gone ${r.goneMs?.toFixed(1) ?? '-'} ms, done ${r.doneMs.toFixed(1)} ms, survivors ${r.survivors}`);
    }
  }
  for (const [name, rs] of Object.entries(samples)) {
    results.push({
      shape,
      contender: name,
      members: N,
      runs: rs.length,
      goneMedianMs: median(rs.map((r) => r.goneMs)),
      doneMedianMs: median(rs.map((r) => r.doneMs)),
      survivorsMax: Math.max(0, ...rs.map((r) => r.survivors)),
    });
  }
}

if (values.json) {
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
} else {
  const f = (x) => (x === null ? '-' : x.toFixed(1));
  for (const shape of ['children', 'orphans']) {
    const rows = results.filter((r) => r.shape === shape);
    const raw = rows.find((r) => r.contender.startsWith('raw'));
    console.log(`\n${N} ${shape === 'children' ? 'members (children of the leader)' : 'orphaned members'}`);
    console.log('contender'.padEnd(36), 'runs', 'gone ms'.padStart(9), 'done ms'.padStart(9), 'vs raw'.padStart(7), 'survivors');
    for (const r of rows) {
      const ratio = r.doneMedianMs !== null && raw?.doneMedianMs ? (r.doneMedianMs / raw.doneMedianMs).toFixed(2) : '-';
      console.log(r.contender.padEnd(36), String(r.runs).padStart(4), f(r.goneMedianMs).padStart(9), f(r.doneMedianMs).padStart(9), ratio.padStart(7), r.survivorsMax);
    }
  }
}
