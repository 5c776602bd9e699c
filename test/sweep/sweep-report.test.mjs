// sweep(): what it reports (dryRun, per-entry errors, the diagnostics channel), the lock
// authority, its descriptors, its argument checks and the candidate grammar as a property.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as dc from 'node:diagnostics_channel';
import { chmodSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { fdTarget, isRoot, need, openFds, pkg, runNode } from '../helpers.mjs';
import { deadPid, deadSocket, exists, holder, lockHolder, names, scratch, keptReasons } from './sweep-fixtures.mjs';

const P = 'prefix-';

test('dryRun removes nothing but reports what would go, and why the rest stays [L3b.sweep.dry-run]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  mkdirSync(join(d.path, `${P}${dead}`));
  writeFileSync(join(d.path, `${P}${dead}`, 'x'), 'x');
  writeFileSync(join(d.path, `${P}${dead}.f`), 'x');
  await deadSocket(join(d.path, `${P}${dead}.sock`));
  writeFileSync(join(d.path, `${P}1`), 'x');
  const before = readdirSync(d.path).sort();
  const r = await procpin.sweep(d.path, { prefix: P, dryRun: true });
  assert.deepEqual(names(r.removed), [`${P}${dead}`, `${P}${dead}.f`, `${P}${dead}.sock`]);
  assert.deepEqual(keptReasons(r), [[`${P}1`, 'alive']]);
  assert.deepEqual(readdirSync(d.path).sort(), before);
  assert.deepEqual(readdirSync(join(d.path, `${P}${dead}`)), ['x']);
  const real = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(names(real.removed), names(r.removed));
});

test('an unreadable or missing directory yields an empty report with its error [L3b.sweep.report]', async (t) => {
  const missing = await procpin.sweep('/nonexistent/procpin', { prefix: P });
  assert.deepEqual(missing.removed, []);
  assert.deepEqual(missing.kept, []);
  assert.equal(missing.error.code, 'ENOENT');
  assert.equal(missing.error.syscall, 'open');
  assert.equal(missing.error.path, '/nonexistent/procpin');

  const d = scratch(t);
  writeFileSync(join(d.path, 'file'), 'x');
  const notDir = await procpin.sweep(join(d.path, 'file'), { prefix: P });
  assert.equal(notDir.error.code, 'ENOTDIR');

  if (!need(t, isRoot, 'needs root to sweep as another user')) return;
  const locked = join(d.path, 'locked');
  mkdirSync(locked, { mode: 0o700 });
  writeFileSync(join(locked, `${P}${await deadPid()}`), 'x');
  chmodSync(d.path, 0o755);
  const r = await runNode(
    `process.setgid(65534); process.setuid(65534);
const procpin = await import(${pkg});
const r = await procpin.sweep(${JSON.stringify(locked)}, { prefix: ${JSON.stringify(P)} });
console.log(JSON.stringify({ removed: r.removed, kept: r.kept, code: r.error?.code, syscall: r.error?.syscall }));`,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { removed: [], kept: [], code: 'EACCES', syscall: 'open' });
  assert.equal(readdirSync(locked).length, 1);
});

test('per-entry trouble is reported as an error on the entry, never thrown [L3b.sweep.report]', async (t) => {
  if (!need(t, isRoot, 'needs root to sweep as another user')) return;
  const d = scratch(t);
  const dead = await deadPid();
  // A dead owner's directory holding a subdirectory it may not write: its contents cannot be
  // unlinked. Run as nobody so that permissions apply.
  chmodSync(d.path, 0o755);
  const base = join(d.path, 'base');
  mkdirSync(base);
  const entry = join(base, `${P}${dead}`);
  mkdirSync(join(entry, 'ro'), { recursive: true });
  writeFileSync(join(entry, 'ro', 'f'), 'x');
  spawnSync('chown', ['-R', '65534:65534', base]);
  chmodSync(join(entry, 'ro'), 0o500);
  const r = await runNode(
    `process.setgid(65534); process.setuid(65534);
const procpin = await import(${pkg});
const r = await procpin.sweep(${JSON.stringify(base)}, { prefix: ${JSON.stringify(P)} });
console.log(JSON.stringify(r.kept.map((e) => [e.name, e.reason, e.error?.code, e.error?.syscall, e.error?.path])));`,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [[`${P}${dead}`, 'error', 'EACCES', 'unlinkat', entry]]);
  assert.equal(exists(join(entry, 'ro', 'f')), true);
});

test("authority 'lock' removes an unlocked entry whatever its pid says and keeps a locked one [L3b.sweep.lock]", async (t) => {
  const d = scratch(t);
  const c = await procpin.claim(d.path, P);
  const cf = await procpin.claim(d.path, P, { kind: 'file' });
  try {
    // Looks like pid 1's (alive) but nobody holds its lock: made by a claimant that is gone.
    mkdirSync(join(d.path, `${P}1-0123456789ab`));
    writeFileSync(join(d.path, `${P}${process.pid}-ba9876543210`), '');
    const byPid = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(byPid.removed, []);
    const r = await procpin.sweep(d.path, { prefix: P, authority: 'lock' });
    assert.deepEqual(names(r.removed), [`${P}1-0123456789ab`, `${P}${process.pid}-ba9876543210`].sort());
    assert.deepEqual(
      r.kept.map((e) => e.reason),
      ['locked', 'locked'],
    );
    assert.equal(exists(c.path), true);
    assert.equal(exists(cf.path), true);
  } finally {
    await c.release();
    await cf.release();
  }
});

test('each decision is published on the procpin:sweep diagnostics channel [C.diag.sweep]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  writeFileSync(join(d.path, `${P}${dead}`), 'x');
  writeFileSync(join(d.path, `${P}1`), 'x');
  writeFileSync(join(d.path, 'prefix-abc'), 'x');
  const seen = [];
  const onMessage = (m) => seen.push(m);
  dc.subscribe('procpin:sweep', onMessage);
  try {
    await procpin.sweep(d.path, { prefix: P, dryRun: true });
    await procpin.sweep(d.path, { prefix: P });
  } finally {
    dc.unsubscribe('procpin:sweep', onMessage);
  }
  const key = (m) => `${m.dryRun ? 'dry ' : ''}${m.action} ${m.name}`;
  assert.deepEqual(seen.map(key).sort(), [
    `dry kept ${P}1`,
    `dry removed ${P}${dead}`,
    `kept ${P}1`,
    `removed ${P}${dead}`,
  ]);
  const kept = seen.find((m) => m.action === 'kept' && !m.dryRun);
  assert.deepEqual(kept, { dir: d.path, name: `${P}1`, pid: 1, action: 'kept', reason: 'alive' });
  const removed = seen.find((m) => m.action === 'removed' && !m.dryRun);
  assert.deepEqual(removed, { dir: d.path, name: `${P}${dead}`, pid: dead, action: 'removed' });
  assert.equal(procpin.SWEEP_CHANNEL, 'procpin:sweep');
});

test('sweeping leaves no descriptor open, whatever the entries [L3b.sweep.report]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  writeFileSync(join(d.path, 'held'), '');
  const h = await lockHolder(join(d.path, 'held'));
  // The listener lives in another process: the connection a sweep makes to it (and that it
  // accepts) must not be counted here.
  const listener = await holder(
    `await new Promise((r) => net.createServer((s) => s.destroy()).listen(${JSON.stringify(join(d.path, `${P}${dead}-live`))}, r));`,
  );
  try {
    // Warm up whatever node opens lazily (threadpool, fs), then compare.
    await procpin.sweep(d.path, { prefix: P });
    const before = openFds();
    for (let round = 0; round < 3; round++) {
      mkdirSync(join(d.path, `${P}${dead}-d${round}`, 'a'), { recursive: true });
      writeFileSync(join(d.path, `${P}${dead}-f${round}`), 'x');
      writeFileSync(join(d.path, `${P}1-${round}`), 'x');
      symlinkSync('/', join(d.path, `${P}${dead}-l${round}`));
      await deadSocket(join(d.path, `${P}${dead}-s${round}`));
      await procpin.sweep(d.path, { prefix: P, dryRun: true });
      await procpin.sweep(d.path, { prefix: P });
      await procpin.sweep('/nonexistent', { prefix: P });
    }
    // The lock holder's file, named as a candidate.
    const { renameSync } = await import('node:fs');
    renameSync(join(d.path, 'held'), join(d.path, `${P}${dead}-held`));
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.ok(r.kept.some((e) => e.reason === 'locked'));
    assert.ok(r.kept.some((e) => e.reason === 'listening'));
    // Other tests' children may still be closing their pipes: nothing new may be open, and
    // nothing may point into the swept directory.
    const leaked = openFds().filter((fd) => !before.includes(fd) || (fdTarget(fd) ?? '').startsWith(d.path));
    assert.deepEqual(
      leaked.map((fd) => [fd, fdTarget(fd)]),
      [],
    );
  } finally {
    await h.kill();
    await listener.kill();
  }
});

test('bad arguments reject (never throw) with Node-style codes [C.args.reject]', async () => {
  /** @type {Array<[() => Promise<unknown>, string]>} */
  const cases = [
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.sweep(1, { prefix: P }), 'ERR_INVALID_ARG_TYPE'],
    [() => procpin.sweep('', { prefix: P }), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.sweep('/tmp\0x', { prefix: P }), 'ERR_INVALID_ARG_VALUE'],
    // @ts-expect-error too few arguments, on purpose: the call must be refused
    [() => procpin.sweep('/tmp'), 'ERR_INVALID_ARG_TYPE'],
    [() => procpin.sweep('/tmp', null), 'ERR_INVALID_ARG_TYPE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.sweep('/tmp', {}), 'ERR_INVALID_ARG_TYPE'],
    [() => procpin.sweep('/tmp', { prefix: '' }), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.sweep('/tmp', { prefix: 'a/b' }), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.sweep('/tmp', { prefix: 'a\0b' }), 'ERR_INVALID_ARG_VALUE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.sweep('/tmp', { prefix: 5 }), 'ERR_INVALID_ARG_TYPE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.sweep('/tmp', { prefix: P, dryRun: 'yes' }), 'ERR_INVALID_ARG_TYPE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.sweep('/tmp', { prefix: P, authority: 'name' }), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.claim('/tmp', ''), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.claim('/tmp', 'a/'), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.claim(null, P), 'ERR_INVALID_ARG_TYPE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.claim('/tmp', P, { kind: 'socket' }), 'ERR_INVALID_ARG_VALUE'],
    [() => procpin.claim('/tmp', P, { mode: -1 }), 'ERR_OUT_OF_RANGE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.claim('/tmp', P, { mode: '700' }), 'ERR_INVALID_ARG_TYPE'],
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    [() => procpin.claimPidfile(7), 'ERR_INVALID_ARG_TYPE'],
    [() => procpin.claimPidfile(''), 'ERR_INVALID_ARG_VALUE'],
  ];
  for (const [call, code] of cases) {
    /** @type {Promise<unknown> | undefined} */
    let p;
    assert.doesNotThrow(() => {
      p = call();
    });
    await assert.rejects(p, (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, code, String(call));
      return true;
    });
  }
});

test('the candidate grammar matches its definition on arbitrary names (property) [L3b.sweep.grammar]', async (t) => {
  const fc = (await import('fast-check')).default;
  const d = scratch(t);
  const INT32_MAX = 2 ** 31 - 1;
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Names built from the characters that matter: digits (zero included), separators, letters,
  // signs, and the prefix's own characters.
  const prefixArb = fc.stringMatching(/^[a-z0-9._+-]{1,6}$/);
  const tailArb = fc
    .array(fc.constantFrom('0', '1', '2', '9', '-', '.', 'x', '+', ' ', '_'), { maxLength: 14 })
    .map((a) => a.join(''));
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(prefixArb, fc.uniqueArray(tailArb, { minLength: 1, maxLength: 40 }), async (prefix, tails) => {
      const dir = join(d.path, String(runs++));
      mkdirSync(dir);
      const all = new Set();
      for (const tail of tails) {
        const name = prefix + tail;
        if (name === '.' || name === '..' || all.has(name)) continue;
        all.add(name);
        writeFileSync(join(dir, name), '');
      }
      // A decoy with another prefix (judged by the same definition).
      all.add(`other${prefix}1`);
      writeFileSync(join(dir, `other${prefix}1`), '');
      const re = new RegExp(`^${escape(prefix)}([1-9][0-9]*)(?:$|[-.])`);
      const expected = [...all]
        .filter((n) => {
          const m = re.exec(n);
          return m !== null && Number(m[1]) <= INT32_MAX;
        })
        .sort();
      const r = await procpin.sweep(dir, { prefix, dryRun: true });
      const got = [...r.removed, ...r.kept].map((e) => e.name).sort();
      assert.deepEqual(got, expected, `prefix ${JSON.stringify(prefix)}`);
      for (const e of [...r.removed, ...r.kept]) assert.equal(e.pid, Number(re.exec(String(e.name))[1]));
    }),
    { numRuns: 60 },
  );
});
