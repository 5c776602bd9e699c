// A Worker's contained groups close each descriptor procpin uses exactly once and through the
// side that opened it: a descriptor the addon made (a pidfd, procpin-init's pipes) is closed by
// the addon, one that `fs` opened by `fs`. Node tracks what `fs` opens in a Worker and warns
// ("closed but not opened in unmanaged mode") when `fs` closes a descriptor it did not open, so
// the scenario runs in a child node with --trace-warnings: its stderr must stay empty, and
// /proc/self/fd must hold the same descriptors before and after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cgroupBase, cgroupsOf } from './contain-helpers.mjs';
import { isRoot, need, pkg, runCmd } from '../helpers.mjs';

test.after(() => {
  assert.deepEqual(cgroupsOf(process.pid), []);
});

function available(mode) {
  if (mode === 'cgroup') return isRoot && cgroupBase !== null;
  return isRoot || existsSync('/proc/sys/user/max_user_namespaces');
}

// In the Worker: each round a group stopped with members in it (the cgroup's processes are
// signalled one by one), a group whose leader exits by itself, and a command that is not found.
// The Worker compares its descriptors before and after and posts them; the main thread then
// compares its own after the Worker's end.
const scenario = (mode) => `
import { Worker } from 'node:worker_threads';
import { readdirSync } from 'node:fs';
const fds = () => readdirSync('/proc/self/fd').map(Number).sort((a, b) => a - b).join(',');
const code = \`
  const { parentPort } = require('node:worker_threads');
  const { readdirSync, readlinkSync } = require('node:fs');
  const { spawnGroup } = require(${pkg});
  const fds = () => readdirSync('/proc/self/fd').map(Number).sort((a, b) => a - b).join(',');
  (async () => {
    const opts = { contain: ${JSON.stringify(mode)}, stdio: 'ignore', grace: 2000 };
    const round = async () => {
      const g = spawnGroup('sh', ['-c', 'sleep 1000 & sleep 1000 & echo up; wait'],
        { ...opts, stdio: ['ignore', 'pipe', 'ignore'] });
      await new Promise((r) => g.leader.stdout.once('data', r));
      await g.stop();
      await spawnGroup('sh', ['-c', 'exit 3'], opts).closed;
      try { spawnGroup('procpin-no-such-command', [], opts); } catch (err) {
        if (err.code !== 'ENOENT') throw err;
      }
    };
    // A first round lets Node open what it keeps for the process (a reserve descriptor).
    await round();
    // A failed start's init is reaped (and its pidfds closed) when its exit is seen: wait for it.
    const settle = async (done) => {
      for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    const pidfds = () => readdirSync('/proc/self/fd').filter((fd) => {
      try { return readlinkSync('/proc/self/fd/' + fd) === 'anon_inode:[pidfd]'; } catch { return false; }
    });
    await settle(() => pidfds().length === 0);
    const before = fds();
    for (let i = 0; i < 3; i++) await round();
    await settle(() => fds() === before);
    parentPort.postMessage({ before, after: fds() });
  })();
\`;
// libuv opens a reserve descriptor per event loop with its first stream: let it be there first.
process.stdout.write('');
const before = fds();
const w = new Worker(code, { eval: true, execArgv: ['--trace-warnings'] });
const msg = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
await new Promise((resolve) => w.once('exit', resolve));
process.stdout.write(JSON.stringify({ worker: msg, main: { before, after: fds() } }));
`;

for (const mode of ['cgroup', 'pidns']) {
  test(`${mode}: a Worker's contained groups close every descriptor exactly once, with no warning from Node and none left open [L3a.end.worker]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const r = await runCmd(process.execPath, ['--trace-warnings', '--input-type=module', '-e', scenario(mode)]);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const { worker, main } = JSON.parse(r.stdout);
    assert.equal(worker.after, worker.before, "the Worker's descriptors");
    assert.equal(main.after, main.before, "the process's descriptors after the Worker's end");
  });
}
