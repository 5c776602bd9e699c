// Exhaustion: a full descriptor table (RLIMIT_NOFILE lowered with prlimit) and a pid limit (a
// pids cgroup at its maximum) during spawn, sweep, claim and group cleanup: a clear error, no
// descriptor leaked, no half-made child, and a group that is stopped is always killed. The work
// runs in child processes (test/fixtures/reliab-exhaust.mjs) so the limits are theirs alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { exitedZero, isRoot, need, root, tmpDirFor } from '../helpers.mjs';
import { runCmd } from '../fixtures/reliab-lib.mjs';

const ready = typeof procpin.spawnGroup === 'function' && typeof procpin.sweep === 'function';
const script = join(root, 'test', 'fixtures', 'reliab-exhaust.mjs');
const pkgPath = join(root, 'dist', 'index.js');

test('with the descriptor table full, spawn, sweep, claim and group cleanup fail clearly or succeed, and leak nothing [L3b.sweep.report]', async (t) => {
  if (!need(t, ready, 'spawn, spawnGroup and sweep are not built yet')) return;
  const dir = tmpDirFor(t, 'procpin-emfile-');
  const r = await runCmd('prlimit', ['--nofile=128:128', process.execPath, script, pkgPath, 'emfile', dir.path], {
    timeout: 120000,
  });
  const out = JSON.parse(exitedZero(r).trim().split('\n').pop());
  t.diagnostic(out.findings.join('; '));
  assert.deepEqual(out.problems, []);
  // The table really was full: the first attempts failed with EMFILE, later ones succeeded.
  assert.ok(
    out.findings.some((f) => /^spawn pipes k=0: EMFILE$/.test(f)),
    out.findings.join('\n'),
  );
  assert.ok(
    out.findings.some((f) => /^spawn pipes k=8: ok$/.test(f)),
    out.findings.join('\n'),
  );
  assert.ok(
    out.findings.some((f) => /^sweep k=0: EMFILE/.test(f)),
    out.findings.join('\n'),
  );
});

test('at a pid limit, spawn gets EAGAIN and leaks nothing, and a group that fills the limit is still killed [L3a.final-sigkill]', async (t) => {
  if (!need(t, ready, 'spawn, spawnGroup and sweep are not built yet')) return;
  if (!need(t, isRoot && existsSync('/sys/fs/cgroup/pids/cgroup.procs'), 'needs root and the pids cgroup controller'))
    return;
  const dir = tmpDirFor(t, 'procpin-eagain-');
  const r = await runCmd(process.execPath, [script, pkgPath, 'eagain', dir.path], { timeout: 120000 });
  const out = JSON.parse(exitedZero(r).trim().split('\n').pop());
  t.diagnostic(out.findings.join('; '));
  assert.deepEqual(out.problems, []);
  assert.ok(out.findings.includes('spawn at the pid limit k=8: EAGAIN'), out.findings.join('\n'));
  assert.ok(out.findings.includes('spawnGroup at the pid limit k=8: EAGAIN'), out.findings.join('\n'));
  assert.ok(out.findings.some((f) => /^group at the pid limit .*: 0 survivors/.test(f)));
});
