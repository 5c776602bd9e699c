// SPEC Layer 3a against real processes: each rule of zombie-reserved group cleanup, checked in
// the kernel's own record (/proc/PID/stat states, pgids, /proc/self/fd).
// PROCPIN_NO_PIDFD_GROUP=1 runs the same file through the kill(-pgid) fallback
// (test/group/group-fallback.test.mjs does that, and runs it under the old-kernel filter).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { groupSignalsUsePidfd } from '../../dist/index.js';
import { createRequire } from 'node:module';

const { binding } = createRequire(import.meta.url)('../../dist/binding.js');
import { isGone, liveMembers, openFds, ourZombies, parseStat, procState, waitFor, groupResult } from '../helpers.mjs';

import { STRESS, expectPidfd, spawnGroup, pidsIn, phasesOf, workdir } from './group-helpers.mjs';

test('group signals take the path this run expects [L3a.signal.pidfd-group]', () => {
  const forced = process.env.PROCPIN_NO_PIDFD_GROUP === '1';
  if (expectPidfd === 'pidfd') assert.equal(groupSignalsUsePidfd(), true);
  else if (expectPidfd === 'kill' || forced) assert.equal(groupSignalsUsePidfd(), false);
  else assert.equal(groupSignalsUsePidfd(), binding.hasPidfdGroupSignal());
});

test('the leader is held through a pidfd where the kernel has them [L3a.signal.pidfd-group]', async () => {
  const g = spawnGroup('sh', ['-c', 'exit 0'], { stdio: 'ignore' });
  if (process.env.PROCPIN_EXPECT_NO_PIDFD === '1') assert.equal(g.leader.pidfd, -1);
  else assert.ok(g.leader.pidfd >= 0);
  await g.closed;
  assert.equal(g.leader.pidfd, -1);
});

test('group signals go through the pidfd, or kill(-pgid) only while the leader is unreaped [L3a.signal.unreaped]', async (t) => {
  // The group signal is sent natively (the leader's handle decides pidfd or number); each one is
  // published on the diagnostics channel right after it was sent, and the leader's /proc state
  // read then shows it was still a reserved zombie: the number was provably the group's.
  const ref = {};
  const phases = phasesOf(ref, t);
  const g = spawnGroup('sh', ['-c', 'sleep 30 & exit 0'], { stdio: 'ignore' });
  ref.pid = g.pid;
  await g.closed;
  const sent = phases.filter((p) => p.phase === 'signal' || p.phase === 'kill');
  assert.ok(sent.length >= 3, `group signals: ${JSON.stringify(sent)}`);
  for (const p of sent) assert.equal(p.leaderState, 'Z', 'signalled a group whose leader was not reserved');
  assert.equal(sent.at(-1).signal, 'SIGKILL');
});

test('a leader that backgrounds sleep and exits leaves no survivor, and is reaped only after the group SIGKILL [L3a.exit.clean-then-reap]', async (t) => {
  const dir = workdir(t);
  const pids = join(dir, 'pids');
  const ref = {};
  const phases = phasesOf(ref, t);
  const g = spawnGroup('sh', ['-c', `sleep 30 & echo $! >> ${pids}; sleep 30 & echo $! >> ${pids}; exit 3`], {
    stdio: 'ignore',
  });
  ref.pid = g.pid;
  assert.equal(g.pgid, g.pid);
  assert.equal(g.state, 'running');
  const info = await g.exited;
  assert.equal(info.exitCode, 3);
  const result = await g.closed;
  assert.equal(g.state, 'released');
  assert.deepEqual(result, groupResult({ exitCode: 3 }));
  const members = pidsIn(pids);
  assert.equal(members.length, 2);
  await waitFor(() => liveMembers(g.pgid).length === 0, { what: 'no live member' });
  for (const pid of members) assert.ok(isGone(pid), `member ${pid} survived`);
  // The leader was a zombie at every phase up to the final kill, and reaped after it.
  const byPhase = phases.map((p) => `${p.phase}:${p.leaderState}`);
  assert.deepEqual(byPhase.slice(0, 3), ['exited:Z', 'signal:Z', 'signal:Z']);
  const kill = phases.findLast((p) => p.phase === 'kill');
  assert.equal(kill.leaderState, 'Z');
  assert.equal(kill.signal, 'SIGKILL');
  assert.ok(phases.indexOf(kill) < phases.findIndex((p) => p.phase === 'reaped'));
  assert.notEqual(procState(g.pid), 'Z', 'the leader was reaped');
});

test("a member's TERM trap sees the leader's /proc state as Z while cleanup runs [L3a.exit.clean-then-reap]", async (t) => {
  const dir = workdir(t);
  const seen = join(dir, 'seen');
  const ready = join(dir, 'ready');
  const member = `trap 'cat /proc/'$LEADER'/stat > ${seen}; exit 0' TERM; touch ${ready}; while :; do sleep 0.05; done`;
  const g = spawnGroup(
    'sh',
    ['-c', `LEADER=$$; export LEADER; sh -c "$MEMBER" & while [ ! -e ${ready} ]; do sleep 0.01; done; exit 0`],
    { stdio: 'ignore', env: { ...process.env, MEMBER: member } },
  );
  await g.closed;
  await waitFor(() => existsSync(seen) && readFileSync(seen, 'utf8').length > 0, { what: 'the trap output' });
  const line = readFileSync(seen, 'utf8');
  assert.equal(Number(line.split(' ')[0]), g.pid);
  assert.equal(parseStat(line).state, 'Z');
});

test('a member that ignores SIGTERM dies by SIGKILL after the grace [L3a.grace.sigkill]', async (t) => {
  const dir = workdir(t);
  const pidFile = join(dir, 'member');
  const grace = 400;
  const g = spawnGroup(
    'sh',
    [
      '-c',
      `sh -c 'trap "" TERM; echo $$ > ${pidFile}.tmp; mv ${pidFile}.tmp ${pidFile}; while :; do sleep 1; done' & while [ ! -e ${pidFile} ]; do sleep 0.01; done; exit 0`,
    ],
    { stdio: 'ignore', grace },
  );
  const phases = phasesOf({ pid: g.pid }, t);
  await g.exited;
  const t0 = performance.now();
  const result = await g.closed;
  const took = performance.now() - t0;
  assert.equal(result.killed, true);
  assert.ok(took >= grace - 5, `cleaned after ${took} ms, before the grace ran out`);
  assert.ok(took < grace + 1500, `cleaned after ${took} ms`);
  const ended = phases.find((p) => p.phase === 'grace-ended');
  assert.equal(ended.reason, 'grace');
  assert.ok(ended.ms >= grace, `grace ended after ${ended.ms} ms`);
  const kill = phases.findLast((p) => p.phase === 'kill');
  assert.ok(kill.ms >= grace && kill.ms < grace + 1000, `SIGKILL after ${kill.ms} ms`);
  const member = pidsIn(pidFile)[0];
  await waitFor(() => isGone(member), { what: 'the member to die' });
  await waitFor(() => liveMembers(g.pgid).length === 0, { what: 'no live member' });
});

test('the grace ends early when every member has exited [L3a.scan.advisory]', async (t) => {
  const g = spawnGroup('sh', ['-c', 'sleep 30 & sleep 30 & exit 0'], { stdio: 'ignore', grace: 20000 });
  const phases = phasesOf({ pid: g.pid }, t);
  await g.exited;
  const t0 = performance.now();
  const result = await g.closed;
  assert.ok(performance.now() - t0 < 2000);
  assert.equal(result.killed, false);
  assert.equal(phases.find((p) => p.phase === 'grace-ended').reason, 'empty');
});

test('a stopped member gets SIGCONT after killSignal and ends within the grace [L3a.grace.sigkill]', async (t) => {
  // The leader waits for the stopped member and ignores SIGTERM itself (set after the fork), so
  // the member ends only if something continues it: the group never becomes orphaned with a
  // stopped member, which would make the kernel send SIGHUP and SIGCONT on its own.
  const dir = workdir(t);
  const pidFile = join(dir, 'member');
  const g = spawnGroup(
    'sh',
    [
      '-c',
      `sh -c 'echo $$ > ${pidFile}; kill -STOP $$; sleep 30' & M=$!; trap "" TERM; touch ${pidFile}.leader; wait $M; exit 0`,
    ],
    { stdio: 'ignore', grace: 20000 },
  );
  await waitFor(() => existsSync(`${pidFile}.leader`), { what: 'the leader to ignore SIGTERM' });
  await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), { what: 'the member pid' });
  const member = pidsIn(pidFile)[0];
  await waitFor(() => procState(member) === 'T', { what: 'the member to stop' });
  const t0 = performance.now();
  const result = await g.stop();
  assert.ok(performance.now() - t0 < 3000, 'waited for the grace');
  assert.equal(result.killed, false);
  assert.equal(result.exitCode, 0);
  assert.ok(isGone(member));
});

test('a member forking in a loop during cleanup leaves no survivor (repeated) [L3a.final-sigkill]', async (t) => {
  const rounds = STRESS ? 100 : 20;
  const dir = workdir(t);
  for (let i = 0; i < rounds; i++) {
    // The leader exits once the member ignores SIGTERM and has started forking.
    const ready = join(dir, `ready${i}`);
    const g = spawnGroup(
      'sh',
      [
        '-c',
        `sh -c 'trap "" TERM; touch ${ready}; while :; do sleep 5 & done' & while [ ! -e ${ready} ]; do sleep 0.01; done; exit 0`,
      ],
      { stdio: 'ignore', grace: 30 },
    );
    const result = await g.closed;
    assert.equal(result.killed, true);
    await waitFor(() => liveMembers(g.pgid).length === 0, {
      timeout: 5000,
      what: `no survivor in round ${i}`,
    });
  }
});

test('concurrent stop() calls share one cleanup; later calls get the same promise [L3a.stop.once]', async () => {
  const g = spawnGroup('sh', ['-c', 'trap "" TERM; sleep 30 & wait'], { stdio: 'ignore', grace: 100 });
  await waitFor(() => liveMembers(g.pgid).length === 2, { what: 'two members' });
  const ref = { pid: g.pid };
  const phases = phasesOf(ref);
  const a = g.stop();
  const b = g.stop();
  // asyncDispose is the same cleanup, resolving to undefined (as `await using` wants).
  const c = g[Symbol.asyncDispose]();
  assert.equal(a, b);
  assert.equal(g.state, 'cleaning');
  const result = await a;
  assert.equal(await c, undefined);
  phases.stop();
  assert.equal(g.stop(), a);
  assert.equal(result.stoppedWhileRunning, true);
  assert.equal(result.killed, true);
  assert.equal(result.signal, 'SIGKILL');
  assert.equal(phases.filter((p) => p.phase === 'signal' && p.signal === 'SIGTERM').length, 1);
});

test('signal() reaches the whole group while it is ours and returns false once released [L3a.signal.unreaped]', async (t) => {
  const dir = workdir(t);
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const script = (f) => `trap 'echo got > ${f}; exit 0' USR1; touch ${f}.ready; while :; do sleep 0.05; done`;
  // The leader handles USR1 too and stays until both members have answered, so that its own
  // exit (and the cleanup's SIGTERM) cannot overtake their traps.
  const g = spawnGroup(
    'sh',
    [
      '-c',
      `trap : USR1; sh -c "${script(a)}" & sh -c "${script(b)}" & while [ ! -e ${a} ] || [ ! -e ${b} ]; do sleep 0.01; done`,
    ],
    { stdio: 'ignore' },
  );
  await waitFor(() => existsSync(`${a}.ready`) && existsSync(`${b}.ready`), { what: 'the traps' });
  assert.equal(g.signal(0), true);
  assert.equal(g.signal('SIGUSR1'), true);
  await waitFor(() => existsSync(a) && existsSync(b), { what: 'both members to get SIGUSR1' });
  await g.closed; // the leader exits once both have answered
  assert.equal(g.state, 'released');
  assert.equal(g.signal('SIGTERM'), false);
  assert.equal(g.signal(0), false);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => g.signal('SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
});

test('the state goes running, reserved, cleaning, released [L3a.state]', async () => {
  const g = spawnGroup('sh', ['-c', 'exit 0'], { stdio: 'ignore' });
  assert.equal(g.state, 'running');
  await g.exited;
  assert.equal(g.state, 'reserved');
  assert.equal(procState(g.pid), 'Z');
  await new Promise((r) => setImmediate(r));
  assert.ok(['cleaning', 'released'].includes(g.state));
  await g.closed;
  assert.equal(g.state, 'released');
});

test('a released group holds no descriptor and leaves no zombie [L3a.release.no-fd]', async () => {
  const before = openFds();
  const g = spawnGroup('sh', ['-c', 'sleep 30 & exit 0'], { stdio: 'ignore' });
  const pidfd = g.leader.pidfd;
  await g.closed;
  assert.deepEqual(openFds(), before);
  if (pidfd >= 0) assert.ok(!openFds().includes(pidfd) || before.includes(pidfd));
  assert.deepEqual(ourZombies(), []);
});

test('with piped stdio a released group holds no descriptor once its output has been read [L3a.release.no-fd]', async () => {
  const before = openFds();
  const g = spawnGroup('sh', ['-c', 'echo hi; echo err >&2; sleep 30 & exit 0']);
  let out = '';
  g.leader.stdout.on('data', (d) => (out += d));
  g.leader.stderr.resume();
  const closedOut = new Promise((r) => g.leader.stdout.once('close', r));
  const closedErr = new Promise((r) => g.leader.stderr.once('close', r));
  await g.closed;
  await closedOut;
  await closedErr;
  assert.equal(out, 'hi\n');
  assert.equal(g.leader.stdin.destroyed, true);
  await waitFor(() => openFds().length === before.length, { what: 'the descriptors to close' });
});

test('30 groups at once with random exits and stops leave no process in their groups, no zombie, no fd growth [L3a.final-sigkill]', async () => {
  const n = STRESS ? 200 : 30;
  const fdsBefore = openFds().length;
  const groups = [];
  for (let i = 0; i < n; i++) {
    const delay = (Math.random() * 0.2).toFixed(3);
    const code = i % 7;
    const g = spawnGroup(
      'sh',
      ['-c', `sleep 30 & sleep 30 & (trap "" TERM; sleep 30) & sleep ${delay}; exit ${code}`],
      {
        stdio: 'ignore',
        grace: 100,
      },
    );
    groups.push({ g, code });
    if (i % 3 === 0) setTimeout(() => g.stop(), Math.random() * 200);
  }
  const results = await Promise.all(groups.map(({ g }) => g.closed));
  results.forEach((r, i) => {
    if (!r.stoppedWhileRunning) assert.equal(r.exitCode, groups[i].code);
  });
  await waitFor(() => groups.every(({ g }) => liveMembers(g.pgid).length === 0), {
    timeout: 10000,
    what: 'every group empty',
  });
  assert.deepEqual(ourZombies(), []);
  assert.equal(openFds().length, fdsBefore);
  for (const { g } of groups) assert.equal(g.state, 'released');
});
