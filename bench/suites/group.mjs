// A group of N sleeping members to "closed": procpin's stop() against a raw kill(-pgid, SIGKILL),
// tree-kill and execa's kill(), interleaved. A pidfd watcher (C) says when the last member
// exited. Two more shapes orphan the members (tree-kill walks the parent tree from the leader
// and finds none of them): their parent died while the leader runs, or the leader itself
// exited first (procpin then cleans by itself, from the exit). Survivors are counted.
import * as cp from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import treeKill from 'tree-kill';
import { execa } from 'execa';
import { LineProcess, interleave, nowMs, summarize } from '../lib/harness.mjs';
import { NOT_YET } from '../lib/procpin.mjs';
import { isGone } from '../../test/lib/proc.mjs';

export const id = 'group';
export const title = 'process group of N sleeping members -> cleaned (contender done and every member exited)';

/** Reads the leader's "pids ..." line up to "ready". */
async function readPids(stream) {
  const rl = createInterface({ input: stream });
  let pids = [];
  for await (const line of rl) {
    if (line.startsWith('pids')) pids = line.split(' ').slice(1).map(Number);
    if (line === 'ready') break;
  }
  return pids;
}

const alive = (pid) => !isGone(pid);

export async function run(ctx) {
  const watcher = new LineProcess(ctx.bins.watch);
  const leaderFile = ctx.bins.group_leader;

  // Arms the watcher on `pids`; returns `{ gone }`, the promise of its "gone" line as a
  // monotonic ms (wrapped: an async function returning a bare promise would wait for it).
  async function arm(pids) {
    const armed = await watcher.request(`watch ${pids.join(' ')}`);
    if (!armed.startsWith('armed')) throw new Error(`watcher: ${armed}`);
    return { gone: watcher.next().then((l) => Number(l.split(' ')[1]) / 1e6) };
  }

  // After a contender said it was done (`done` ms after t0): the sample is when both it was done
  // and every member had exited. Members still alive a second later are counted as survivors
  // (then killed by group, so the next round starts clean) and the sample is `done`.
  async function settle(gone, pgid, pids, t0, done) {
    const late = Symbol('late');
    const r = await Promise.race([gone, new Promise((res) => setTimeout(res, 1000, late))]);
    if (r !== late) return { ms: Math.max(done, r - t0), done, goneMs: r - t0, survivors: 0 };
    const survivors = pids.filter(alive).length;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {}
    await gone;
    return { ms: done, done, goneMs: null, survivors };
  }

  // One round for a contender spawned with child_process (or execa): `act(sub)` cleans.
  function cpContender(name, act, opts = {}) {
    return (n, shape, reps) => ({
      name,
      reps,
      warmup: opts.warmup ?? true,
      run: async () => {
        const sub = opts.execa
          ? execa(leaderFile, [String(n), shape], {
              detached: true,
              stdin: 'pipe',
              stdout: 'pipe',
              stderr: 'ignore',
              buffer: false,
              reject: false,
            })
          : cp.spawn(leaderFile, [String(n), shape], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
        const exit = opts.execa ? sub : once(sub, 'exit');
        const pids = await readPids(sub.stdout);
        const { gone } = await arm(pids);
        const t0 = nowMs();
        if (shape === 'exit') {
          sub.stdin.end('x');
          await exit;
        }
        await act(sub);
        if (shape !== 'exit') await exit;
        return settle(gone, sub.pid, pids, t0, nowMs() - t0);
      },
    });
  }

  /** @type {((n: number, shape: string, reps: number) => { name: string, reps: number, warmup?: boolean, run: () => Promise<object> })[]} */
  const makers = [
    cpContender('raw kill(-pgid, SIGKILL)', async (sub) => {
      try {
        process.kill(-sub.pid, 'SIGKILL');
      } catch {}
    }),
    cpContender('tree-kill', (sub) => new Promise((res) => treeKill(sub.pid, 'SIGKILL', () => res())), {
      warmup: false,
    }),
    cpContender(
      'execa kill()',
      async (sub) => {
        sub.kill('SIGKILL');
        await sub;
      },
      { execa: true },
    ),
  ];
  if (ctx.has.spawnGroup) {
    makers.unshift((n, shape, reps) => ({
      name: 'procpin stop()',
      reps,
      run: async () => {
        const g = ctx.pp.spawnGroup(leaderFile, [String(n), shape], { stdio: ['pipe', 'pipe', 'ignore'] });
        const pids = await readPids(g.leader.stdout);
        const { gone } = await arm(pids);
        const t0 = nowMs();
        if (shape === 'exit') {
          g.leader.stdin.end('x');
          await g.closed;
        } else {
          await g.stop();
        }
        return settle(gone, g.pgid, pids, t0, nowMs() - t0);
      },
    }));
  }

  // [case, members, shape, reps for procpin/raw, execa, tree-kill]
  /** @type {[string, number, string, number, number, number][]} */
  const plan = ctx.quick
    ? [
        ['10 members', 10, 'stay', 2, 1, 1],
        ['10 orphaned members, leader runs', 10, 'orphans', 1, 1, 1],
        ['10 members, leader exited', 10, 'exit', 1, 1, 1],
      ]
    : [
        ['50 members', 50, 'stay', 15, 5, 3],
        ['500 members', 500, 'stay', 7, 3, 1],
        ['500 orphaned members, leader runs', 500, 'orphans', 5, 2, 2],
        ['500 members, leader exited', 500, 'exit', 5, 2, 2],
      ];
  const rows = [];
  for (const [label, n, shape, reps, execaReps, treeReps] of plan) {
    ctx.log(`group: ${label}`);
    const contenders = makers.map((m) => {
      const c = m(n, shape, reps);
      if (c.name === 'tree-kill') c.reps = treeReps;
      if (c.name === 'execa kill()') c.reps = execaReps;
      return c;
    });
    const res = await interleave(contenders, { reps, warmup: 1 });
    if (!ctx.has.spawnGroup) rows.push({ bench: id, case: label, contender: 'procpin stop()', status: NOT_YET });
    for (const [name, { samples, extras }] of Object.entries(res)) {
      const gone = extras.map((e) => e.goneMs).filter((x) => x !== null);
      rows.push({
        bench: id,
        case: label,
        contender: name,
        unit: 'ms',
        ...summarize(samples),
        goneMedian: gone.length ? summarize(gone).median : null,
        doneMedian: summarize(extras.map((e) => e.done)).median,
        survivors: Math.max(0, ...extras.map((e) => e.survivors)),
        members: n,
      });
    }
  }
  await watcher.close();
  return { rows, ref: 'raw kill(-pgid, SIGKILL)' };
}
