// Many children: cycles leave no descriptor and no zombie behind; concurrent children all
// resolve. PROCPIN_STRESS=1 runs the long variants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { spawn } from '../../dist/index.js';
import { openFds, procStat } from '../helpers.mjs';

const STRESS = process.env.PROCPIN_STRESS === '1';

function ourZombies() {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.ppid === process.pid && st.state === 'Z') n++;
  }
  return n;
}

test(`${STRESS ? 3000 : 300} spawn/exit/reap cycles leave the fd count and the zombie count unchanged [L2.lifetime]`, async () => {
  const cycles = STRESS ? 3000 : 300;
  // one cycle first, so that lazily made things (the class, the loop's structures) exist
  const warm = spawn('true', [], { stdio: 'ignore' });
  await warm.exited;
  warm.reap();
  const fds = openFds().length;
  const zombies = ourZombies();
  for (let i = 0; i < cycles; i++) {
    const child = spawn('true', [], { stdio: i % 3 === 0 ? 'pipe' : 'ignore' });
    if (child.stdout) {
      child.stdout.resume();
      child.stderr.resume();
      child.stdin.end();
    }
    const info = await child.exited;
    assert.equal(info.exitCode, 0);
    child.reap();
    if (child.stdout) {
      await new Promise((r) => (child.stdout.closed ? r() : child.stdout.on('close', r)));
      await new Promise((r) => (child.stderr.closed ? r() : child.stderr.on('close', r)));
      await new Promise((r) => (child.stdin.closed ? r() : child.stdin.on('close', r)));
    }
  }
  assert.equal(openFds().length, fds);
  assert.equal(ourZombies(), zombies);
});

test('failed spawns in a loop leave the fd count and the zombie count unchanged [L2.spawn.fail]', () => {
  const fds = openFds().length;
  const zombies = ourZombies();
  for (let i = 0; i < (STRESS ? 2000 : 200); i++) {
    assert.throws(() => spawn('procpin-no-such-program', [], { stdio: 'pipe' }), { code: 'ENOENT' });
    assert.throws(() => spawn('true', [], { cwd: '/nonexistent-procpin-dir' }), { code: 'ENOENT' });
  }
  assert.equal(openFds().length, fds);
  assert.equal(ourZombies(), zombies);
});

test('50 concurrent children all resolve with their own exit codes [L2.lifetime]', async () => {
  const n = STRESS ? 500 : 50;
  const kids = [];
  for (let i = 0; i < n; i++) {
    kids.push(spawn('sh', ['-c', `sleep 0.0${i % 3}; exit ${i % 200}`], { stdio: 'ignore' }));
  }
  const infos = await Promise.all(kids.map((k) => k.exited));
  infos.forEach((info, i) => {
    assert.equal(info.pid, kids[i].pid);
    assert.equal(info.exitCode, i % 200);
  });
  for (const k of kids) k.reap();
  assert.equal(ourZombies(), 0);
});
