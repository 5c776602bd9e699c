// `procpin run`, headless (standard input is a pipe): every exit-status rule, the group cleaned
// after the leader, signals sent to procpin forwarded and followed by a cleanup with no survivor,
// the leader's parent-death signal when procpin is SIGKILLed, --verbose.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isGone, liveMembers, need, procStat, tmpDirFor, waitFor } from '../helpers.mjs';
import { compileC, oldKernelBinary } from '../oldkernel.mjs';
import { pendingSignals, procpin, start } from './cli-helpers.mjs';

/**
 * No live member of `pgid` is left, within a bound (a SIGKILLed member takes a moment to die). Wait
 * for procpin's 'exit', not its output's 'close', first: a survivor would hold the output open and
 * the 'close' would come only when it ends.
 */
function noSurvivor(pgid) {
  return waitFor(() => liveMembers(pgid).length === 0, { timeout: 2000, what: `no live member of group ${pgid}` });
}

test('exits 0 when the command exits 0 [CLI.run.status]', async () => {
  const r = await procpin(['run', '--', 'true']);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, '');
});

test("exits with the command's own status [CLI.run.status]", async () => {
  const r = await procpin(['run', '--', 'sh', '-c', 'exit 42']);
  assert.equal(r.code, 42);
  assert.equal((await procpin(['run', 'false'])).code, 1);
});

test('exits 128+N when signal N ended the command [CLI.run.status]', async () => {
  const r = await procpin(['run', '--', 'sh', '-c', 'kill -USR1 $$']);
  assert.equal(r.code, 128 + 10);
  assert.equal((await procpin(['run', '--', 'sh', '-c', 'kill -KILL $$'])).code, 137);
});

test('exits 124 when the timeout fired, after cleaning the group [CLI.run.status]', async () => {
  const { exited, line } = start(['run', '--timeout', '300ms', '--', 'sh', '-c', 'sleep 30 & echo $$; wait']);
  const pgid = Number(await line());
  const r = await exited;
  assert.equal(r.code, 124);
  assert.ok(r.ms >= 300 && r.ms < 10000, `${r.ms} ms`);
  await noSurvivor(pgid);
});

test('a command that ends before the timeout gives its own status [CLI.run.status]', async () => {
  const r = await procpin(['run', '--timeout', '20s', '--', 'sh', '-c', 'exit 7']);
  assert.equal(r.code, 7);
  assert.ok(r.ms < 10000);
});

test('exits 127 when the command is not found [CLI.run.status]', async () => {
  for (const cmd of ['procpin-no-such-command', '/nonexistent/procpin-test']) {
    const r = await procpin(['run', '--', cmd]);
    assert.equal(r.code, 127, r.stderr);
    assert.match(r.stderr, /not found.*ENOENT/);
  }
});

test('exits 126 when the command exists but cannot be executed [CLI.run.status]', async (t) => {
  const dir = tmpDirFor(t);
  const script = join(dir.path, 'not-executable');
  writeFileSync(script, '#!/bin/sh\nexit 0\n');
  chmodSync(script, 0o644);
  for (const cmd of [script, dir.path]) {
    const r = await procpin(['run', '--', cmd]);
    assert.equal(r.code, 126, `${cmd}: ${r.stderr}`);
    assert.match(r.stderr, /cannot run.*EACCES/);
  }
});

test('exits 125 when procpin itself fails [CLI.run.status]', async () => {
  // The addon cannot be loaded: procpin's failure, not the command's.
  const r = await procpin(['run', '--', 'true'], { env: { PROCPIN_BINDING: '/nonexistent/procpin.node' } });
  assert.equal(r.code, 125);
  assert.match(r.stderr, /^procpin: cannot load procpin/);
});

test('exits 125 when SIGCHLD is ignored: no group can be held [L2.sigchld.ignored]', async (t) => {
  const so = compileC('sigchld_ignore', { output: 'sigchld_ignore.so', shared: true });
  if (!need(t, so !== null, `cc: ${compileC.lastError}`)) return;
  const dir = tmpDirFor(t);
  // Node resets signal dispositions at startup: only native code loaded afterwards can make
  // SIGCHLD ignored (the library's load fails once its constructor has run).
  const preload = join(dir.path, 'ignore-sigchld.cjs');
  writeFileSync(preload, `try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}\n`);
  const r = await procpin(['run', '--', 'true'], { nodeArgs: ['--require', preload] });
  assert.equal(r.code, 125, r.stderr);
  assert.match(r.stderr, /ERR_PROCPIN_SIGCHLD_IGNORED|SIGCHLD/);
});

test('a failure inside procpin while the command runs still cleans the group, then exits 125 [CLI.run.status]', async (t) => {
  const dir = tmpDirFor(t);
  // Injected bug: an exception thrown from an event handler inside procpin, on SIGUSR2.
  const preload = join(dir.path, 'bug.cjs');
  writeFileSync(preload, "process.on('SIGUSR2', () => { throw new Error('injected bug'); });\n");
  const { child, exited, result, line } = start(['run', '--', 'sh', '-c', 'sleep 30 & echo $$; exec sleep 30'], {
    input: '',
    nodeArgs: ['--require', preload],
  });
  const pgid = Number(await line());
  await waitFor(() => liveMembers(pgid).length === 2, { what: 'two members' });
  child.kill('SIGUSR2');
  assert.equal((await exited).code, 125);
  await noSurvivor(pgid);
  assert.match((await result).stderr, /injected bug/);
});

test('on a kernel without pidfds the exit-status rules and the cleanup hold [K.no-pidfd]', async (t) => {
  const wrapper = oldKernelBinary();
  if (!need(t, wrapper !== null, 'cc and seccomp for the old-kernel filter')) return;
  const run = (args) => start(args, { input: '', wrapper: [wrapper] });
  const { exited, line } = run(['run', '--', 'sh', '-c', 'sleep 30 & echo $$; exit 3']);
  const pgid = Number(await line());
  assert.equal((await exited).code, 3);
  await noSurvivor(pgid);
  assert.equal((await run(['run', '--timeout', '200ms', '--', 'sleep', '10']).result).code, 124);
  assert.equal((await run(['run', '--', 'sh', '-c', 'kill -USR1 $$']).result).code, 138);
  assert.equal((await run(['run', '--', 'procpin-no-such-command']).result).code, 127);
});

test("the command's own options and arguments are passed untouched [CLI.run.io]", async () => {
  // Options stop at the first word of the command (as env and timeout do), with or without `--`.
  const r = await procpin(['run', 'sh', '-c', 'printf "%s|" "$@"', 'x', '--grace', '1s', '-h', '--']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, '--grace|1s|-h|--|');
  const r2 = await procpin(['run', '--grace', '1s', '--', 'sh', '-c', 'echo "$0"', '--help']);
  assert.equal(r2.stdout, '--help\n');
});

test('the command inherits standard input, output and error [CLI.run.io]', async () => {
  const r = await procpin(['run', '--', 'sh', '-c', 'cat; echo err >&2'], { input: 'hello\n' });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, 'hello\n');
  assert.equal(r.stderr, 'err\n');
});

test('the whole group is cleaned when the leader exits [L3a.exit.clean-then-reap]', async () => {
  const { exited, line } = start(['run', '--', 'sh', '-c', 'sleep 30 & echo $$; exit 3']);
  const pgid = Number(await line());
  const r = await exited;
  assert.equal(r.code, 3);
  await noSurvivor(pgid);
});

for (const [sig, n] of /** @type {Array<[NodeJS.Signals, number]>} */ ([
  ['SIGINT', 2],
  ['SIGTERM', 15],
  ['SIGHUP', 1],
])) {
  test(`${sig} sent to procpin is forwarded to the group, then no member survives (exit ${128 + n}) [CLI.run.forward]`, async () => {
    // Background jobs of a non-interactive sh ignore SIGINT (and the leader is sleep, which does
    // not): the cleanup after the forward must still end them.
    const { child, exited, line } = start([
      'run',
      '--grace',
      '2s',
      '--',
      'sh',
      '-c',
      'sleep 30 & sleep 30 & echo $$; exec sleep 30',
    ]);
    const pgid = Number(await line());
    // The leader is sleep (sh's SIGINT handling is not what is tested here).
    await waitFor(() => liveMembers(pgid).length === 3 && procStat(pgid)?.comm === 'sleep', {
      what: 'three members, the leader exec-ed',
    });
    child.kill(sig);
    const r = await exited;
    assert.equal(r.code, 128 + n, r.stderr);
    await noSurvivor(pgid);
  });
}

test('a leader that ignores the forwarded SIGTERM is killed after the grace: exit 137 [CLI.run.forward]', async () => {
  const { child, exited, line } = start([
    'run',
    '--grace',
    '300ms',
    '--',
    'sh',
    '-c',
    'trap "" TERM; echo $$; while :; do sleep 1; done',
  ]);
  const pgid = Number(await line());
  const t0 = Date.now();
  child.kill('SIGTERM');
  const r = await exited;
  assert.equal(r.code, 137, r.stderr);
  assert.ok(Date.now() - t0 >= 300, 'the grace was given');
  await noSurvivor(pgid);
});

test('--kill-signal chooses the signal the cleanup starts with [CLI.run.forward]', async (t) => {
  const dir = tmpDirFor(t);
  const mark = join(dir.path, 'got');
  // The leader exits; a member that handles SIGUSR1 records it and leaves.
  const r = await procpin([
    'run',
    '--kill-signal',
    'usr1',
    '--grace',
    '5s',
    '--',
    'sh',
    '-c',
    `(trap 'echo USR1 > ${mark}; exit 0' USR1; : > ${mark}.ready; while :; do sleep 0.05; done) &
     while [ ! -e ${mark}.ready ]; do sleep 0.01; done; exit 0`,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(readFileSync(mark, 'utf8'), 'USR1\n');
  assert.ok(r.ms < 5000, 'the member left at the kill signal, before the grace ran out');
});

test('when procpin is SIGKILLed the leader dies by its parent-death signal [CLI.run.parent-death]', async () => {
  const { child, exited, line } = start(['run', '--', 'sh', '-c', 'echo $$; exec sleep 30']);
  const leader = Number(await line());
  assert.equal(procStat(leader)?.ppid, child.pid);
  child.kill('SIGKILL');
  // 'exit', not 'close': a surviving leader would keep procpin's output open.
  assert.equal((await exited).signal, 'SIGKILL');
  await waitFor(() => isGone(leader), { timeout: 2000, what: `leader ${leader} gone or a zombie` });
});

test('with --no-parent-death the leader outlives a SIGKILLed procpin [CLI.run.parent-death]', async () => {
  const { child, exited, line } = start(['run', '--no-parent-death', '--', 'sh', '-c', 'echo $$; exec sleep 30']);
  const leader = Number(await line());
  try {
    child.kill('SIGKILL');
    assert.equal((await exited).signal, 'SIGKILL');
    // The parent-death signal is sent while the dying parent's children are reparented: once the
    // leader has a new parent, a SIGKILL would already be pending or done.
    await waitFor(() => procStat(leader)?.ppid !== child.pid, { what: 'leader reparented' });
    assert.ok(!isGone(leader), `leader state ${procStat(leader)?.state}`);
    assert.equal(pendingSignals(leader) & (1n << 8n), 0n, 'no SIGKILL pending');
  } finally {
    try {
      process.kill(leader, 'SIGKILL');
    } catch {}
  }
});

test('--verbose prints the cleanup phases on stderr [CLI.run.io]', async () => {
  const r = await procpin(['run', '--verbose', '--grace', '2s', '--', 'sh', '-c', 'sleep 30 & echo $$; exit 3']);
  assert.equal(r.code, 3);
  const pgid = Number(r.stdout.trim());
  const lines = r.stderr.trim().split('\n');
  for (const l of lines) assert.match(l, /^procpin: /);
  const phases = lines
    .map((l) => new RegExp(`^procpin: group ${pgid}: (\\S+(?: SIG\\w+)?)`).exec(l)?.[1])
    .filter(Boolean);
  // In order: the exit read, the kill signal, the final group SIGKILL, the reap, the release.
  const order = ['exited', 'signal SIGTERM', 'kill SIGKILL', 'reaped', 'released'].map((p) => phases.indexOf(p));
  assert.ok(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
    r.stderr,
  );
  assert.match(r.stderr, /grace-ended \(empty\)/);
});

test('without --verbose procpin prints nothing of its own [CLI.run.io]', async () => {
  const r = await procpin(['run', '--', 'sh', '-c', 'sleep 30 & exit 0']);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, '');
});

test('--verbose says when procpin forwards a signal [CLI.run.forward]', async () => {
  const { child, result, line } = start(['run', '--verbose', '--', 'sh', '-c', 'echo $$; exec sleep 30']);
  const leader = Number(await line());
  await waitFor(() => procStat(leader)?.comm === 'sleep', { what: 'the leader exec-ed' });
  child.kill('SIGINT');
  const r = await result;
  assert.equal(r.code, 130);
  assert.match(r.stderr, /procpin: received SIGINT: forwarding it to group \d+/);
});
