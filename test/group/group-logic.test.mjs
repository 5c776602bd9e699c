// The cleanup's decisions with the kernel replaced by a recorder: every group signal is logged
// with the leader's state at that moment, so each rule of SPEC Layer 3a is asserted on what would
// have been sent, and when.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupResult } from '../helpers.mjs';
import { SIGCONT, SIGKILL, SIGTERM, SIGUSR1, exitInfo, harness, killedInfo, last } from './group-logic-harness.mjs';

test('a reserved group is killed despite an empty scan, and the number is forgotten [L3a.final-sigkill]', async () => {
  const h = harness({ scan: () => 0 });
  h.exitAndWatch();
  const result = await h.group.closed;
  const signals = h.groupSignals();
  assert.deepEqual(
    last(signals),
    ['group', SIGKILL, 'exited'],
    'the last group signal is a SIGKILL to the zombie-led group',
  );
  assert.equal(h.group.holdsGroup, false);
  assert.equal(h.group.state, 'released');
  assert.equal(result.killed, false);
  assert.equal(result.exitCode, 0);
});

test('when the leader exits on its own the group gets killSignal, SIGCONT, then SIGKILL, and only then is the leader reaped and closed [L3a.exit.clean-then-reap]', async () => {
  const h = harness();
  h.exitAndWatch(exitInfo(3));
  const result = await h.group.closed;
  const effects = h.log.filter((e) => e[0] !== 'scan');
  assert.deepEqual(effects, [
    ['group', SIGTERM, 'exited'],
    ['group', SIGCONT, 'exited'],
    ['group', SIGKILL, 'exited'],
    ['reap'],
    ['close', 'reaped'],
  ]);
  assert.deepEqual(result, groupResult({ exitCode: 3 }));
});

test('nothing is signalled after release: signal() is false, stop() and late deadlines send nothing [L3a.signal.unreaped]', async () => {
  const h = harness({ timeout: 40 });
  h.exitAndWatch();
  const result = await h.group.closed;
  const before = h.log.length;
  assert.equal(h.group.signal(SIGUSR1), false);
  assert.equal(h.group.signal(0), false);
  assert.equal(await h.group.stop(), result);
  h.abort();
  await new Promise((r) => setTimeout(r, 60)); // past the (cleared) timeout
  assert.equal(h.log.length, before, `sent after release: ${JSON.stringify(h.log.slice(before))}`);
});

test('ESRCH from a group signal forgets the number: no further group signal, no scan, the leader is still reaped [L3a.signal.esrch]', async () => {
  const h = harness({ send: () => 'ESRCH', scan: () => 1 });
  h.exitAndWatch();
  const result = await h.group.closed;
  assert.equal(h.groupSignals().length, 1, 'only the first signal was tried');
  assert.equal(h.log.filter((e) => e[0] === 'scan').length, 0);
  assert.equal(h.group.holdsGroup, false);
  assert.deepEqual(h.log.slice(-2), [['reap'], ['close', 'reaped']]);
  assert.equal(result.killed, false);
});

test('ESRCH on a signal() call forgets the number: later calls send nothing to the group, only to the running leader through its pidfd [L3a.signal.esrch]', async () => {
  const h = harness({ send: () => 'ESRCH' });
  // The group is gone while the leader runs: it left the group (setpgid). It still gets the signal.
  assert.equal(h.group.signal(SIGUSR1), true);
  assert.equal(h.group.signal(SIGUSR1), true);
  assert.equal(h.groupSignals().length, 1);
  assert.deepEqual(
    h.log.filter((e) => e[0] === 'leader'),
    [
      ['leader', SIGUSR1, 'running'],
      ['leader', SIGUSR1, 'running'],
    ],
  );
  h.exitAndWatch();
  await h.group.closed;
  assert.equal(h.groupSignals().length, 1);
  assert.equal(h.group.signal(SIGUSR1), false, 'released');
});

test('EPERM from a group signal falls back to signalling the leader through its pidfd and keeps the number [L3a.signal.eperm]', async () => {
  const h = harness({ send: (sig) => (sig === SIGUSR1 ? 'EPERM' : 'ok') });
  assert.equal(h.group.signal(SIGUSR1), true);
  assert.deepEqual(h.log, [
    ['group', SIGUSR1, 'running'],
    ['leader', SIGUSR1, 'running'],
  ]);
  assert.equal(h.group.holdsGroup, true);
  h.exitAndWatch();
  await h.group.closed;
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('EPERM during cleanup still ends with a group SIGKILL attempt while the leader is reserved [L3a.final-sigkill]', async () => {
  const h = harness({ send: () => 'EPERM' });
  h.exitAndWatch();
  await h.group.closed;
  const kills = h.log.filter((e) => e[1] === SIGKILL);
  assert.deepEqual(kills, [
    ['group', SIGKILL, 'exited'],
    ['leader', SIGKILL, 'exited'],
  ]);
});

test('an unreadable /proc counts as "members may exist": the grace runs out and killed is true [L3a.scan.unreadable]', async () => {
  const h = harness({ scan: () => 'unknown', grace: 80 });
  const t0 = performance.now();
  h.exitAndWatch();
  const result = await h.group.closed;
  const took = performance.now() - t0;
  assert.ok(took >= 75, `the grace was cut short: ${took} ms`);
  assert.equal(result.killed, true);
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
  assert.equal(h.phases.find((p) => p.phase === 'grace-ended').reason, 'grace');
});

// The leader exits; the scans find a member twice, then none (each count given through
// `answer`): the grace ends early, after the third scan, with nothing killed.
async function graceEndsEarly(answer) {
  let scans = 0;
  const h = harness({ scan: () => answer(++scans < 3 ? 1 : 0), grace: 20000 });
  const t0 = performance.now();
  h.exitAndWatch();
  const result = await h.group.closed;
  assert.ok(performance.now() - t0 < 2000);
  assert.equal(scans, 3);
  assert.equal(result.killed, false);
  assert.equal(h.phases.find((p) => p.phase === 'grace-ended').reason, 'empty');
  return h;
}

test('the grace ends early once the leader has exited and a scan finds no live member [L3a.scan.advisory]', async () => {
  await graceEndsEarly((count) => count);
});

test('a scan answered through a promise ends the grace early when it finds no member [L3a.scan.advisory]', async () => {
  const h = await graceEndsEarly((count) => new Promise((r) => setTimeout(r, 2, count)));
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('a scan slower than the grace does not hold it: the grace ends on time with a SIGKILL and killed is true [L3a.scan.advisory]', async () => {
  const h = harness({ scan: () => new Promise(() => {}), grace: 60 });
  const t0 = performance.now();
  h.exitAndWatch();
  const result = await h.group.closed;
  const took = performance.now() - t0;
  assert.ok(took >= 55 && took < 1000, `took ${took} ms`);
  assert.equal(result.killed, true);
  assert.equal(h.phases.find((p) => p.phase === 'grace-ended').reason, 'grace');
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('a scan that fails (rejects or throws) counts as "members may exist" [L3a.scan.unreadable]', async () => {
  for (const scan of [
    () => Promise.reject(new Error('EIO')),
    () => {
      throw new Error('EIO');
    },
  ]) {
    const h = harness({ scan, grace: 40 });
    const t0 = performance.now();
    h.exitAndWatch();
    const result = await h.group.closed;
    assert.ok(performance.now() - t0 >= 35);
    assert.equal(result.killed, true);
    assert.equal(h.phases.find((p) => p.phase === 'grace-ended').reason, 'grace');
  }
});

test('early in the grace the group is looked at about every millisecond [L3a.scan.advisory]', async () => {
  // Members that leave 30 ms after killSignal: the empty group is seen within a few ms of it.
  // Every pause the cleanup asks for between two looks in that time is 1 ms (how many looks fit
  // in 30 ms depends on the CPU the machine gives this process, the pauses asked for do not).
  const start = { t0: 0 };
  const pauses = [];
  const grace = 20000;
  const h = harness({
    scan: () => (performance.now() - start.t0 < 30 ? 1 : 0),
    grace,
    onTimer: (ms) => ms !== grace && pauses.push(ms),
  });
  start.t0 = performance.now();
  h.exitAndWatch();
  await h.group.closed;
  const ended = h.phases.find((p) => p.phase === 'grace-ended');
  assert.equal(ended.reason, 'empty');
  assert.ok(h.log.filter((e) => e[0] === 'scan').length >= 2, 'looked at more than once');
  assert.ok(pauses.length >= 1, 'paused between looks');
  assert.deepEqual(new Set(pauses), new Set([1]), `pauses asked for: ${pauses.join(', ')}`);
});

test('members still seen when the grace runs out are killed and reported as killed [L3a.grace.sigkill]', async () => {
  const h = harness({ scan: () => 1, grace: 30 });
  h.exitAndWatch();
  const result = await h.group.closed;
  assert.equal(result.killed, true);
  assert.deepEqual(last(h.groupSignals()), ['group', SIGKILL, 'exited']);
});

test('an empty scan does not end the grace while the leader still runs [L3a.scan.advisory]', async () => {
  // The leader ignores SIGTERM: the scan says empty, but a live leader is a member.
  const h = harness({
    scan: () => 0,
    grace: 60,
    onSignal: (sig, h) => sig === SIGKILL && h.leader === 'running' && h.exitAndWatch(killedInfo()),
  });
  const t0 = performance.now();
  const result = await h.group.stop();
  assert.ok(performance.now() - t0 >= 55);
  assert.equal(result.killed, true);
  assert.equal(result.signal, 'SIGKILL');
  const effects = h.log.filter((e) => e[0] !== 'scan');
  assert.deepEqual(effects, [
    ['group', SIGTERM, 'running'],
    ['group', SIGCONT, 'running'],
    ['group', SIGKILL, 'running'],
    ['group', SIGKILL, 'exited'],
    ['reap'],
    ['close', 'reaped'],
  ]);
});
