// SPEC Layer 3a against real processes: spawnGroup's options and failures, the leader's death with
// its supervisor, and a supervisor that exits with a group still running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { spawnGroup as realSpawnGroup, ProcessGroup, GROUP_CHANNEL } from '../../dist/index.js';

import { isGone, liveMembers, openFds, ourZombies, procState, procStatus, runNode, waitFor } from '../helpers.mjs';

import { spawnGroup, started } from './group-helpers.mjs';

test('spawnGroup(file, options) takes no arguments, as spawn does [L3a.options]', async () => {
  const g = spawnGroup('true', { stdio: 'ignore', grace: 100 });
  assert.equal((await g.closed).exitCode, 0);
});

test('options are validated before anything starts [L3a.options]', () => {
  const fds = openFds().length;
  assert.throws(() => spawnGroup('sleep', ['1'], { grace: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => spawnGroup('sleep', ['1'], { grace: 1.5 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => spawnGroup('sleep', ['1'], { timeout: 'x' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => spawnGroup('sleep', ['1'], { killSignal: 'SIGNOPE' }), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => spawnGroup('sleep', ['1'], { signal: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => spawnGroup('sleep', ['1'], { processGroup: 'inherit' }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => spawnGroup('sleep', ['1'], null), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => spawnGroup('sleep', 'x'), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => spawnGroup('sleep', {}, {}), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.throws(() => spawnGroup(42), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.equal(openFds().length, fds);
  assert.deepEqual(ourZombies(), []);
});

async function leaderOfKilledSupervisor(options) {
  // A supervisor that starts a group and is then SIGKILLed: it runs no cleanup at all.
  const code = `import { spawnGroup } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).pathname)};
    const g = spawnGroup('sleep', ['30'], { stdio: 'ignore', ...${JSON.stringify(options)} });
    console.log(g.pid); setInterval(() => {}, 1000);`;
  const sup = cpSpawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  sup.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('\n'), { what: 'the leader pid' });
  const pid = Number(out.trim());
  await waitFor(() => procState(pid) === 'S', { what: 'the leader to run' });
  sup.kill('SIGKILL');
  await new Promise((r) => sup.once('exit', r));
  return { pid, supPid: sup.pid };
}

test('the leader dies with its supervisor by default (parentDeathSignal SIGKILL) [L3a.options]', async () => {
  const { pid } = await leaderOfKilledSupervisor({});
  await waitFor(() => isGone(pid), { what: 'the leader to die with its supervisor' });
});

test('parentDeathSignal: null leaves the leader running when its supervisor dies [L3a.options]', async () => {
  const { pid, supPid } = await leaderOfKilledSupervisor({ parentDeathSignal: null });
  try {
    // The parent-death signal is sent while the dying parent's children are re-parented: once
    // the leader has a new parent, no signal is pending and it still sleeps.
    const st = procStatus(pid);
    assert.notEqual(Number(st.PPid), supPid);
    assert.match(st.ShdPnd, /^0+$/);
    assert.match(st.SigPnd, /^0+$/);
    assert.equal(procState(pid), 'S');
  } finally {
    process.kill(pid, 'SIGKILL');
  }
});

test('a command that cannot start throws as spawn does and leaves nothing behind [L3a.options]', () => {
  const fds = openFds().length;
  assert.throws(
    () => realSpawnGroup('/nonexistent/procpin-nothing', [], { stdio: 'ignore' }),
    (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, 'ENOENT');
      assert.equal(err.path, '/nonexistent/procpin-nothing');
      return true;
    },
  );
  assert.equal(openFds().length, fds);
  assert.deepEqual(ourZombies(), []);
});

test('ProcessGroup cannot be constructed directly, and its channel is procpin:group [C.no-crash]', () => {
  // @ts-expect-error constructed directly, on purpose: it must throw
  assert.throws(() => new ProcessGroup(), TypeError);
  // @ts-expect-error constructed directly, on purpose: it must throw
  assert.throws(() => new ProcessGroup(Symbol('x'), {}, {}), TypeError);
  assert.equal(GROUP_CHANNEL, 'procpin:group');
});

test('a supervisor that exits with a group still running leaves no member behind [L3a.end.exit]', async () => {
  const code = `import { spawnGroup } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).pathname)};
    const g = spawnGroup('sh', ['-c', 'trap "" TERM; sleep 30 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'], parentDeathSignal: null, grace: 60000 });
    g.leader.stdout.once('data', (d) => { process.stdout.write(g.pgid + ' ' + d); process.exit(0); });`;
  const r = await runNode(code);
  assert.equal(r.code, 0, r.stderr);
  const [pgid, member] = r.stdout.trim().split(/\s+/).map(Number);
  started.push(pgid);
  await waitFor(() => isGone(member), { what: 'the member to die with the supervisor' });
  await waitFor(() => liveMembers(pgid).length === 0, { what: 'an empty group' });
});
