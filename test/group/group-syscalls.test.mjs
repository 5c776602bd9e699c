// SPEC Layer 3a, read in the kernel's record of the supervisor's syscalls (strace): a group signal
// goes through the leader's pidfd with PIDFD_SIGNAL_PROCESS_GROUP where the kernel has it, and by
// kill(-pgid) otherwise (PROCPIN_NO_PIDFD_GROUP=1 forces that path here), and never after the
// reap that frees the number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { need, pkg, runCmd, tmpDirFor } from '../helpers.mjs';

const hasStrace = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;

const script = `
import { spawnGroup, groupSignalsUsePidfd } from ${pkg};
const g = spawnGroup('sh', ['-c', 'sleep 30 & exit 0'], { stdio: 'ignore', grace: 2000 });
await g.closed;
console.log(JSON.stringify({ pgid: g.pgid, pidfd: groupSignalsUsePidfd() }));
`;

/** The group's signals and its leader's reap, in the order the kernel saw them. */
async function traced(t, env) {
  const dir = tmpDirFor(t, 'procpin-strace-');
  const log = join(dir.path, 'trace');
  const r = await runCmd(
    'strace',
    [
      '-f',
      '-qq',
      '-o',
      log,
      '-e',
      'trace=kill,pidfd_send_signal,waitid',
      process.execPath,
      '--input-type=module',
      '-e',
      script,
    ],
    { env, timeout: 60000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const { pgid, pidfd } = JSON.parse(r.stdout.trim().split('\n').at(-1));
  const events = [];
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (new RegExp(`kill\\(-${pgid}, `).test(line)) events.push('kill(-pgid)');
    else if (/pidfd_send_signal\(.*(PIDFD_SIGNAL_PROCESS_GROUP|0x4)\)/.test(line)) events.push('pidfd-group');
    // The reaping wait: WEXITED without WNOWAIT that returned the leader.
    else if (/waitid\(/.test(line) && !/WNOWAIT/.test(line) && line.includes(`si_pid=${pgid}`)) events.push('reap');
  }
  return { pidfd, events };
}

function check({ pidfd, events }, path) {
  const sends = events.filter((e) => e !== 'reap');
  assert.ok(sends.length >= 3, `group signals: ${events}`);
  assert.deepEqual([...new Set(sends)], [path], `every group signal went by ${path}: ${events}`);
  const reap = events.indexOf('reap');
  assert.ok(reap > 0, `the leader's reap is in the record: ${events}`);
  assert.deepEqual(events.slice(reap + 1), [], 'nothing was sent to the group after the reap');
  return pidfd;
}

test('where the kernel binds group signals to a pidfd, the cleanup sends every one by pidfd_send_signal(PIDFD_SIGNAL_PROCESS_GROUP) and none by kill(-pgid) [L3a.signal.pidfd-group]', async (t) => {
  if (!need(t, hasStrace, 'strace is not installed')) return;
  const r = await traced(t, {});
  if (!r.pidfd) {
    // A kernel without PIDFD_SIGNAL_PROCESS_GROUP (< 6.9): the number path, checked below.
    check(r, 'kill(-pgid)');
    return;
  }
  check(r, 'pidfd-group');
});

test('with group signals forced through the number, the cleanup sends every one by kill(-pgid) before the reap [L3a.signal.pidfd-group]', async (t) => {
  if (!need(t, hasStrace, 'strace is not installed')) return;
  const r = await traced(t, { PROCPIN_NO_PIDFD_GROUP: '1' });
  assert.equal(r.pidfd, false);
  check(r, 'kill(-pgid)');
});
