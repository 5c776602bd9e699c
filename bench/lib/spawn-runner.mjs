// Spawn+exit+reap of /bin/true from a parent holding --mib MiB (off-heap Buffers, every page
// touched), all contenders interleaved in this one process. Prints JSON samples on stdout.
//   node spawn-runner.mjs --mib N --reps R --warmup W --floor PATH
import * as cp from 'node:child_process';
import { parseArgs } from 'node:util';
import { LineProcess, interleave, nowMs, replyMs } from './harness.mjs';
import { features, loadAdapter, loadProcpin } from './procpin.mjs';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '0' },
    reps: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '5' },
    floor: { type: 'string' },
    file: { type: 'string', default: '/bin/true' },
  },
});
const mib = Number(values.mib);
const file = values.file;

// Hold the memory in 256 MiB Buffers (one Buffer is capped at 4 GiB) and write every page.
const hold = [];
for (let left = mib; left > 0; left -= 256) hold.push(Buffer.alloc(Math.min(256, left) << 20).fill(1));

const pp = loadProcpin();
const has = features(pp);
const floor = new LineProcess(values.floor, [String(mib)]);
await floor.next(); // "ready" once its memory is touched

/** ms from a child_process-shaped `spawn` of `file` to its `event` ('exit' or 'close'). */
function timedSpawn(spawn, event) {
  return new Promise((resolve, reject) => {
    const t0 = nowMs();
    const c = spawn(file, [], { stdio: 'ignore' });
    c.once('error', reject);
    c.once(event, () => resolve(nowMs() - t0));
  });
}

const contenders = [
  { name: 'child_process.spawn', run: () => timedSpawn(cp.spawn, 'exit') },
  {
    name: 'child_process.spawnSync',
    run: () => {
      const t0 = nowMs();
      cp.spawnSync(file, [], { stdio: 'ignore' });
      return nowMs() - t0;
    },
  },
  {
    name: 'C posix_spawn',
    run: async () => replyMs(await floor.request(`posix_spawn ${file}`)),
  },
  {
    name: 'C clone(VM|VFORK|PIDFD)',
    run: async () => replyMs(await floor.request(`clone ${file}`)),
  },
];
if (has.spawn) {
  contenders.unshift({
    name: 'procpin.spawn',
    run: async () => {
      const t0 = nowMs();
      const c = pp.spawn(file, [], { stdio: 'ignore' });
      await c.exited;
      c.reap();
      const ms = nowMs() - t0;
      c.close?.();
      return ms;
    },
  });
}

// procpin/child_process: the drop-in, spawn to 'close' (the group cleaned and the leader reaped),
// against child_process.spawn to 'exit'.
const adapter = loadAdapter();
if (adapter) {
  contenders.splice(1, 0, { name: 'procpin/child_process.spawn', run: () => timedSpawn(adapter.spawn, 'close') });
}

const res = await interleave(contenders, { reps: Number(values.reps), warmup: Number(values.warmup) });
await floor.close();
const rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
process.stdout.write(JSON.stringify({ mib, rssMiB, procpinSpawn: has.spawn, results: res }) + '\n');
hold.length = 0;
