// The advisory /proc scan of a group's members (native/scan.cc), against real processes started by
// child_process (detached: each is the leader of a new session and group), and its place in a
// real cleanup: an unreadable /proc counts as "members may exist".
// scanTestHook and scanGroupSync are the test build's (the production addon has neither).
import { hooked as binding } from '../use-test-build.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as dc from 'node:diagnostics_channel';
import { symlinkSync, readdirSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { liveMembers, procStat, tmpDirFor, waitFor } from '../helpers.mjs';

const require = createRequire(import.meta.url);
const { scanGroup } = require('../../dist/group/group.js');
const { spawnGroup, GROUP_CHANNEL } = require('../../dist/index.js');
const { EACCES } = constants.errno;

function startGroup(script, t) {
  const cp = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  t.after(() => {
    try {
      process.kill(-cp.pid, 'SIGKILL');
    } catch {}
  });
  return cp;
}

function childrenOf(pid) {
  const kids = [];
  for (const name of readdirSync('/proc')) {
    const st = /^\d+$/.test(name) && procStat(Number(name));
    if (st && st.ppid === pid) kids.push(st);
  }
  return kids;
}

// Each liveness look runs twice: the cheap one (pidfd_open and poll) and the stat one it falls
// back to without pidfd_open.
/** @type {Array<[string, boolean]>} */
const modes = [
  ['', false],
  [' (liveness read from /proc/PID/stat)', true],
];

for (const [mode, statOnly] of modes) {
  test(`the native scan counts exactly the live members: not zombies, not processes of other groups${mode} [L3a.scan.advisory]`, async (t) => {
    binding.scanTestHook(0, statOnly);
    t.after(() => binding.scanTestHook());
    // Group A: three live members, one zombie member (`true` exits; its parent execs into sleep,
    // which never reaps it) and one child that left for a session (and group) of its own.
    const a = startGroup('/bin/true & setsid sleep 30 & sleep 30 & sleep 30 & exec sleep 30', t);
    // Group B: two live members, started alongside.
    const b = startGroup('sleep 30 & exec sleep 30', t);
    await waitFor(
      () => {
        const kids = childrenOf(a.pid);
        return (
          kids.length === 4 &&
          kids.filter((k) => k.state === 'Z').length === 1 &&
          kids.filter((k) => k.comm === 'sleep' && k.sid === k.pid).length === 1 &&
          childrenOf(b.pid).length === 1 &&
          procStat(a.pid).comm === 'sleep' &&
          procStat(b.pid).comm === 'sleep'
        );
      },
      { what: 'both groups in place' },
    );
    const outsider = childrenOf(a.pid).find((k) => k.sid === k.pid);
    assert.notEqual(outsider.pgid, a.pid);
    // The JavaScript reading of /proc agrees.
    assert.equal(liveMembers(a.pid).length, 3);

    assert.equal(await scanGroup(a.pid), 3);
    assert.equal(await scanGroup(b.pid), 2);
    const [n, witness] = binding.scanGroupSync(a.pid, 2 ** 31 - 1);
    assert.equal(n, 3);
    assert.ok(
      liveMembers(a.pid).some((m) => m.pid === witness),
      `the witness ${witness} is a live member`,
    );
    assert.equal(binding.groupMemberLive(a.pid, witness), 1);
    assert.equal(binding.groupMemberLive(a.pid, outsider.pid), 0, 'another group');
    const zombie = childrenOf(a.pid).find((k) => k.state === 'Z');
    assert.equal(binding.groupMemberLive(a.pid, zombie.pid), 0, 'a zombie');
    assert.equal(binding.groupMemberLive(b.pid, witness), 0);

    assert.equal(await scanGroup(a.pid, 2), 2, 'stops at the limit');
    process.kill(-a.pid, 'SIGKILL');
    await waitFor(async () => (await scanGroup(a.pid)) === 0, { what: 'group A to empty' });
    assert.equal(await scanGroup(b.pid), 2, 'group B untouched');
    assert.equal(binding.groupMemberLive(a.pid, witness), 0, 'a member gone');
  });

  test(`scanGroup reads a member whose command name holds spaces and parentheses${mode} [L3a.scan.advisory]`, async (t) => {
    binding.scanTestHook(0, statOnly);
    t.after(() => binding.scanTestHook());
    const dir = tmpDirFor(t);
    const odd = join(dir.path, 'a) Z 1 (b');
    symlinkSync('/bin/sleep', odd);
    const cp = spawn(odd, ['30'], { detached: true, stdio: 'ignore' });
    t.after(() => {
      try {
        process.kill(cp.pid, 'SIGKILL');
      } catch {}
    });
    await waitFor(() => procStat(cp.pid)?.comm === 'a) Z 1 (b', { what: 'the odd name' });
    assert.equal(await scanGroup(cp.pid), 1);
  });
}

test('a scan with the memory of the last one counts the same: zombies stay out, a member that dies drops out [L3a.scan.advisory]', async (t) => {
  const cp = startGroup('/bin/true & sleep 30 & sleep 30 & exec sleep 30', t);
  await waitFor(
    () => childrenOf(cp.pid).filter((k) => k.state === 'Z').length === 1 && liveMembers(cp.pid).length === 3,
    {
      what: 'three live members and a zombie',
    },
  );
  const memory = binding.createScanMemory();
  const max = 2 ** 31 - 1;
  assert.equal(binding.scanGroupSync(cp.pid, max, memory)[0], 3);
  assert.equal(binding.scanGroupSync(cp.pid, max, memory)[0], 3);
  assert.equal((await binding.scanGroup(cp.pid, max, memory))[0], 3);
  const victim = childrenOf(cp.pid).find((k) => k.state !== 'Z');
  process.kill(victim.pid, 'SIGKILL');
  await waitFor(() => procStat(victim.pid)?.state === 'Z', { what: 'the member to die' });
  assert.equal(binding.scanGroupSync(cp.pid, max, memory)[0], 2);
  assert.equal((await binding.scanGroup(cp.pid, 1, memory))[0], 1, 'stops at the limit');
  assert.equal(binding.scanGroupSync(cp.pid, max, memory)[0], 2);
});

test('an unreadable /proc makes the scan unknown, never empty [L3a.scan.unreadable]', async (t) => {
  const cp = startGroup('exec sleep 30', t);
  await waitFor(() => procStat(cp.pid)?.comm === 'sleep', { what: 'the member' });
  binding.scanTestHook(EACCES);
  try {
    assert.equal(await scanGroup(cp.pid), 'unknown');
    assert.deepEqual(binding.scanGroupSync(cp.pid, 1), [-EACCES, 0]);
    assert.equal(binding.groupMemberLive(cp.pid, cp.pid), -EACCES);
    // Even for a group with no member at all.
    process.kill(cp.pid, 'SIGKILL');
    await waitFor(() => procStat(cp.pid) === null || procStat(cp.pid).state === 'Z', { what: 'the member to die' });
    assert.equal(await scanGroup(cp.pid), 'unknown');
  } finally {
    binding.scanTestHook();
  }
  assert.equal(await scanGroup(cp.pid), 0);
});

// A group whose members all leave at once on SIGTERM, stopped with a long grace: the grace ends
// early only when the scan can show the group empty.
async function stopQuickGroup(grace) {
  const phases = [];
  const g = spawnGroup('sh', ['-c', 'sleep 30 & sleep 30 & wait'], { grace });
  const onPhase = (p) => p.pid === g.pid && phases.push(p);
  dc.subscribe(GROUP_CHANNEL, onPhase);
  try {
    await waitFor(() => liveMembers(g.pgid).length === 3, { what: 'three members' });
    const t0 = performance.now();
    const result = await g.stop();
    return { result, took: performance.now() - t0, ended: phases.find((p) => p.phase === 'grace-ended') };
  } finally {
    dc.unsubscribe(GROUP_CHANNEL, onPhase);
  }
}

test('a cleanup whose scan cannot read /proc counts members as possibly alive: the grace runs out and killed is true [L3a.scan.unreadable]', async () => {
  const grace = 600;
  // Control: readable, the scan shows the group empty and ends the grace early.
  const fast = await stopQuickGroup(grace);
  assert.equal(fast.ended.reason, 'empty');
  assert.equal(fast.result.killed, false);
  assert.ok(fast.took < grace, `the grace was not ended early: ${fast.took} ms`);

  binding.scanTestHook(EACCES);
  let slow;
  try {
    slow = await stopQuickGroup(grace);
  } finally {
    binding.scanTestHook();
  }
  assert.equal(slow.ended.reason, 'grace');
  assert.equal(slow.result.killed, true);
  assert.ok(slow.took >= grace - 5, `the grace was cut short: ${slow.took} ms`);
  assert.equal(slow.result.signal, 'SIGTERM');
});
