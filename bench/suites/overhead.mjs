// Per-call cost of the Layer 1 probes against process.kill(pid, 0), in batches interleaved.
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, nowMs, summarize } from '../lib/harness.mjs';
import { NOT_YET } from '../lib/procpin.mjs';

export const id = 'overhead';
export const title = 'per-call overhead of a liveness / lock probe';

export async function run(ctx) {
  const batch = ctx.quick ? 1000 : 10000;
  const reps = ctx.quick ? 3 : 40;
  const dir = mkdtempSync(join(tmpdir(), 'procpin-bench-'));
  const lockFd = openSync(join(dir, 'lock'), 'w');
  const pid = process.pid;
  const timed = (fn) => () => {
    const t0 = nowMs();
    for (let i = 0; i < batch; i++) fn();
    return ((nowMs() - t0) * 1000) / batch; // µs per call
  };
  const contenders = [{ name: 'process.kill(pid, 0)', run: timed(() => process.kill(pid, 0)) }];
  let pidfd = -1;
  if (ctx.has.pidfdSendSignal) {
    pidfd = ctx.pp.pidfdOpen(pid);
    contenders.push({ name: 'pidfdSendSignal(fd, 0)', run: timed(() => ctx.pp.pidfdSendSignal(pidfd, 0)) });
  }
  if (ctx.has.tryLock) {
    contenders.push({ name: "tryLock(fd, 'exclusive')", run: timed(() => ctx.pp.tryLock(lockFd, 'exclusive')) });
  }
  ctx.log(`overhead: ${reps} batches of ${batch} calls`);
  const res = await interleave(contenders, { reps, warmup: 2 });
  if (pidfd >= 0) closeSync(pidfd);
  closeSync(lockFd);
  rmSync(dir, { recursive: true, force: true });
  /** @type {Record<string, unknown>[]} */
  const rows = Object.entries(res).map(([name, { samples }]) => ({
    bench: id,
    case: `batches of ${batch}`,
    contender: name,
    unit: 'µs',
    ...summarize(samples),
  }));
  for (const [ok, name] of [
    [ctx.has.pidfdSendSignal, 'pidfdSendSignal(fd, 0)'],
    [ctx.has.tryLock, "tryLock(fd, 'exclusive')"],
  ]) {
    if (!ok) rows.push({ bench: id, case: `batches of ${batch}`, contender: name, status: NOT_YET });
  }
  return { rows, ref: 'process.kill(pid, 0)' };
}
