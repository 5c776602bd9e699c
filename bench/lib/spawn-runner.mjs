// Spawn+exit+reap of /bin/true from a parent holding --mib MiB (off-heap Buffers, every page
// touched), all contenders interleaved in this one process. Prints JSON samples on stdout.
//   node spawn-runner.mjs --mib N --reps R --warmup W --floor PATH
import * as cp from 'node:child_process';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { LineProcess, interleave, nowMs, replyMs } from './harness.mjs';
import { SPAWN_NODE_FLOOR_ENV } from './goals.mjs';
import { features, loadAdapter, loadBefore, loadProcpin } from './procpin.mjs';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '0' },
    reps: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '5' },
    floor: { type: 'string' },
    addon: { type: 'string' },
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
const procpinSpawn = (name, lib) => ({
  name,
  run: async () => {
    const t0 = nowMs();
    const c = lib.spawn(file, [], { stdio: 'ignore' });
    await c.exited;
    c.reap();
    const ms = nowMs() - t0;
    c.close?.();
    return ms;
  },
});
if (has.spawn) contenders.unshift(procpinSpawn('procpin.spawn', pp));

// procpin/child_process: the drop-in, spawn to 'close' (the group cleaned and the leader reaped),
// against child_process.spawn to 'exit'.
const adapter = loadAdapter();
if (adapter) {
  contenders.splice(1, 0, { name: 'procpin/child_process.spawn', run: () => timedSpawn(adapter.spawn, 'close') });
}
const before = loadBefore();
if (before) {
  contenders.push(procpinSpawn('procpin.spawn (before)', before.pp));
  if (before.adapter)
    contenders.push({
      name: 'procpin/child_process.spawn (before)',
      run: () => timedSpawn(before.adapter.spawn, 'close'),
    });
}

// Node's own floor: the bench-only addon's posix_spawn + pidfd + uv_poll, its promise resolved
// from the poll callback and awaited here (the child reaped there first).
if (values.addon) {
  const floorAddon = createRequire(import.meta.url)(values.addon);
  contenders.push({
    name: 'Node floor: posix_spawn + uv_poll -> await (addon)',
    run: async () => {
      const t0 = nowMs();
      await floorAddon.watchPromise([file], true);
      return nowMs() - t0;
    },
  });
  // The same, plus what any spawn that honours process.env pays in JavaScript: each variable read
  // through process.env (Node's interceptor, under its environment lock) into NAME=value strings,
  // the cheapest way procpin knows (its keys by Reflect.ownKeys). The addon itself still passes
  // its `environ`: only the reading is added.
  const env = process.env;
  contenders.push({
    name: SPAWN_NODE_FLOOR_ENV,
    run: async () => {
      const t0 = nowMs();
      const pairs = [];
      for (const k of Reflect.ownKeys(env)) if (typeof k === 'string') pairs.push(`${k}=${env[k]}`);
      await floorAddon.watchPromise([file], true);
      return nowMs() - t0;
    },
  });
}

const res = await interleave(contenders, { reps: Number(values.reps), warmup: Number(values.warmup) });
await floor.close();
const rssMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
process.stdout.write(JSON.stringify({ mib, rssMiB, procpinSpawn: has.spawn, results: res }) + '\n');
hold.length = 0;
