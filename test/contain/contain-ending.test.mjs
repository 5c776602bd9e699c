// How a supervisor's ending ends its contained groups, read from the kernel's record (live
// processes in the host's /proc, cgroup.events, the cgroup directories): the end of the Worker
// that spawned a 'cgroup' group, and a supervisor ended by a signal it has no listener for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { cgroupBase, cgroupsOf, marked } from './contain-helpers.mjs';
import { isRoot, need, pkg, runNode, waitFor } from '../helpers.mjs';

const cgroupOk = isRoot && cgroupBase !== null;

function populated(dir) {
  return /^populated 1/m.test(readFileSync(join(dir, 'cgroup.events'), 'latin1'));
}

test.after(() => {
  // Every cgroup this file made is removed.
  assert.deepEqual(cgroupsOf(process.pid), []);
});

// A setsid daemon, a double-forked daemon and a process-group member, each `sleep 1000.TOKEN`.
function attackScript(tok) {
  const s = `1000.${tok}`;
  return `setsid sleep ${s} </dev/null >/dev/null 2>&1 &
    (sleep ${s} </dev/null >/dev/null 2>&1 &)
    sleep ${s} </dev/null >/dev/null 2>&1 &
    echo ready; exec sleep ${s}`;
}

test(
  'cgroup: the end of the Worker that spawned a group kills every process of its cgroup, 20 rounds out of 20 [L3a.end.worker]',
  { timeout: 120000 },
  async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    for (let round = 0; round < 20; round++) {
      const tok = `${process.pid}0${round}${Math.floor(Math.random() * 1e6)}`;
      const w = new Worker(
        `const { parentPort } = require('node:worker_threads');
       const { spawnGroup } = require(${pkg});
       const g = spawnGroup('sh', ['-c', ${JSON.stringify(attackScript(tok))}],
         { contain: 'cgroup', stdio: ['ignore', 'pipe', 'ignore'] });
       g.leader.stdout.once('data', () => parentPort.postMessage('ready'));`,
        { eval: true },
      );
      await new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
      await waitFor(() => marked(tok).length === 4, { timeout: 5000, what: 'four members alive' });
      const [name] = cgroupsOf(process.pid);
      assert.ok(name, 'the group has a cgroup');
      const dir = join(cgroupBase, name);
      await w.terminate();
      await waitFor(() => marked(tok).length === 0, {
        timeout: 3000,
        what: `round ${round}: no member alive after terminate()`,
      });
      await waitFor(() => !existsSync(dir) || !populated(dir), { timeout: 3000, what: 'the cgroup empty' });
      // The Worker's JavaScript no longer runs: the directory is this test's to remove.
      if (existsSync(dir)) rmdirSync(dir);
    }
  },
);

// With no listener of its own, such a signal ends the supervisor by its default action: the
// groups are killed first, and the cgroup directories removed before it ends.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`cgroup: a supervisor ended by ${sig} (no listener of its own) leaves no cgroup directory and no member behind [L3a.end.signal]`, async (t) => {
    if (!need(t, cgroupOk, 'cgroup needs root here')) return;
    const tok = `${process.pid}9${sig.length}${Math.floor(Math.random() * 1e6)}`;
    const code = `
      const { spawnGroup } = await import(${pkg});
      const g = spawnGroup('sh', ['-c', ${JSON.stringify(attackScript(tok))}],
        { contain: 'cgroup', stdio: ['ignore', 'pipe', 'ignore'] });
      g.leader.stdout.once('data', () => { console.log(process.pid); process.kill(process.pid, '${sig}'); });
      setTimeout(() => {}, 20000);`;
    const r = await runNode(code);
    assert.equal(r.signal, sig, r.stderr);
    const pid = Number(r.stdout.trim());
    assert.ok(pid > 0, r.stdout + r.stderr);
    assert.deepEqual(cgroupsOf(pid), []);
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no member alive' });
  });
}

// procpin holds the namespace's mount namespace while the group runs (so that its teardown is
// not on the path of the command's exit status) and lets go of it once the group has ended.
test('pidns: no descriptor of the namespace is left open in the supervisor once the group has ended [L3a.release.no-fd]', async (t) => {
  if (!need(t, isRoot || existsSync('/proc/sys/user/max_user_namespaces'), 'pidns needs user namespaces here')) return;
  const { spawnGroup } = await import('../../dist/index.js');
  const nsFds = () =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith('mnt:');
      } catch {
        return false;
      }
    });
  const before = nsFds().length;
  const groups = Array.from({ length: 10 }, () =>
    spawnGroup('sh', ['-c', 'exit 3'], { contain: 'pidns', stdio: 'ignore' }),
  );
  for (const g of groups) assert.equal((await g.closed).exitCode, 3);
  await waitFor(() => nsFds().length === before, { timeout: 2000, what: 'the mount namespaces let go' });
});
