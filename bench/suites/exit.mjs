// Exit -> notification latency: the child records CLOCK_MONOTONIC just before _exit (after
// sleeping long enough for the parent to be idle); the parent records when it was told.
import * as cp from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineProcess, interleave, nowMs, replyMs, summarize } from '../lib/harness.mjs';
import { NOT_YET, loadBefore } from '../lib/procpin.mjs';
import { createRequire } from 'node:module';

export const id = 'exit';
export const title = 'exit -> notification latency (child stamps CLOCK_MONOTONIC before _exit)';

const DELAY_MS = '5';
export const NODE_POLL = 'Node floor: uv_poll callback (addon)';
export const NODE_CB = 'Node floor: uv_poll -> JS callback';
export const NODE_AWAIT = 'Node floor: uv_poll -> await continuation';

export async function run(ctx) {
  const base = mkdtempSync(join(process.platform === 'linux' ? '/dev/shm' : tmpdir(), 'procpin-bench-'));
  const stamp = (name) => join(base, name);
  const readStamp = (file) => Number(readFileSync(file, 'utf8')) / 1e6;
  const floor = new LineProcess(ctx.bins.floor, ['0']);
  await floor.next();
  const contenders = [
    {
      name: "child_process 'exit'",
      run: () =>
        new Promise((resolve, reject) => {
          const out = stamp('cp');
          const c = cp.spawn(ctx.bins.exit_stamp, [out, DELAY_MS], { stdio: 'ignore' });
          c.once('error', reject);
          c.once('exit', () => {
            const t = nowMs();
            resolve(t - readStamp(out));
          });
        }),
    },
    {
      name: 'C poll(pidfd)',
      run: async () => replyMs(await floor.request(`exitlat ${ctx.bins.exit_stamp} ${stamp('c')} ${DELAY_MS}`)),
    },
  ];
  const procpinExit = (name, pp) => ({
    name,
    run: async () => {
      const out = stamp(pp === ctx.pp ? 'pp' : 'ppb');
      const c = pp.spawn(ctx.bins.exit_stamp, [out, DELAY_MS], { stdio: 'ignore' });
      await c.exited;
      const t = nowMs();
      c.reap();
      c.close?.();
      return t - readStamp(out);
    },
  });
  if (ctx.has.spawn) contenders.unshift(procpinExit('procpin Child.exited', ctx.pp));
  const before = loadBefore();
  if (before) contenders.push(procpinExit('procpin Child.exited (before)', before.pp));
  // Node's own floor: a bench-only addon's uv_poll on a pidfd, nothing of procpin in between.
  // Each sample also carries the poll callback's own clock reading (the native hop).
  const floorAddon = ctx.bins['pollfloor.node'] && createRequire(import.meta.url)(ctx.bins['pollfloor.node']);
  if (floorAddon) {
    const sample = (out, nativeNs) => {
      const t = nowMs();
      const s = readStamp(out);
      return { ms: t - s, nativeMs: nativeNs / 1e6 - s };
    };
    contenders.push(
      {
        name: NODE_CB,
        run: () =>
          new Promise((resolve) => {
            const out = stamp('ncb');
            floorAddon.watch([ctx.bins.exit_stamp, out, DELAY_MS], (ns) => resolve(sample(out, ns)));
          }),
      },
      {
        name: NODE_AWAIT,
        run: async () => {
          const out = stamp('nawait');
          const ns = await floorAddon.watchPromise([ctx.bins.exit_stamp, out, DELAY_MS]);
          return sample(out, ns);
        },
      },
    );
  }
  const reps = ctx.quick ? 5 : 300;
  ctx.log(`exit: ${reps} rounds`);
  const res = await interleave(contenders, { reps, warmup: ctx.quick ? 1 : 10 });
  await floor.close();
  rmSync(base, { recursive: true, force: true });
  /** @type {Record<string, unknown>[]} */
  const rows = Object.entries(res).map(([name, { samples }]) => ({
    bench: id,
    case: 'exit -> notified',
    contender: name,
    unit: 'ms',
    ...summarize(samples),
  }));
  // The native hop of both floor contenders: exit -> the uv_poll callback's first instruction.
  const native = [NODE_CB, NODE_AWAIT].flatMap((n) => (res[n]?.extras ?? []).map((x) => x.nativeMs));
  if (native.length)
    rows.push({ bench: id, case: 'exit -> notified', contender: NODE_POLL, unit: 'ms', ...summarize(native) });
  if (!ctx.has.spawn)
    rows.push({ bench: id, case: 'exit -> notified', contender: 'procpin Child.exited', status: NOT_YET });
  return { rows, ref: 'C poll(pidfd)' };
}
