// The cleanup's decisions with the kernel replaced by a recorder (group-logic-harness.mjs): the
// deadlines (timeout, abort), stop() once, the state and phases published, the leader's reap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SIGKILL, SIGTERM, exitInfo, harness, killedInfo, last } from './group-logic-harness.mjs';

test('a timeout stops a running leader: timedOut and stoppedWhileRunning [L3a.deadline.unreaped]', async () => {
  const h = harness({
    timeout: 20,
    onSignal: (sig, h) =>
      sig === SIGTERM && h.leader === 'running' && setImmediate(() => h.exitAndWatch(killedInfo('SIGTERM', SIGTERM))),
  });
  const result = await h.group.closed;
  assert.equal(result.timedOut, true);
  assert.equal(result.stoppedWhileRunning, true);
  assert.equal(result.aborted, false);
  assert.equal(result.signal, 'SIGTERM');
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('a leader that exited a moment before the deadline is cleaned as an exit, not timed out [L3a.deadline.unreaped]', async () => {
  const h = harness({ timeout: 30 });
  h.exitNow(exitInfo(7)); // the kernel has it; the watch has not reported yet
  const result = await h.group.closed;
  assert.equal(result.timedOut, false);
  assert.equal(result.stoppedWhileRunning, false);
  assert.equal(result.exitCode, 7);
  assert.equal(h.groupSignals()[0][2], 'exited');
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('an abort stops a running leader: aborted and stoppedWhileRunning [L3a.deadline.unreaped]', async () => {
  const h = harness({
    onSignal: (sig, h) =>
      sig === SIGTERM && h.leader === 'running' && setImmediate(() => h.exitAndWatch(killedInfo('SIGTERM', SIGTERM))),
  });
  h.abort();
  const result = await h.group.closed;
  assert.equal(result.aborted, true);
  assert.equal(result.timedOut, false);
  assert.equal(result.stoppedWhileRunning, true);
});

test('an abort after the leader exited (watch not yet reported) is cleaned as an exit, not aborted [L3a.deadline.unreaped]', async () => {
  const h = harness();
  h.exitNow(exitInfo(0));
  h.abort();
  const result = await h.group.closed;
  assert.equal(result.aborted, false);
  assert.equal(result.stoppedWhileRunning, false);
});

test('a signal already aborted at spawn stops the group at once [L3a.deadline.unreaped]', async () => {
  const h = harness({
    abortedAtStart: true,
    onSignal: (sig, h) =>
      sig === SIGTERM && h.leader === 'running' && setImmediate(() => h.exitAndWatch(killedInfo('SIGTERM', SIGTERM))),
  });
  const result = await h.group.closed;
  assert.equal(result.aborted, true);
  assert.equal(result.stoppedWhileRunning, true);
});

test('an abort during the cleanup of an exit changes nothing [L3a.deadline.unreaped]', async () => {
  const h = harness({ scan: () => 1, grace: 40 });
  h.exitAndWatch();
  await h.group.exited;
  h.abort();
  const result = await h.group.closed;
  assert.equal(result.aborted, false);
  assert.equal(h.groupSignals().filter((e) => e[1] === SIGTERM).length, 1);
});

test('stop() runs once: concurrent and later calls share its promise and send killSignal once [L3a.stop.once]', async () => {
  const h = harness({
    onSignal: (sig, h) =>
      sig === SIGTERM && h.leader === 'running' && setImmediate(() => h.exitAndWatch(killedInfo('SIGTERM', SIGTERM))),
  });
  const p1 = h.group.stop();
  const p2 = h.group.stop();
  assert.equal(p1, p2);
  assert.equal(p1, h.group.closed);
  const r = await p1;
  assert.equal(h.group.stop(), p1);
  assert.equal(await h.group.stop(), r);
  assert.equal(h.groupSignals().filter((e) => e[1] === SIGTERM).length, 1);
});

test('stoppedWhileRunning is decided by a WNOWAIT look before the signal, not by a flag set afterwards [L3a.result.stopped-while-running]', async () => {
  // The leader dies synchronously of our SIGTERM: a flag read after the signal would see an exit.
  const a = harness({
    onSignal: (sig, h) => sig === SIGTERM && h.leader === 'running' && h.exitAndWatch(killedInfo('SIGTERM', SIGTERM)),
  });
  assert.equal((await a.group.stop()).stoppedWhileRunning, true);
  // The leader had exited but its watch had not reported: the look sees the exit.
  const b = harness();
  b.exitNow(exitInfo(0));
  assert.equal((await b.group.stop()).stoppedWhileRunning, false);
});

test('with killSignal SIGKILL there is no grace [L3a.grace.sigkill]', async () => {
  const h = harness({ killSignal: SIGKILL, scan: () => 1, grace: 60000 });
  h.exitAndWatch();
  const t0 = performance.now();
  const result = await h.group.closed;
  assert.ok(performance.now() - t0 < 1000);
  assert.equal(result.killed, true);
  assert.deepEqual(
    h.groupSignals().map((e) => e[1]),
    [SIGKILL, SIGKILL],
  );
});

test('state goes running, reserved, cleaning, released [L3a.state]', async () => {
  // A grace long enough that the look at the state one turn of the loop after the exit comes
  // before the grace ends, however late the machine runs that turn.
  const h = harness({ scan: () => 1, grace: 500 });
  assert.equal(h.group.state, 'running');
  const seen = [];
  h.group.exited.then(() => seen.push(h.group.state));
  h.exitAndWatch();
  await h.group.exited;
  await new Promise((r) => setImmediate(r));
  seen.push(h.group.state);
  await h.group.closed;
  seen.push(h.group.state);
  assert.deepEqual(seen, ['reserved', 'cleaning', 'released']);
});

test('the phases are published in order with the pid, the signals and growing times [C.diag.group]', async () => {
  const h = harness({ scan: () => 0 });
  h.exitAndWatch();
  await h.group.closed;
  assert.deepEqual(
    h.phases.map((p) => [p.pid, p.phase, p.signal]),
    [
      [4242, 'exited', undefined],
      [4242, 'signal', 'SIGTERM'],
      [4242, 'signal', 'SIGCONT'],
      [4242, 'grace-ended', undefined],
      [4242, 'kill', 'SIGKILL'],
      [4242, 'reaped', undefined],
      [4242, 'released', undefined],
    ],
  );
  const ms = h.phases.map((p) => p.ms);
  assert.deepEqual(
    [...ms].sort((a, b) => a - b),
    ms,
  );
});

test('a leader that can no longer be waited for is never signalled: the number is forgotten, and closed rejects with the loss [L3a.leader.lost]', async () => {
  const h = harness({ lookThrows: true });
  await assert.rejects(h.group.stop(), { code: 'ECHILD' });
  assert.equal(h.groupSignals().length, 0);
  assert.equal(h.log.filter((e) => e[0] === 'leader').length, 0);
  assert.equal(h.group.state, 'released');
});

const codedError = (code) => Object.assign(new Error(code), { code });

test('a leader reaped by someone else after its exit was read releases the group with that exit [L3a.release.no-fd]', async () => {
  const h = harness({ reapError: codedError('ERR_PROCPIN_CHILD_LOST') });
  h.exitAndWatch(exitInfo(5));
  const result = await h.group.closed;
  assert.equal(result.exitCode, 5);
  assert.equal(h.group.state, 'released');
  assert.deepEqual(h.log.slice(-2), [['reap-failed'], ['close', 'exited']]);
});

for (const code of ['ERR_PROCPIN_NOT_EXITED', 'ECHILD', 'EINVAL']) {
  test(`a reap of the leader that fails with ${code} rejects closed with that error and still releases the group [L3a.release.no-fd]`, async () => {
    const h = harness({ reapError: codedError(code) });
    h.exitAndWatch(exitInfo(5));
    await assert.rejects(h.group.closed, { code });
    assert.equal(h.group.state, 'released');
    assert.equal(h.group.holdsGroup, false);
    assert.deepEqual(h.log.slice(-2), [['reap-failed'], ['close', 'exited']]);
  });
}

test('a throwing diagnostics subscriber does not stop the cleanup [C.diag.group]', async () => {
  const h = harness();
  h.group; // publish replaced below
  const bad = harness();
  bad.phases.push = () => {
    throw new Error('subscriber');
  };
  bad.exitAndWatch();
  const r = await bad.group.closed;
  assert.equal(bad.group.state, 'released');
  assert.equal(r.exitCode, 0);
  h.exitAndWatch();
  await h.group.closed;
});

test('killNow() sends a group SIGKILL at once while the group is held, and nothing once released [L3a.signal.unreaped]', async () => {
  const h = harness({ grace: 20, scan: () => 1 });
  h.group.killNow();
  assert.deepEqual(h.groupSignals(), [['group', SIGKILL, 'running']]);
  assert.equal(h.group.state, 'running');
  h.exitAndWatch(killedInfo());
  const released = harness();
  released.exitAndWatch();
  await released.group.closed;
  const before = released.log.length;
  released.group.killNow();
  assert.equal(released.log.length, before);
  await h.group.closed;
});
