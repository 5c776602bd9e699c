// SPEC Layer 3a, GroupResult.killed: "`killed` that live members were seen just before the final
// SIGKILL (the grace did not empty the group)". Checked against real processes, for both a
// killSignal with a grace and killSignal SIGKILL (no grace).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGroup } from '../../dist/index.js';
import { liveMembers, waitFor, groupResult } from '../helpers.mjs';

test('a lone leader that exits on its own reports killed: false with the default killSignal [L3a.result.killed]', async () => {
  const g = spawnGroup('true', [], { stdio: 'ignore' });
  const r = await g.closed;
  assert.equal(r.exitCode, 0);
  assert.equal(r.killed, false);
});

test('a lone leader that exits on its own reports killed: false with killSignal SIGKILL too [L3a.result.killed]', async () => {
  // No member ever existed besides the leader, so none can have been seen before the final
  // SIGKILL. With killSignal SIGKILL the grace is zero and no scan runs: the flag must then come
  // from a scan, not from "the grace loop did not see the group empty".
  const g = spawnGroup('true', [], { stdio: 'ignore', killSignal: 'SIGKILL' });
  const r = await g.closed;
  assert.equal(r.exitCode, 0);
  assert.deepEqual(liveMembers(g.pgid), []);
  assert.equal(r.killed, false, 'killed is true although no live member was seen');
});

test('with killSignal SIGKILL a member still running when the leader exits is reported as killed [L3a.result.killed]', async () => {
  const g = spawnGroup('sh', ['-c', 'sleep 30 & exit 0'], { stdio: 'ignore', killSignal: 'SIGKILL' });
  const r = await g.closed;
  assert.equal(r.killed, true);
  // The SIGKILL is delivered; the member dies when it is next scheduled (a loaded machine may
  // show it in state R for a moment).
  await waitFor(() => liveMembers(g.pgid).length === 0, { timeout: 2000, what: 'the killed member to die' });
});

test('a lone leader that exits on its own reports killed: false with grace 0 [L3a.result.killed]', async () => {
  const g = spawnGroup('true', [], { stdio: 'ignore', grace: 0 });
  const r = await g.closed;
  assert.equal(r.exitCode, 0);
  assert.equal(r.killed, false, 'killed is true although no live member was seen');
});

test('a stop() that ends a lone leader within the grace reports the signal by name and killed: false [L3a.result.killed]', async () => {
  const g = spawnGroup('sleep', ['30'], { stdio: 'ignore', grace: 5000 });
  const r = await g.stop();
  assert.deepEqual(r, groupResult({ signal: 'SIGTERM', stoppedWhileRunning: true }));
  assert.equal(g.state, 'released');
  assert.equal(g.signal('SIGTERM'), false);
});
