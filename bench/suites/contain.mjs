// Containment: spawn+exit+reap of /bin/true as a plain group and under contain 'pidns' and
// 'cgroup' (interleaved), and the end of 500 members by cgroup.kill against a raw
// kill(-pgid, SIGKILL): time from the kill until no member lives (each member's /proc/PID/stat
// read the same way for both).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isGone, procsWhere } from '../../test/lib/proc.mjs';
import { interleave, nowMs, summarize } from '../lib/harness.mjs';

export const id = 'contain';
export const title =
  'containment: spawn+exit+reap of /bin/true per mode; 500 members ended by cgroup.kill vs kill(-pgid)';

const alive = (pid) => !isGone(pid);

function cgroupPids(dir) {
  return readFileSync(join(dir, 'cgroup.procs'), 'latin1').split('\n').filter(Boolean).map(Number);
}

function groupPids(pgid) {
  return procsWhere((st) => st.pgid === pgid && st.state !== 'Z').map((st) => st.pid);
}

export async function run(ctx) {
  const { spawnGroup } = ctx.pp;
  const rows = [];
  const modes = [
    { name: 'spawnGroup', contain: undefined },
    { name: 'spawnGroup pidns', contain: 'pidns' },
    { name: 'spawnGroup cgroup', contain: 'cgroup' },
  ];
  const contenders = [];
  for (const m of modes) {
    try {
      await spawnGroup('/bin/true', [], { stdio: 'ignore', contain: m.contain }).closed;
    } catch (err) {
      rows.push({
        bench: id,
        case: 'spawn+exit+reap /bin/true',
        contender: m.name,
        status: `unavailable: ${err.message}`,
      });
      continue;
    }
    contenders.push({
      name: m.name,
      run: async () => {
        const t0 = nowMs();
        await spawnGroup('/bin/true', [], { stdio: 'ignore', contain: m.contain }).closed;
        return nowMs() - t0;
      },
    });
  }
  const reps = ctx.quick ? 20 : 200;
  ctx.log(`contain: ${reps} spawns per mode`);
  const res = await interleave(contenders, { reps, warmup: ctx.quick ? 2 : 10 });
  for (const [name, { samples }] of Object.entries(res)) {
    rows.push({ bench: id, case: 'spawn+exit+reap /bin/true', contender: name, unit: 'ms', ...summarize(samples) });
  }

  const N = 500;
  const script = `for i in $(seq ${N}); do sleep 1000 & done; echo ready; wait`;
  const start = async (contain) => {
    const g = spawnGroup('sh', ['-c', script], { stdio: ['ignore', 'pipe', 'ignore'], contain, grace: 0 });
    let buf = '';
    for await (const chunk of g.leader.stdout) {
      buf += chunk;
      if (buf.includes('ready')) break;
    }
    return g;
  };
  const cg = (await import('../../dist/contain/contain.js')).cgroupPlace();
  const kills = [
    {
      name: 'raw kill(-pgid, SIGKILL)',
      run: async () => {
        const g = await start(undefined);
        let pids = [];
        for (let i = 0; i < 2000 && pids.length < N + 1; i++) {
          pids = groupPids(g.pgid);
          if (pids.length < N + 1) await new Promise((r) => setTimeout(r, 5));
        }
        const t0 = nowMs();
        process.kill(-g.pgid, 'SIGKILL');
        while (pids.some(alive)) pids = pids.filter(alive);
        const ms = nowMs() - t0;
        await g.stop();
        return ms;
      },
    },
  ];
  if (typeof cg !== 'string') {
    kills.push({
      name: 'cgroup.kill',
      run: async () => {
        const g = await start('cgroup');
        const dir = join(
          cg.base,
          readdirSync(cg.base)
            .filter((n) => n.startsWith(`procpin-${process.pid}-`))
            .pop(),
        );
        let pids = [];
        for (let i = 0; i < 2000 && pids.length < N + 1; i++) {
          pids = cgroupPids(dir);
          if (pids.length < N + 1) await new Promise((r) => setTimeout(r, 5));
        }
        const t0 = nowMs();
        writeFileSync(join(dir, 'cgroup.kill'), '1');
        while (pids.some(alive)) pids = pids.filter(alive);
        const ms = nowMs() - t0;
        await g.stop();
        return ms;
      },
    });
  }
  const kreps = ctx.quick ? 2 : 5;
  ctx.log(`contain: ${kreps} rounds of ${N} members`);
  const kres = await interleave(kills, { reps: kreps, warmup: 0 });
  for (const [name, { samples }] of Object.entries(kres)) {
    rows.push({ bench: id, case: `${N} members ended`, contender: name, unit: 'ms', ...summarize(samples) });
  }
  return { rows, ref: 'spawnGroup' };
}
