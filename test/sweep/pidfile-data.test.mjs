// claimPidfile never destroys data: a file that is not a pidfile (neither empty nor one line
// holding a pid) is refused with ERR_PROCPIN_NOT_PIDFILE and left byte for byte; with
// `wait: true` a claim waits for the holder to let go, and an AbortSignal cancels that wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { tmpDirFor } from '../helpers.mjs';

const C = procpin.constants;

test('claimPidfile refuses a JSON document with ERR_PROCPIN_NOT_PIDFILE and leaves it byte for byte [L3b.pidfile.not-pidfile]', async (t) => {
  const dir = tmpDirFor(t);
  const cases = {
    'config.json': '{\n  "port": 8080,\n  "workers": 4\n}\n',
    'two-lines.pid': '123\n456\n',
    'word.pid': 'hello\n',
    'big.pid': `${'1'.repeat(64)}\n`,
  };
  for (const [name, content] of Object.entries(cases)) {
    const p = join(dir.path, name);
    writeFileSync(p, content);
    const before = statSync(p);
    const err = await procpin.claimPidfile(p).then(
      () => null,
      (e) => e,
    );
    assert.ok(err, `${name} was taken`);
    assert.equal(err.code, 'ERR_PROCPIN_NOT_PIDFILE', name);
    assert.equal(err.path, p);
    assert.equal(readFileSync(p, 'utf8'), content, `${name} is unchanged`);
    assert.equal(statSync(p).mtimeMs, before.mtimeMs, `${name} was not written`);
    // The refusal held no lock: another claimant is not told it is locked.
    const fd = openSync(p, 'r');
    assert.equal(procpin.tryLock(fd, 'exclusive'), true);
    closeSync(fd);
  }
});

test('claimPidfile still takes an empty file and a stale one holding a pid [L3b.pidfile.lock]', async (t) => {
  const dir = tmpDirFor(t);
  for (const [name, content] of [
    ['empty.pid', ''],
    ['stale.pid', '999999\n'],
    ['bare.pid', '42'],
  ]) {
    const p = join(dir.path, name);
    writeFileSync(p, content);
    const pf = await procpin.claimPidfile(p);
    assert.equal(readFileSync(p, 'utf8'), `${process.pid}\n`);
    await pf.release();
  }
});

test('claimPidfile with wait: true waits for the holder to let go, and an abort cancels the wait [L3b.pidfile.wait]', async (t) => {
  const dir = tmpDirFor(t);
  const p = join(dir.path, 'app.pid');
  writeFileSync(p, '1\n');
  const holder = openSync(p, 'r');
  procpin.flockSync(holder, C.LOCK_EX);
  // Without wait: locked.
  await assert.rejects(procpin.claimPidfile(p), { code: 'ERR_PROCPIN_LOCKED', pid: process.pid });
  // An abort: AbortError, the file untouched.
  const ac = new AbortController();
  const aborted = procpin.claimPidfile(p, { wait: true, signal: ac.signal });
  setTimeout(() => ac.abort(), 30);
  await assert.rejects(aborted, { name: 'AbortError', code: 'ABORT_ERR' });
  assert.equal(readFileSync(p, 'utf8'), '1\n');
  // A wait is granted once the holder lets go.
  const waiting = procpin.claimPidfile(p, { wait: true });
  let settled = false;
  waiting.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(settled, false, 'still waiting while held');
  procpin.flockSync(holder, C.LOCK_UN);
  const pf = await waiting;
  assert.equal(readFileSync(p, 'utf8'), `${process.pid}\n`);
  assert.equal(procpin.tryLock(holder, 'exclusive'), false, 'the claim holds the lock');
  await pf.release();
  closeSync(holder);
});

test('claimPidfile refuses bad options before touching the file [C.args.reject]', async () => {
  // @ts-expect-error wait must be a boolean: a number is refused
  await assert.rejects(procpin.claimPidfile('/nonexistent/x.pid', { wait: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
  // @ts-expect-error not an AbortSignal: it must be refused
  await assert.rejects(procpin.claimPidfile('/nonexistent/x.pid', { signal: {} }), { code: 'ERR_INVALID_ARG_TYPE' });
  // @ts-expect-error a misspelt option: it must be refused
  await assert.rejects(procpin.claimPidfile('/nonexistent/x.pid', { wiat: true }), { code: 'ERR_INVALID_ARG_VALUE' });
});
