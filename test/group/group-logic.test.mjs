// The cleanup's decisions with the kernel replaced by a recorder: every group signal is logged
// with the leader's state at that moment, so each rule of SPEC Layer 3a is asserted on what would
// have been sent, and when.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { GroupCleanup } = require('../../dist/group/logic.js');

const SIGTERM = 15;
const SIGKILL = 9;
const SIGCONT = 18;
const SIGUSR1 = 10;

const exitInfo = (exitCode = 0) => ({
  pid: 4242,
  uid: 0,
  code: 'CLD_EXITED',
  status: exitCode,
  exitCode,
  signal: null,
});
const killedInfo = (signal = 'SIGKILL', status = SIGKILL) => ({
  pid: 4242,
  uid: 0,
  code: 'CLD_KILLED',
  status,
  exitCode: null,
  signal,
});

/**
 * A fake leader and kernel. `leader` is 'running' | 'exited' (a zombie) | 'reaped'. The leader's
 * watch (`exited` promise) is resolved by `watchFires()`, separately from the state a WNOWAIT look
 * sees, so tests can make the watch lag behind the kernel.
 */
function harness(opts = {}) {
  const {
    grace = 1000,
    timeout,
    killSignal = SIGTERM,
    scan = () => 0,
    send = () => 'ok',
    onSignal = () => {},
    abortedAtStart = false,
    lookThrows = false,
    reapThrows = false,
  } = opts;
  const log = [];
  const phases = [];
  const h = {
    leader: 'running',
    info: null,
    log,
    phases,
    abortListeners: [],
    groupSignals: () => log.filter((e) => e[0] === 'group'),
    exitNow(info = exitInfo()) {
      h.leader = 'exited';
      h.info = info;
    },
    watchFires() {
      resolveWatch(h.info);
    },
    exitAndWatch(info) {
      h.exitNow(info);
      h.watchFires();
    },
    abort() {
      for (const fn of h.abortListeners) fn();
    },
  };
  let resolveWatch;
  const watch = new Promise((r) => (resolveWatch = r));
  const ops = {
    signalGroup(sig) {
      assert.notEqual(h.leader, 'reaped', 'a group signal after the reap');
      log.push(['group', sig, h.leader]);
      const r = send(sig, h);
      onSignal(sig, h);
      return r;
    },
    signalLeader(sig) {
      log.push(['leader', sig, h.leader]);
      return h.leader === 'running';
    },
    scanMembers() {
      log.push(['scan', h.leader]);
      return scan(h);
    },
    lookLeader() {
      if (lookThrows) throw Object.assign(new Error('ECHILD'), { code: 'ECHILD' });
      return h.leader === 'running' ? null : h.info;
    },
    reapLeader() {
      if (reapThrows) throw Object.assign(new Error('ECHILD'), { code: 'ECHILD' });
      assert.equal(h.leader, 'exited', 'reaped a leader that had not exited');
      log.push(['reap']);
      h.leader = 'reaped';
      return h.info;
    },
    closeLeader() {
      log.push(['close', h.leader]);
    },
    now: () => performance.now(),
    setTimer(fn, ms) {
      // Always ref'd here: no fake leader watch keeps the loop alive.
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
    publish(p) {
      phases.push(p);
    },
    onAbort(fn) {
      h.abortListeners.push(fn);
      return () => (h.abortListeners = h.abortListeners.filter((f) => f !== fn));
    },
  };
  h.group = new GroupCleanup(
    ops,
    {
      pid: 4242,
      killSignal,
      killSignalName: killSignal === SIGKILL ? 'SIGKILL' : 'SIGTERM',
      grace,
      timeout,
      abortedAtStart,
    },
    watch,
  );
  return h;
}

const last = (a) => a[a.length - 1];

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
  assert.deepEqual(result, {
    exitCode: 3,
    signal: null,
    timedOut: false,
    aborted: false,
    stoppedWhileRunning: false,
    killed: false,
  });
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
  const start = { t0: 0 };
  const h = harness({ scan: () => (performance.now() - start.t0 < 30 ? 1 : 0), grace: 20000 });
  start.t0 = performance.now();
  h.exitAndWatch();
  await h.group.closed;
  const ended = h.phases.find((p) => p.phase === 'grace-ended');
  assert.equal(ended.reason, 'empty');
  assert.ok(h.log.filter((e) => e[0] === 'scan').length >= 10, 'scans every few ms');
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
  const h = harness({ scan: () => 1, grace: 30 });
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

test('a failed reap still releases the group with the exit read before [L3a.release.no-fd]', async () => {
  const h = harness({ reapThrows: true });
  h.exitAndWatch(exitInfo(5));
  const result = await h.group.closed;
  assert.equal(result.exitCode, 5);
  assert.equal(h.group.state, 'released');
  assert.deepEqual(last(h.log), ['close', 'exited']);
});

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
