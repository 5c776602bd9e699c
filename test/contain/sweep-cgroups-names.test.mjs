// SPEC Layer 3b sweepCgroups with hostile names in the cgroup tree: a name is a candidate only
// when it is one procpin could have made (a pid that fits a pid_t, a namespace inode that fits
// its 32 bits, numbers without a leading zero). Anything else is no candidate: it appears in
// neither list, and the processes in it are not touched. A candidate's pid is reported exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sweepCgroups } from '../../dist/index.js';
import { isRoot, need, procStat } from '../helpers.mjs';
import { procpin as cli } from '../cli/cli-helpers.mjs';
import { cgroupBase, place } from './contain-helpers.mjs';

const ok = isRoot && cgroupBase !== null;
const WHY = 'making cgroups here needs root and a cgroup2 mount';
const ownNs = statSync('/proc/self/ns/pid').ino;
const tag = `${process.pid}${Math.floor(Math.random() * 1e6)}`;

// Names procpin never makes; each one's supervisor pid would be dead if it were read as a number.
const hostile = [
  `procpin-99999999999999999999999-1-${tag}`, // 1e+23 as a Number
  `procpin-99999999999999999999999-1-${tag}-ns${ownNs}`,
  `procpin-2147483648-1-${tag}-ns${ownNs}`, // one above a pid_t
  `procpin-4242-1-${tag}-ns99999999999999999999`, // an inode above 32 bits
  `procpin-4242-1-${tag}-ns4294967296`,
  `procpin-4242-01-${tag}-ns${ownNs}`, // a start time with a leading zero
  `procpin-4242-1-0${tag}-ns${ownNs}`, // a sequence number with a leading zero
];
// The largest pid a name may carry, and no process has it here: a dead supervisor's cgroup.
const largest = `procpin-2147483647-1-${tag}-ns${ownNs}`;

function mk(name) {
  const dir = join(/** @type {string} */ (cgroupBase), name);
  mkdirSync(dir);
  return dir;
}

function alive(pid) {
  const st = procStat(pid);
  return st !== null && st.state !== 'Z' && st.state !== 'X';
}

test('sweepCgroups leaves a cgroup whose name no procpin makes (an overflowing pid, an inode above 32 bits, a leading zero) alone and out of its report, and reports the largest pid exactly [L3b.cgroups.sweep]', async (t) => {
  if (!need(t, ok, WHY)) return;
  const dirs = hostile.map(mk);
  const largestDir = mk(largest);
  // A process in the first hostile cgroup: a sweep that took the name for a dead supervisor's
  // would kill it.
  const sleeper = cpSpawn('sleep', ['1000'], { stdio: 'ignore' });
  t.after(() => {
    try {
      writeFileSync(join(/** @type {{ mount: string }} */ (place).mount, 'cgroup.procs'), String(sleeper.pid));
    } catch {}
    sleeper.kill('SIGKILL');
    for (const d of [...dirs, largestDir]) {
      try {
        rmdirSync(d);
      } catch {}
    }
  });
  writeFileSync(join(dirs[0], 'cgroup.procs'), String(sleeper.pid));
  assert.match(readFileSync(join(dirs[0], 'cgroup.procs'), 'latin1'), new RegExp(`^${sleeper.pid}$`, 'm'));

  // Another sweeper on this machine may remove the dead supervisor's cgroup first: a look that
  // began after it was gone says nothing, and is made again with the cgroup made again.
  async function look(read) {
    for (let attempt = 0; ; attempt++) {
      if (!existsSync(largestDir)) mkdirSync(largestDir);
      const seen = await read();
      if (JSON.stringify(seen).includes(largest) || existsSync(largestDir) || attempt === 20) return seen;
    }
  }
  const dry = await look(() => sweepCgroups({ dryRun: true }));
  const listed = [...dry.removed, ...dry.kept];
  for (const name of hostile) {
    assert.equal(listed.filter((e) => e.name === name).length, 0, `${name} is no candidate`);
  }
  assert.deepEqual(
    dry.removed.find((e) => e.name === largest),
    { name: largest, pid: 2147483647 },
  );
  for (const e of listed) assert.ok(Number.isSafeInteger(e.pid) && e.pid > 0, `${e.name}: pid ${e.pid}`);

  const json = await cli(['sweep', '--cgroups', '--dry-run', '--json']);
  assert.equal(json.code, 0, json.stderr);
  assert.doesNotMatch(json.stdout, /e\+/);
  const parsed = JSON.parse(json.stdout);
  for (const name of hostile) {
    assert.equal(
      [...parsed.removed, ...parsed.kept].some((e) => e.name === name),
      false,
      `${name} is not in the command's report`,
    );
  }
  const text = await look(() => cli(['sweep', '--cgroups', '--dry-run']));
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`would remove\\s+cgroup ${largest}\\s+\\(procpin 2147483647 is dead\\)`));
  assert.doesNotMatch(text.stdout, /e\+|99999999999999999999/);

  const report = await look(() => sweepCgroups());
  assert.ok(report.removed.some((e) => e.name === largest && e.pid === 2147483647));
  assert.equal(existsSync(largestDir), false, "the largest pid's cgroup is removed");
  for (const d of dirs) assert.equal(existsSync(d), true, `${d} is left as it was`);
  assert.equal(alive(/** @type {number} */ (sleeper.pid)), true, 'the process in a hostile cgroup lives');
  assert.match(readFileSync(join(dirs[0], 'cgroup.procs'), 'latin1'), new RegExp(`^${sleeper.pid}$`, 'm'));
});
