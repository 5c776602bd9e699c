// A group of N sleeping members, stopped: time from the stop until no member lives ("gone", seen
// from a worker thread), and until the stopper says it is done ("done": procpin's `closed`, the
// raw kill's leader exit, tree-kill's callback), for procpin's stop() against a raw kill(-pgid, SIGKILL) and tree-kill, interleaved.
// Two shapes: members that are the leader's children, and orphaned members (their parent died;
// the leader still runs), where a walk of the parent tree cannot find them. Survivors (members
// still alive a second after the stopper said it was done) are counted, then killed.
//
//   node bench/group.mjs [--members 500] [--rounds 5] [--tree-rounds 1] [--json]
import * as cp from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import treeKill from 'tree-kill';
import { isGone, liveMembers, procLib } from '../test/lib/proc.mjs';

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

const alive = (pid) => !isGone(pid);

/** Live members of `pgid` other than the leader. */
function members(pgid) {
  return liveMembers(pgid)
    .map((st) => st.pid)
    .filter((pid) => pid !== pgid);
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

// Resolves with the time (ms, on this thread's performance.now() scale) at which none of `pids`
// lives, or null after `limit` ms. Watched from a worker thread, so that the stopper's own work on
// the main thread does not delay the observation; a poll checks the first pid still alive.
const watcherCode = `
const { parentPort } = require('node:worker_threads');
const nap = new Int32Array(new SharedArrayBuffer(4));
// Messages wait in the port until the listener is there.
import(${procLib}).then(({ isGone }) => parentPort.on('message', ({ pids, limit }) => {
  const alive = (pid) => !isGone(pid);
  const end = performance.timeOrigin + performance.now() + limit;
  let i = 0;
  for (;;) {
    while (i < pids.length && !alive(pids[i])) i++;
    const now = performance.timeOrigin + performance.now();
    if (i === pids.length) return parentPort.postMessage(now);
    if (now > end) return parentPort.postMessage(null);
    Atomics.wait(nap, 0, 0, 0.2);
  }
}));`;
const watcher = new Worker(watcherCode, { eval: true });
watcher.unref();
function goneAt(pids, limit = 300000) {
  return new Promise((resolve) => {
    watcher.once('message', (at) => resolve(at === null ? null : at - performance.timeOrigin));
    watcher.postMessage({ pids, limit });
  });
}

// After a stopper said it was done: members gone within a second, or counted as survivors (then
// killed by group, which their presence keeps ours, so that the next round starts clean).
async function settle(gone, pgid, pids) {
  const late = Symbol('late');
  const r = await Promise.race([gone, new Promise((res) => setTimeout(res, 1000, late).unref())]);
  if (r !== late) return { at: r, survivors: 0 };
  const survivors = pids.filter(alive).length;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {}
  await gone;
  return { at: null, survivors };
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
  const { at, survivors } = await settle(gone, sub.pid, pids);
  try {
    process.kill(-sub.pid, 'SIGKILL');
  } catch {}
  await exit;
  return { goneMs: at === null ? null : at - t0, doneMs: done, survivors };
}

/** procpin's stop() of a group spawned with `options`. */
async function procpinStop(shape, options = {}) {
  const g = spawnGroup('sh', ['-c', scripts[shape]], { stdio: ['ignore', 'pipe', 'ignore'], ...options });
  await ready(g.leader.stdout);
  const pids = await waitMembers(g.pgid);
  const t0 = performance.now();
  const gone = goneAt(pids);
  await g.stop();
  const done = performance.now() - t0;
  const { at, survivors } = await settle(gone, g.pgid, pids);
  return { goneMs: at === null ? null : at - t0, doneMs: done, survivors };
}

const contenders = {
  'procpin stop()': (shape) => procpinStop(shape),
  'procpin stop() killSignal SIGKILL': (shape) => procpinStop(shape, { killSignal: 'SIGKILL' }),
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
      log(
        `${shape} round ${round} ${name}: gone ${r.goneMs?.toFixed(1) ?? '-'} ms, done ${r.doneMs.toFixed(1)} ms, survivors ${r.survivors}`,
      );
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
    // The floor is the raw kill's "gone": no member lives. Both of a contender's times compare to it.
    const floor = raw?.goneMedianMs;
    const vs = (x) => (x !== null && floor ? `${(x / floor).toFixed(2)}x` : '-');
    console.log(
      'contender'.padEnd(36),
      'runs',
      'gone ms'.padStart(9),
      'done ms'.padStart(9),
      'gone/floor'.padStart(11),
      'done/floor'.padStart(11),
      'survivors',
    );
    for (const r of rows) {
      console.log(
        r.contender.padEnd(36),
        String(r.runs).padStart(4),
        f(r.goneMedianMs).padStart(9),
        f(r.doneMedianMs).padStart(9),
        vs(r.goneMedianMs).padStart(11),
        vs(r.doneMedianMs).padStart(11),
        r.survivorsMax,
      );
    }
  }
}
