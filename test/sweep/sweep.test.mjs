// sweep(): the candidate grammar and the seven removal conditions, against real processes,
// real sockets, real locks held by other processes, in a temporary directory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { isRoot, need, pkg, procState, runNode, waitFor } from '../helpers.mjs';
import {
  deadPid,
  deadSocket,
  exists,
  holder,
  liveChild,
  lockHolder,
  names,
  scratch,
  keptReasons,
} from './sweep-fixtures.mjs';

const P = 'prefix-';

/**
 * Sweeps `dir` for `prefix` and asserts that nothing was removed and that exactly `kept` was kept,
 * as [name, reason] pairs in name order.
 * @param {string} dir
 * @param {string} prefix
 * @param {[string, string][]} kept
 */
async function sweepKeepsAll(dir, prefix, kept) {
  const r = await procpin.sweep(dir, { prefix });
  assert.deepEqual(r.removed, []);
  assert.deepEqual(keptReasons(r).sort(), kept);
}

test("a dead owner's non-empty directory, file and socket go; pid 1's, our own and a live child's entries stay [L3b.sweep.dead]", async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const child = liveChild();
  try {
    const dir = d.path;
    mkdirSync(join(dir, `${P}${dead}`, 'a', 'b'), { recursive: true });
    writeFileSync(join(dir, `${P}${dead}`, 'a', 'b', 'data'), 'x');
    writeFileSync(join(dir, `${P}${dead}`, 'top'), 'x');
    writeFileSync(join(dir, `${P}${dead}.lock`), 'x');
    await deadSocket(join(dir, `${P}${dead}-sock`));
    for (const pid of [1, process.pid, child.pid]) {
      mkdirSync(join(dir, `${P}${pid}`));
      writeFileSync(join(dir, `${P}${pid}`, 'data'), 'x');
      writeFileSync(join(dir, `${P}${pid}.lock`), 'x');
    }
    const r = await procpin.sweep(dir, { prefix: P });
    assert.equal(r.error, undefined);
    assert.deepEqual(names(r.removed), [`${P}${dead}`, `${P}${dead}-sock`, `${P}${dead}.lock`].sort());
    for (const e of r.removed) assert.equal(e.pid, dead);
    assert.deepEqual(
      names(r.kept),
      [1, process.pid, child.pid].flatMap((pid) => [`${P}${pid}`, `${P}${pid}.lock`]).sort(),
    );
    for (const e of r.kept) assert.equal(e.reason, 'alive');
    assert.deepEqual(
      readdirSync(dir).sort(),
      [1, process.pid, child.pid].flatMap((pid) => [`${P}${pid}`, `${P}${pid}.lock`]).sort(),
    );
    assert.equal(readFileSync(join(dir, `${P}${child.pid}`, 'data'), 'utf8'), 'x');
  } finally {
    await child.stop();
  }
});

test('names that are not candidates appear in neither list and are left untouched [L3b.sweep.grammar]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const others = [
    'prefix-abc',
    'prefix-12x',
    'prefix-007',
    'prefix-0',
    'prefix-',
    'prefix--5',
    'prefix-+5',
    'prefix- 5',
    'prefix-99999999999',
    `other-${dead}`,
    `xprefix-${dead}`,
    `prefix-${dead}x`,
    `prefix-${dead}_1`,
  ];
  for (const n of others) writeFileSync(join(d.path, n), 'x');
  const candidates = [`prefix-${dead}`, `prefix-${dead}-a`, `prefix-${dead}.b`, `prefix-${dead}-`];
  for (const n of candidates) writeFileSync(join(d.path, n), 'x');
  const r = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(names(r.removed), candidates.sort());
  assert.deepEqual(r.kept, []);
  assert.deepEqual(readdirSync(d.path).sort(), others.sort());
});

test('a symlink named like a dead owner is kept as a symlink and its target is untouched [L3b.sweep.type]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const target = join(d.path, 'target');
  mkdirSync(target);
  writeFileSync(join(target, 'precious'), 'x');
  writeFileSync(join(d.path, 'target-file'), 'x');
  symlinkSync(target, join(d.path, `${P}${dead}`));
  symlinkSync(join(d.path, 'target-file'), join(d.path, `${P}${dead}.f`));
  await sweepKeepsAll(d.path, P, [
    [`${P}${dead}`, 'symlink'],
    [`${P}${dead}.f`, 'symlink'],
  ]);
  assert.equal(readFileSync(join(target, 'precious'), 'utf8'), 'x');
  assert.equal(readFileSync(join(d.path, 'target-file'), 'utf8'), 'x');
});

test("a symlink inside a dead owner's directory is unlinked and does not take its target with it [L3b.sweep.type]", async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const outside = join(d.path, 'outside');
  mkdirSync(join(outside, 'sub'), { recursive: true });
  writeFileSync(join(outside, 'sub', 'precious'), 'x');
  writeFileSync(join(outside, 'file'), 'x');
  const entry = join(d.path, `${P}${dead}`);
  mkdirSync(join(entry, 'deep'), { recursive: true });
  symlinkSync(outside, join(entry, 'to-dir'));
  symlinkSync(join(outside, 'sub'), join(entry, 'deep', 'to-sub'));
  symlinkSync(join(outside, 'file'), join(entry, 'to-file'));
  const r = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(names(r.removed), [`${P}${dead}`]);
  assert.equal(exists(entry), false);
  assert.equal(readFileSync(join(outside, 'sub', 'precious'), 'utf8'), 'x');
  assert.equal(readFileSync(join(outside, 'file'), 'utf8'), 'x');
});

test('an entry owned by another uid is kept as not-owner [L3b.sweep.owner]', async (t) => {
  if (!need(t, isRoot, 'chown needs root')) return;
  const d = scratch(t);
  const dead = await deadPid();
  mkdirSync(join(d.path, `${P}${dead}`));
  writeFileSync(join(d.path, `${P}${dead}.x`), 'x');
  chownSync(join(d.path, `${P}${dead}`), 65534, 65534);
  chownSync(join(d.path, `${P}${dead}.x`), 65534, 65534);
  const r = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(r.removed, []);
  assert.deepEqual(
    r.kept.map((e) => e.reason),
    ['not-owner', 'not-owner'],
  );
  assert.equal(readdirSync(d.path).length, 2);
});

test('an entry whose lock a live process holds is kept as locked, and goes once that process exits [L3b.sweep.lock]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const dir = join(d.path, `${P}${dead}`);
  const file = join(d.path, `${P}${dead}.lock`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'data'), 'x');
  writeFileSync(file, 'x');
  const h1 = await lockHolder(dir, { dir: true });
  const h2 = await lockHolder(file);
  try {
    await sweepKeepsAll(d.path, P, [
      [`${P}${dead}`, 'locked'],
      [`${P}${dead}.lock`, 'locked'],
    ]);
    assert.equal(readFileSync(join(dir, 'data'), 'utf8'), 'x');
  } finally {
    await h1.kill();
    await h2.kill();
  }
  const r = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(names(r.removed), [`${P}${dead}`, `${P}${dead}.lock`]);
  assert.deepEqual(readdirSync(d.path), []);
});

test('a socket with a listener is kept as listening; one whose server was SIGKILLed goes [L3b.sweep.socket]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const live = join(d.path, `${P}${dead}-live.sock`);
  const gone = join(d.path, `${P}${dead}-gone.sock`);
  const server = net.createServer((s) => s.destroy());
  await new Promise((r) => server.listen(live, () => r(undefined)));
  await deadSocket(gone);
  try {
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(names(r.removed), [`${P}${dead}-gone.sock`]);
    assert.deepEqual(keptReasons(r), [[`${P}${dead}-live.sock`, 'listening']]);
    assert.equal(exists(live), true);
    assert.equal(exists(gone), false);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('a socket whose listen backlog is full still counts as a listener [L3b.sweep.socket]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const p = join(d.path, `${P}${dead}.sock`);
  // A listener that stops itself: nothing accepts, so a few connections fill its backlog and the
  // sweep's non-blocking connect gets EAGAIN.
  const h = await holder(`
await new Promise((r) => net.createServer().listen({ path: ${JSON.stringify(p)}, backlog: 1 }, r));
setImmediate(() => process.kill(process.pid, 'SIGSTOP'));`);
  const fillers = [];
  try {
    await waitFor(() => procState(h.pid) === 'T', { what: 'listener stopped' });
    for (let i = 0; i < 4; i++) {
      const s = net.connect(p);
      s.on('error', () => {});
      fillers.push(s);
    }
    await waitFor(() => fillers.some((s) => s.errored || s.destroyed), { what: 'backlog full' });
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(keptReasons(r), [[`${P}${dead}.sock`, 'listening']]);
  } finally {
    for (const s of fillers) s.destroy();
    await h.kill();
  }
});

test('a FIFO named like a dead owner is kept as unsupported-type [L3b.sweep.type]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const p = join(d.path, `${P}${dead}`);
  assert.equal(spawnSync('mkfifo', [p]).status, 0);
  const r = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(keptReasons(r), [[`${P}${dead}`, 'unsupported-type']]);
  assert.equal(exists(p), true);
});

test("a zombie's entry goes: a zombie counts as dead [L3b.sweep.dead]", async (t) => {
  const d = scratch(t);
  // procpin's own spawn leaves an exited child unreaped: a zombie until we reap it.
  const c = procpin.spawn('/bin/true', [], { stdio: 'ignore' });
  try {
    await c.exited;
    assert.equal(procState(c.pid), 'Z');
    writeFileSync(join(d.path, `${P}${c.pid}`), 'x');
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(names(r.removed), [`${P}${c.pid}`]);
    assert.equal(procState(c.pid), 'Z', 'the sweep looked, it did not reap');
  } finally {
    c.reap();
  }
});

test('an entry naming a live process of another user is kept: EPERM means alive [L3b.sweep.dead]', async (t) => {
  if (!need(t, isRoot, 'needs root to run the sweep as another user')) return;
  const d = scratch(t);
  chmodSync(d.path, 0o777);
  const dir = join(d.path, 'nobody');
  mkdirSync(dir);
  chownSync(dir, 65534, 65534);
  // Our pid: a live process of root, which nobody may not signal.
  writeFileSync(join(dir, `${P}${process.pid}`), 'x');
  chownSync(join(dir, `${P}${process.pid}`), 65534, 65534);
  const r = await runNode(
    `process.setgid(65534); process.setuid(65534);
const procpin = await import(${pkg});
const r = await procpin.sweep(${JSON.stringify(dir)}, { prefix: ${JSON.stringify(P)} });
console.log(JSON.stringify(r));`,
  );
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.deepEqual(keptReasons(report), [[`${P}${process.pid}`, 'alive']]);
  assert.equal(exists(join(dir, `${P}${process.pid}`)), true);
});
