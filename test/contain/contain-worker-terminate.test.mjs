// A Worker terminated while its contained groups run leaves nothing in the process: every
// descriptor procpin held for them (procpin-init's status stream, the namespace's mount namespace,
// a pidfd) is closed by the Worker's teardown, which runs no JavaScript. The scenario runs in a
// child node: Workers are started and terminated in a loop, each with a running group (members
// included) for every stdio kind; the process's /proc/self/fd, read by its targets, must come back
// to what it was, and no process of the groups may live on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { cgroupBase, cgroupsOf } from './contain-helpers.mjs';
import { isRoot, need, pkg, runNode } from '../helpers.mjs';

test.after(() => {
  assert.deepEqual(cgroupsOf(process.pid), []);
});

function available(mode) {
  if (mode === 'cgroup') return isRoot && cgroupBase !== null;
  return isRoot || existsSync('/proc/sys/user/max_user_namespaces');
}

const ROUNDS = 5;

// New descriptors, less one pipe whose two ends both are in the process: Node's own, made once
// (not per Worker) at some moment of a busy machine, also with no procpin group at all. A pipe of
// a group's stdio has only one end here.
function nodeOwn(extra) {
  const ino = (f) => /pipe:\[(\d+)\]$/.exec(f)?.[1];
  const pairs = [
    ...new Set(extra.map(ino).filter((i) => i !== undefined && extra.filter((f) => ino(f) === i).length === 2)),
  ];
  return pairs.length === 1 ? extra.filter((f) => ino(f) !== pairs[0]) : extra;
}

const scenario = (mode, tok) => `
import { Worker } from 'node:worker_threads';
import { readdirSync, readlinkSync, readFileSync } from 'node:fs';
const fds = () => readdirSync('/proc/self/fd').map((fd) => {
  try { return fd + ' ' + readlinkSync('/proc/self/fd/' + fd); } catch { return null; }
}).filter((x) => x !== null && !x.endsWith('/proc/self/fd')).sort();
const marked = () => readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).filter((n) => {
  try {
    return readFileSync('/proc/' + n + '/environ', 'latin1').includes('PROCPIN_TOK=${tok}\\0') &&
      !/\\) [ZX] /.test(readFileSync('/proc/' + n + '/stat', 'latin1'));
  } catch { return false; }
}).length;
const code = \`
  const { parentPort, workerData } = require('node:worker_threads');
  const { spawnGroup } = require(${pkg.replace(/"/g, '\\"')});
  const g = spawnGroup('sh', ['-c', 'sleep 1000 & sleep 1000 & exec sleep 1000'], {
    contain: ${JSON.stringify(mode)}, stdio: workerData, grace: 2000,
    env: { ...process.env, PROCPIN_TOK: ${JSON.stringify(tok)} },
  });
  parentPort.postMessage(g.containment);
\`;
const round = async (stdio) => {
  const w = new Worker(code, { eval: true, workerData: stdio, execArgv: [] });
  const kind = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  if (kind !== ${JSON.stringify(mode)}) throw new Error('containment ' + kind);
  // The group runs, its members with it: the command's three sleeps.
  for (let i = 0; i < 1000 && marked() < 3; i++) await new Promise((r) => setTimeout(r, 5));
  await w.terminate();
};
const settle = async (done) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};
// A first round of each kind lets Node (and libuv) open what it keeps for the process.
process.stdout.write('');
for (const stdio of ['ignore', 'pipe', 'inherit']) await round(stdio);
await settle(() => marked() === 0);
const before = fds();
for (let i = 0; i < ${ROUNDS}; i++) {
  for (const stdio of ['ignore', 'pipe', 'inherit']) await round(stdio);
}
await settle(() => marked() === 0 && fds().join() === before.join());
const after = fds();
process.stdout.write('\\n' + JSON.stringify({
  before, after, alive: marked(),
  sockets: after.filter((f) => f.includes('socket:')).length - before.filter((f) => f.includes('socket:')).length,
}) + '\\n');
`;

for (const mode of ['pidns', 'cgroup']) {
  test(`${mode}: Workers terminated while their contained groups run leave no descriptor open in the process and none of the groups' processes alive, whatever the stdio [L3a.end.worker]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const tok = `wt${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const r = await runNode(scenario(mode, tok), { args: [], timeout: 120000 });
    assert.equal(r.code, 0, r.stderr.slice(0, 2000));
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1));
    t.diagnostic(
      `${ROUNDS * 3} Workers: ${out.sockets} sockets more; ${out.after.length - out.before.length} descriptors more`,
    );
    assert.equal(out.alive, 0, "the groups' processes still alive");
    assert.deepEqual(
      nodeOwn(out.after.filter((f) => !out.before.includes(f))),
      [],
      'descriptors left open by the terminated Workers',
    );
  });
}

// A pidns group's mount namespace is let go off the event loop once the group has ended (its
// teardown waits for an RCU grace period). The Worker's threadpool is kept busy so that a close
// queued there would still wait when the Worker is terminated.
const endedScenario = (tok) => `
import { Worker } from 'node:worker_threads';
import { readdirSync, readlinkSync } from 'node:fs';
const fds = () => readdirSync('/proc/self/fd').map((fd) => {
  try { return fd + ' ' + readlinkSync('/proc/self/fd/' + fd); } catch { return null; }
}).filter((x) => x !== null && !x.endsWith('/proc/self/fd')).sort();
const code = \`
  const { parentPort } = require('node:worker_threads');
  const { pbkdf2 } = require('node:crypto');
  const { spawnGroup } = require(${pkg.replace(/"/g, '\\"')});
  (async () => {
    const g = spawnGroup('sh', ['-c', 'echo up; exec sleep 1000'], {
      contain: 'pidns', stdio: ['ignore', 'pipe', 'ignore'], grace: 2000,
      env: { ...process.env, PROCPIN_TOK: ${JSON.stringify(tok)} },
    });
    await new Promise((r) => g.leader.stdout.once('data', r));
    pbkdf2('x', 'y', 1e6, 32, 'sha256', () => {});
    await g.stop();
    parentPort.postMessage('stopped');
  })();
\`;
const round = async () => {
  const w = new Worker(code, { eval: true, execArgv: [] });
  await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
  await w.terminate();
};
process.stdout.write('');
await round();
const before = fds();
for (let i = 0; i < ${ROUNDS}; i++) await round();
for (let i = 0; i < 300 && fds().join() !== before.join(); i++) await new Promise((r) => setTimeout(r, 10));
process.stdout.write('\\n' + JSON.stringify({ before, after: fds() }) + '\\n');
`;

test("pidns: Workers terminated just after their group ended, while its mount namespace's closing waits for a thread, leave no descriptor open [L3a.end.worker]", async (t) => {
  if (!need(t, available('pidns'), 'pidns needs root here')) return;
  const tok = `we${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const r = await runNode(endedScenario(tok), { env: { UV_THREADPOOL_SIZE: '1' }, timeout: 120000 });
  assert.equal(r.code, 0, r.stderr.slice(0, 2000));
  const out = JSON.parse(r.stdout.trim().split('\n').at(-1));
  assert.deepEqual(
    nodeOwn(out.after.filter((f) => !out.before.includes(f))),
    [],
    'descriptors left open by the terminated Workers',
  );
});
