// `procpin sweep` (text and JSON reports) and `procpin wait` (any process, by pidfd; util-linux
// waitpid's rules for a pid that does not exist).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { need, procStat, procState, tmpDirFor, waitFor } from '../helpers.mjs';
import { pidfdCount, procpin, start } from './cli-helpers.mjs';
import { oldKernelBinary } from '../oldkernel.mjs';

/** A pid that named a process a moment ago and names none now. */
function deadPid() {
  return spawnSync('true').pid;
}

function sweepDir(dir) {
  const dead = deadPid();
  mkdirSync(join(dir, `job-${dead}`));
  writeFileSync(join(dir, `job-${dead}`, 'data'), 'x');
  writeFileSync(join(dir, `job-${process.pid}.lock`), '');
  writeFileSync(join(dir, 'job-abc'), '');
  writeFileSync(join(dir, `other-${dead}`), '');
  return dead;
}

test('sweep prints what it removed and what it kept, and why [CLI.sweep]', async (t) => {
  const dir = tmpDirFor(t);
  const dead = sweepDir(dir.path);
  const r = await procpin(['sweep', dir.path, '--prefix', 'job-']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 2, r.stdout);
  assert.match(lines[0], new RegExp(`^removed\\s+\\S*job-${dead}\\s+\\(pid ${dead} is dead\\)$`));
  assert.match(lines[1], new RegExp(`^kept\\s+\\S*job-${process.pid}\\.lock\\s+\\(pid ${process.pid}: alive\\)$`));
  assert.ok(!existsSync(join(dir.path, `job-${dead}`)));
  assert.ok(existsSync(join(dir.path, `job-${process.pid}.lock`)));
  assert.ok(existsSync(join(dir.path, 'job-abc')), 'not a candidate');
  assert.ok(existsSync(join(dir.path, `other-${dead}`)), 'another prefix');
});

test('sweep --dry-run says what it would remove and removes nothing [CLI.sweep]', async (t) => {
  const dir = tmpDirFor(t);
  const dead = sweepDir(dir.path);
  const r = await procpin(['sweep', dir.path, '--prefix', 'job-', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^would remove\\s+\\S*job-${dead}\\s`, 'm'));
  assert.ok(existsSync(join(dir.path, `job-${dead}`)));
});

test('sweep --json prints the report [CLI.sweep]', async (t) => {
  const dir = tmpDirFor(t);
  const dead = sweepDir(dir.path);
  const r = await procpin(['sweep', dir.path, '-p', 'job-', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(report, {
    removed: [{ name: `job-${dead}`, pid: dead }],
    kept: [{ name: `job-${process.pid}.lock`, pid: process.pid, reason: 'alive' }],
  });
});

test('sweep of a directory that cannot be read exits 1 with the error [CLI.sweep]', async (t) => {
  const dir = tmpDirFor(t);
  const missing = join(dir.path, 'missing');
  const r = await procpin(['sweep', missing, '--prefix', 'job-']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^procpin sweep: .*missing: ENOENT/);
  const j = await procpin(['sweep', missing, '--prefix', 'job-', '--json']);
  assert.equal(j.code, 1);
  const report = JSON.parse(j.stdout);
  assert.deepEqual([report.removed, report.kept], [[], []]);
  assert.equal(report.error.code, 'ENOENT');
  assert.match(report.error.message, /ENOENT/);
});

test('sweep refuses a prefix the library refuses, as a usage error [CLI.sweep]', async (t) => {
  const dir = tmpDirFor(t);
  const r = await procpin(['sweep', dir.path, '--prefix', 'a/b']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^procpin sweep: /);
});

function sleeper() {
  const c = spawn('sleep', ['30'], { stdio: 'ignore' });
  return c;
}

test('wait returns 0 once every named process has exited (processes procpin did not start) [CLI.wait]', async () => {
  const a = sleeper();
  const b = sleeper();
  const { child, result } = start(['wait', '--verbose', String(a.pid), String(b.pid)]);
  // Both pids are pinned by pidfds before anything ends.
  await waitFor(() => pidfdCount(child.pid) === 2, { what: 'two pidfds open in procpin wait' });
  a.kill('SIGKILL');
  await waitFor(() => pidfdCount(child.pid) === 1, { what: 'one pidfd left' });
  assert.equal(child.exitCode, null, 'still waiting for the second');
  b.kill('SIGKILL');
  const r = await result;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`PID ${a.pid} finished\\n.*PID ${b.pid} finished`, 's'));
});

test('wait exits 124 when the timeout expires first [CLI.wait]', async () => {
  const a = sleeper();
  try {
    const r = await procpin(['wait', '--timeout', '300ms', String(a.pid)]);
    assert.equal(r.code, 124);
    assert.ok(r.ms >= 300, `${r.ms} ms`);
    assert.equal(a.exitCode, null);
  } finally {
    a.kill('SIGKILL');
  }
});

test('wait counts a zombie as exited [CLI.wait]', async (t) => {
  // sh's background child exits once sh has become `sleep`, which never reaps it.
  const dir = tmpDirFor(t);
  const go = join(dir.path, 'go');
  const holder = spawn('sh', ['-c', `(while [ ! -e ${go} ]; do sleep 0.01; done) & echo $!; exec sleep 30`], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  try {
    const zombie = Number(await new Promise((resolve) => holder.stdout.once('data', resolve)));
    await waitFor(() => procStat(holder.pid)?.comm === 'sleep', { what: 'sh became sleep' });
    writeFileSync(go, '');
    await waitFor(() => procState(zombie) === 'Z', { what: 'zombie' });
    const r = await procpin(['wait', '--timeout', '5s', String(zombie)]);
    assert.equal(r.code, 0, r.stderr);
  } finally {
    holder.kill('SIGKILL');
  }
});

test('wait on a pid that names no process is an error, as util-linux waitpid has it [CLI.wait]', async () => {
  const dead = deadPid();
  const r = await procpin(['wait', String(dead)]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`^procpin wait: could not open PID ${dead}: ESRCH`));
});

test('wait --exited counts a pid that names no process as exited [CLI.wait]', async () => {
  const dead = deadPid();
  const r = await procpin(['wait', '--exited', '--verbose', String(dead)]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`PID ${dead} has exited, skipping`));
  assert.equal((await procpin(['wait', '-e', String(dead)])).stderr, '');
});

test('on a kernel without pidfds wait watches /proc: exit, timeout, and no such process [K.no-pidfd]', async (t) => {
  const wrapper = oldKernelBinary();
  if (!need(t, wrapper !== null, 'cc and seccomp for the old-kernel filter')) return;
  const a = sleeper();
  try {
    const timedOut = await start(['wait', '--timeout', '200ms', String(a.pid)], { input: '', wrapper: [wrapper] })
      .result;
    assert.equal(timedOut.code, 124, timedOut.stderr);
    // A process that ends by itself a second from now (procpin starts well within that).
    const b = spawn('sleep', ['1'], { stdio: 'ignore' });
    const r = await start(['wait', '--timeout', '10s', String(b.pid)], { input: '', wrapper: [wrapper] }).result;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.ms < 5000);
  } finally {
    a.kill('SIGKILL');
  }
  const missing = await start(['wait', String(deadPid())], { input: '', wrapper: [wrapper] }).result;
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /could not open PID \d+: ESRCH/);
});
