// SPEC Layer 3a against real processes: timeout and abort stop a running leader, and a leader that
// exited a moment before (its watch not yet reported) is cleaned as an exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { liveMembers, procState, waitFor, groupResult } from '../helpers.mjs';

import { spawnGroup } from './group-helpers.mjs';

test('timeout stops a running leader: timedOut, stoppedWhileRunning, the leader ended by killSignal [L3a.deadline.unreaped]', async () => {
  const t0 = performance.now();
  const g = spawnGroup('sleep', ['30'], { stdio: 'ignore', timeout: 150 });
  const result = await g.closed;
  const took = performance.now() - t0;
  assert.ok(took >= 145 && took < 2000, `took ${took} ms`);
  assert.deepEqual(result, groupResult({ signal: 'SIGTERM', timedOut: true, stoppedWhileRunning: true }));
});

test('a leader that exits before its timeout is cleaned as an exit, not timed out [L3a.deadline.unreaped]', async () => {
  const g = spawnGroup('sh', ['-c', 'exit 4'], { stdio: 'ignore', timeout: 60000 });
  const result = await g.closed;
  assert.equal(result.timedOut, false);
  assert.equal(result.exitCode, 4);
});

test('abort stops a running leader: aborted and stoppedWhileRunning [L3a.deadline.unreaped]', async () => {
  const ac = new AbortController();
  const g = spawnGroup('sh', ['-c', 'sleep 30 & exec sleep 30'], { stdio: 'ignore', signal: ac.signal });
  await waitFor(() => liveMembers(g.pgid).length === 2, { what: 'two members' });
  ac.abort();
  const result = await g.closed;
  assert.equal(result.aborted, true);
  assert.equal(result.stoppedWhileRunning, true);
  assert.equal(result.signal, 'SIGTERM');
  await waitFor(() => liveMembers(g.pgid).length === 0, { what: 'no live member' });
});

test('an already aborted signal starts the command and stops it at once [L3a.deadline.unreaped]', async () => {
  const g = spawnGroup('sleep', ['30'], { stdio: 'ignore', signal: AbortSignal.abort() });
  const result = await g.closed;
  assert.equal(result.aborted, true);
  assert.equal(result.signal, 'SIGTERM');
});

// Holds the event loop (on purpose) until the leader is a zombie and `ms` have passed, so that its
// exit has happened but the pidfd watch has not reported it yet.
function holdLoopUntilZombie(pid, ms = 0) {
  const t0 = performance.now();
  const end = t0 + 10000;
  while (procState(pid) !== 'Z' || performance.now() - t0 < ms) {
    if (performance.now() > end) throw new Error('the leader did not exit');
  }
}

test('a leader that exited just before its timeout fired is cleaned as an exit, not timed out [L3a.deadline.unreaped]', async () => {
  const g = spawnGroup('sh', ['-c', 'exit 5'], { stdio: 'ignore', timeout: 30 });
  // Timers run before the poll phase: the timeout fires first, with the exit not yet reported.
  holdLoopUntilZombie(g.pid, 60);
  assert.equal(g.state, 'running');
  const result = await g.closed;
  assert.equal(result.timedOut, false);
  assert.equal(result.stoppedWhileRunning, false);
  assert.equal(result.exitCode, 5);
});

test('an abort just after the leader exited (not yet reported) is cleaned as an exit, not aborted [L3a.deadline.unreaped]', async () => {
  const ac = new AbortController();
  const g = spawnGroup('sh', ['-c', 'exit 6'], { stdio: 'ignore', signal: ac.signal });
  holdLoopUntilZombie(g.pid);
  ac.abort();
  const result = await g.closed;
  assert.equal(result.aborted, false);
  assert.equal(result.stoppedWhileRunning, false);
  assert.equal(result.exitCode, 6);
});

test('stop() just after the leader exited (not yet reported) says stoppedWhileRunning: false [L3a.result.stopped-while-running]', async () => {
  const g = spawnGroup('sh', ['-c', 'exit 7'], { stdio: 'ignore' });
  holdLoopUntilZombie(g.pid);
  assert.equal(g.state, 'running', 'the watch has not reported yet');
  const result = await g.stop();
  assert.equal(result.stoppedWhileRunning, false);
  assert.equal(result.exitCode, 7);
});
