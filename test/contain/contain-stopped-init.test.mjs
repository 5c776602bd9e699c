// A `contain: 'pidns'` spawn waits for procpin-init to say how the start went (a refused
// namespace, a command not found) as a plain spawn waits for its vfork: but procpin-init is a
// process someone else may stop. The test build's procpin-init stops its own inner half, or its
// outer half, before the command runs (PROCPIN_INIT_TEST_STOP), as a third party's SIGSTOP
// would: spawnGroup must return while it is stopped and the event loop must keep running; once
// continued, the group is a group as any other, and a start failure is its exit status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { isRoot, need, pkg, runNode, testBinding } from '../helpers.mjs';

const available = isRoot || existsSync('/proc/sys/user/max_user_namespaces');

const scenario = (tok) => `
import { Worker } from 'node:worker_threads';
import { readdirSync, readFileSync } from 'node:fs';
import { spawnGroup } from ${pkg};
// The processes of this test that are stopped (state T), by the host's /proc.
const stopped = () => readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).filter((n) => {
  try {
    return readFileSync('/proc/' + n + '/environ', 'latin1').includes('PROCPIN_TOK=${tok}\\0') &&
      /\\) T /.test(readFileSync('/proc/' + n + '/stat', 'latin1'));
  } catch { return false; }
}).map(Number);
// The watchdog: a spawn that waits for the stopped process would never return; when one has not
// returned 3 s after it began, a thread of its own continues it, so that the run ends with the
// time it took. [0]: the spawn begun, [1]: the spawn returned.
const flags = new Int32Array(new SharedArrayBuffer(8));
const dog = new Worker(\`
  const { workerData: flags } = require('node:worker_threads');
  const { readdirSync, readFileSync } = require('node:fs');
  let seen = 0, since = Date.now();
  setInterval(() => {
    const begun = Atomics.load(flags, 0);
    if (begun !== seen) { seen = begun; since = Date.now(); }
    if (begun === Atomics.load(flags, 1) || Date.now() - since < 3000) return;
    for (const n of readdirSync('/proc').filter((n) => /^\\\\d+$/.test(n))) {
      try {
        if (readFileSync('/proc/' + n + '/environ', 'latin1').includes('PROCPIN_TOK=${tok}\\\\0')) process.kill(Number(n), 'SIGCONT');
      } catch {}
    }
  }, 20);\`, { eval: true, execArgv: [], workerData: flags });
dog.unref();
let ticks = 0;
setInterval(() => ticks++, 2).unref();
const out = [];
for (const stage of ['inner', 'outer']) {
  for (const command of ['sh', 'procpin-no-such-command']) {
    const env = { ...process.env, PROCPIN_INIT_TEST_STOP: stage, PROCPIN_TOK: ${JSON.stringify(tok)} };
    Atomics.add(flags, 0, 1);
    const t0 = performance.now();
    let g;
    try {
      g = spawnGroup(command, ['-c', 'echo up; exec sleep 1000'], {
        contain: 'pidns', stdio: ['ignore', 'pipe', 'ignore'], env, grace: 2000,
      });
    } catch (err) {
      Atomics.store(flags, 1, Atomics.load(flags, 0));
      out.push({ stage, command, threw: err.code, ms: performance.now() - t0 });
      continue;
    }
    const ms = performance.now() - t0;
    Atomics.store(flags, 1, Atomics.load(flags, 0));
    const stoppedAtReturn = stopped().length;
    const before = ticks;
    await new Promise((r) => setTimeout(r, 50));
    const ticked = ticks - before;
    const stillStopped = stopped().length;
    for (const pid of stopped()) process.kill(pid, 'SIGCONT');
    let said = '';
    g.leader.stdout.on('data', (d) => (said += d));
    let result;
    if (command === 'sh') {
      while (!said.includes('up')) await new Promise((r) => setTimeout(r, 5));
      result = await g.stop();
    } else {
      result = await g.closed;
    }
    out.push({ stage, command, ms, stoppedAtReturn, ticked, stillStopped, said, exitCode: result.exitCode, signal: result.signal });
  }
}
console.log(JSON.stringify(out));
`;

test('pidns: a spawn whose procpin-init someone else stopped returns without waiting for it and the event loop keeps running; continued, the group runs, and a command not found is its exit 127 [C.loop.no-block]', async (t) => {
  if (!need(t, available, 'pidns needs root or user namespaces here')) return;
  const tok = `si${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const r = await runNode(scenario(tok), { env: { PROCPIN_BINDING: testBinding }, timeout: 60000 });
  assert.equal(r.code, 0, r.stderr.slice(0, 2000));
  const runs = JSON.parse(r.stdout.trim().split('\n').at(-1));
  for (const run of runs) {
    t.diagnostic(`${run.stage} stopped, ${run.command}: spawnGroup returned in ${run.ms.toFixed(1)} ms`);
  }
  assert.equal(runs.length, 4);
  for (const run of runs) {
    const what = `${run.stage} stopped, ${run.command}`;
    assert.ok(run.ms < 1000, `${what}: spawnGroup took ${run.ms} ms`);
    // The outer stops while the inner goes on: the inner's report that the command is not found
    // may be complete by the time the spawn sees the outer stopped, and is thrown then.
    if (run.stage === 'outer' && run.command !== 'sh' && run.threw !== undefined) {
      assert.equal(run.threw, 'ENOENT');
      continue;
    }
    assert.equal(run.threw, undefined, `${what}: threw ${run.threw}`);
    assert.ok(run.stoppedAtReturn > 0, `${what}: procpin-init was stopped when spawnGroup returned`);
    assert.ok(run.ticked > 0, `${what}: the event loop ran while procpin-init was stopped`);
    assert.ok(run.stillStopped > 0, `${what}: still stopped after the loop ran`);
    if (run.command === 'sh') {
      assert.equal(run.said, 'up\n');
      assert.equal(run.signal, 'SIGTERM');
    } else {
      assert.equal(run.exitCode, 127);
    }
  }
});
