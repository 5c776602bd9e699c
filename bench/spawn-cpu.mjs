// The parent's own CPU time per spawn+exit+reap of /bin/true (process.cpuUsage: user + system
// of this process, not of the child), this build against another one (PROCPIN_BEFORE, its
// dist/index.js) in alternating blocks of the same process. Less sensitive to a loaded machine
// than wall time: another job's run queue delays a spawn, it does not add to this process's CPU.
//   PROCPIN_BEFORE=/path/to/before/dist/index.js node bench/spawn-cpu.mjs [blocks] [per block]
import { createRequire } from 'node:module';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const after = require(process.env.PROCPIN_DIST || join(root, 'dist', 'index.js'));
const before = process.env.PROCPIN_BEFORE ? require(process.env.PROCPIN_BEFORE) : null;
const blocks = Number(process.argv[2] || 40);
const per = Number(process.argv[3] || 50);

async function block(pp) {
  const c0 = process.cpuUsage();
  for (let i = 0; i < per; i++) {
    const c = pp.spawn('/bin/true', [], { stdio: 'ignore' });
    await c.exited;
    c.reap();
  }
  const c1 = process.cpuUsage(c0);
  return (c1.user + c1.system) / per; // µs per spawn
}

const builds = before
  ? [
      ['after', after],
      ['before', before],
    ]
  : [['this build', after]];
const got = Object.fromEntries(builds.map(([n]) => [n, []]));
for (const [, pp] of builds) await block(pp); // warm-up
for (let b = 0; b < blocks; b++) {
  const order = b % 2 ? [...builds].reverse() : builds;
  for (const [n, pp] of order) got[n].push(await block(pp));
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const [n] of builds) console.log(`${n.padEnd(10)} ${median(got[n]).toFixed(1)} µs of CPU per spawn`);
if (before) {
  const ratio = median(got.after.map((x, i) => x / got.before[i]));
  console.log(`after / before, paired by block: ${ratio.toFixed(3)}`);
}
