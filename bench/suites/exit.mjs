// @ts-nocheck -- not type-checked yet: the result rows and chart data are untyped (inference noise, not defects).
// Exit -> notification latency: the child records CLOCK_MONOTONIC just before _exit (after
// sleeping long enough for the parent to be idle); the parent records when it was told.
import * as cp from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineProcess, interleave, nowMs, replyMs, summarize } from '../lib/harness.mjs';
import { NOT_YET } from '../lib/procpin.mjs';

export const id = 'exit';
export const title = 'exit -> notification latency (child stamps CLOCK_MONOTONIC before _exit)';

const DELAY_MS = '5';

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
  if (ctx.has.spawn) {
    contenders.unshift({
      name: 'procpin Child.exited',
      run: async () => {
        const out = stamp('pp');
        const c = ctx.pp.spawn(ctx.bins.exit_stamp, [out, DELAY_MS], { stdio: 'ignore' });
        await c.exited;
        const t = nowMs();
        c.reap();
        c.close?.();
        return t - readStamp(out);
      },
    });
  }
  const reps = ctx.quick ? 5 : 300;
  ctx.log(`exit: ${reps} rounds`);
  const res = await interleave(contenders, { reps, warmup: ctx.quick ? 1 : 10 });
  await floor.close();
  rmSync(base, { recursive: true, force: true });
  const rows = Object.entries(res).map(([name, { samples }]) => ({
    bench: id,
    case: 'exit -> notified',
    contender: name,
    unit: 'ms',
    ...summarize(samples),
  }));
  if (!ctx.has.spawn)
    rows.push({ bench: id, case: 'exit -> notified', contender: 'procpin Child.exited', status: NOT_YET });
  return { rows, ref: 'C poll(pidfd)' };
}
