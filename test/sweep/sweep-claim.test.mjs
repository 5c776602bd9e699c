// claim() and claimPidfile(): the owner's side. Entries are created exclusively and locked on an
// O_CLOEXEC descriptor; release removes, then unlocks; a pidfile's lock is the truth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { fdTarget, isRoot, need, openFds, pkg, waitFor } from '../helpers.mjs';
import { deadPid, exists, holder, names, scratch, keptReasons } from './sweep-fixtures.mjs';

const P = 'app-';

function fdFlags(fd) {
  const m = /flags:\s+([0-7]+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
  return parseInt(m[1], 8);
}
const O_CLOEXEC = 0o2000000;

test('claim sweeps first, then creates prefix<pid>-<random> exclusively, locked on an O_CLOEXEC descriptor [L3b.claim.create]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  mkdirSync(join(d.path, `${P}${dead}-0123456789ab`));
  const c = await procpin.claim(d.path, P);
  try {
    assert.deepEqual(names(c.swept.removed), [`${P}${dead}-0123456789ab`]);
    assert.match(c.path, new RegExp(`/${P}${process.pid}-[0-9a-f]{12}$`));
    assert.equal(c.kind, 'directory');
    const st = statSync(c.path);
    assert.ok(st.isDirectory());
    assert.equal(st.mode & 0o7777, 0o700);
    assert.equal(fdTarget(c.fd), c.path);
    assert.ok(fdFlags(c.fd) & O_CLOEXEC, 'the lock descriptor is close-on-exec');
    // Held: a tryLock through another open of the same inode fails.
    const { openSync, closeSync } = await import('node:fs');
    const other = openSync(c.path, 'r');
    try {
      assert.equal(procpin.tryLock(other, 'exclusive'), false);
    } finally {
      closeSync(other);
    }
    const r = await procpin.sweep(d.path, { prefix: P, authority: 'lock' });
    assert.deepEqual(keptReasons(r), [[c.path.slice(d.path.length + 1), 'locked']]);
  } finally {
    await c.release();
  }
  assert.equal(exists(c.path), false);
  assert.equal(c.fd, -1);
});

test('a file claim is created with mode 0600 (or the mode asked for, exactly), and a child does not inherit its lock [L3b.claim.create]', async (t) => {
  const d = scratch(t);
  const c = await procpin.claim(d.path, P, { kind: 'file' });
  const c2 = await procpin.claim(d.path, P, { kind: 'file', mode: 0o640 });
  const c3 = await procpin.claim(d.path, P, { mode: 0o750 });
  try {
    assert.ok(statSync(c.path).isFile());
    assert.equal(statSync(c.path).mode & 0o7777, 0o600);
    assert.equal(statSync(c2.path).mode & 0o7777, 0o640);
    assert.equal(statSync(c3.path).mode & 0o7777, 0o750);
    // A child process started now sees no descriptor of ours: it could not keep the lock alive.
    const child = spawn('sh', ['-c', 'ls -l /proc/$$/fd'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (x) => (out += x));
    await once(child, 'close');
    assert.ok(!out.includes(c.path), out);
  } finally {
    await Promise.all([c.release(), c2.release(), c3.release()]);
  }
  assert.deepEqual(readdirSync(d.path), []);
});

test('release removes the entry with its contents, then unlocks; it is idempotent [L3b.claim.release]', async (t) => {
  const d = scratch(t);
  const c = await procpin.claim(d.path, P);
  mkdirSync(join(c.path, 'a', 'b'), { recursive: true });
  writeFileSync(join(c.path, 'a', 'b', 'f'), 'x');
  symlinkSync('/etc', join(c.path, 'etc'));
  const p1 = c.release();
  const p2 = c.release();
  assert.equal(p1, p2);
  await p1;
  await c[Symbol.asyncDispose]();
  assert.equal(exists(c.path), false);
  assert.ok(exists('/etc/hostname') || exists('/etc/passwd'));
});

test('release of an entry someone already removed resolves; of one replaced by another inode rejects and leaves it [L3b.claim.release]', async (t) => {
  const d = scratch(t);
  const gone = await procpin.claim(d.path, P, { kind: 'file' });
  const { rmSync, renameSync } = await import('node:fs');
  rmSync(gone.path);
  await gone.release();
  const swapped = await procpin.claim(d.path, P, { kind: 'file' });
  renameSync(swapped.path, `${swapped.path}.old`);
  writeFileSync(swapped.path, 'not ours');
  await assert.rejects(swapped.release(), { code: 'ESTALE' });
  assert.equal(readFileSync(swapped.path, 'utf8'), 'not ours');
  assert.equal(swapped.fd, -1);
});

test('claim creates a missing directory with mode 0700 [L3b.claim.create]', async (t) => {
  const d = scratch(t);
  const dir = join(d.path, 'a', 'b');
  const c = await procpin.claim(dir, P);
  try {
    assert.equal(statSync(dir).mode & 0o7777, 0o700);
  } finally {
    await c.release();
  }
});

test('claim refuses a directory writable by all without the sticky bit, and one owned by another user [L3b.claim.unsafe-dir]', async (t) => {
  const d = scratch(t);
  const open = join(d.path, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  await assert.rejects(procpin.claim(open, P), (/** @type {import('procpin').ProcpinSystemError} */ err) => {
    assert.equal(err.code, 'ERR_PROCPIN_UNSAFE_DIR');
    assert.equal(err.path, open);
    return true;
  });
  assert.deepEqual(readdirSync(open), []);
  const sticky = join(d.path, 'sticky');
  mkdirSync(sticky);
  chmodSync(sticky, 0o1777);
  const c = await procpin.claim(sticky, P);
  await c.release();
  if (!need(t, isRoot, 'chown needs root')) return;
  const theirs = join(d.path, 'theirs');
  mkdirSync(theirs);
  chownSync(theirs, 65534, 65534);
  await assert.rejects(procpin.claim(theirs, P), { code: 'ERR_PROCPIN_UNSAFE_DIR' });
  assert.deepEqual(readdirSync(theirs), []);
});

test('claim and release leave no descriptor open [L3b.claim.release]', async (t) => {
  const d = scratch(t);
  await (await procpin.claim(d.path, P)).release();
  const before = openFds();
  for (let i = 0; i < 20; i++) {
    const c = await procpin.claim(d.path, P, { kind: i % 2 ? 'file' : 'directory' });
    await c.release();
  }
  const pf = await procpin.claimPidfile(join(d.path, 'x.pid'));
  await assert.rejects(procpin.claimPidfile(join(d.path, 'x.pid')), { code: 'ERR_PROCPIN_LOCKED' });
  await pf.release();
  const leaked = openFds().filter((fd) => !before.includes(fd) || (fdTarget(fd) ?? '').startsWith(d.path));
  assert.deepEqual(
    leaked.map((fd) => [fd, fdTarget(fd)]),
    [],
  );
});

test('claimPidfile takes a free pidfile and writes our pid; release unlinks it [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = join(d.path, 'app.pid');
  const pf = await procpin.claimPidfile(p);
  assert.equal(pf.path, p);
  assert.equal(readFileSync(p, 'utf8'), `${process.pid}\n`);
  assert.ok(fdFlags(pf.fd) & O_CLOEXEC);
  await pf.release();
  await pf.release();
  assert.equal(exists(p), false);
});

test('claimPidfile under contention rejects with ERR_PROCPIN_LOCKED and the holder pid [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = join(d.path, 'app.pid');
  const h = await holder(`globalThis.pf = await procpin.claimPidfile(${JSON.stringify(p)});`);
  try {
    await assert.rejects(procpin.claimPidfile(p), (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, 'ERR_PROCPIN_LOCKED');
      assert.equal(err.pid, h.pid);
      assert.equal(err.path, p);
      assert.match(err.message, new RegExp(`locked by pid ${h.pid}`));
      return true;
    });
    assert.equal(readFileSync(p, 'utf8'), `${h.pid}\n`);
  } finally {
    await h.kill();
  }
});

test('a holder that has locked but not written yet is named from /proc/locks [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = join(d.path, 'app.pid');
  // Locks an empty file and writes nothing: only the kernel knows the holder.
  const h = await holder(`const fd = fs.openSync(${JSON.stringify(p)}, 'w');
procpin.flockSync(fd, procpin.constants.LOCK_EX);`);
  try {
    await assert.rejects(procpin.claimPidfile(p), (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, 'ERR_PROCPIN_LOCKED');
      assert.equal(err.pid, h.pid);
      return true;
    });
  } finally {
    await h.kill();
  }
});

test('a pidfile left by a SIGKILLed holder is taken over [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = join(d.path, 'app.pid');
  const h = await holder(`globalThis.pf = await procpin.claimPidfile(${JSON.stringify(p)});`);
  await h.kill();
  assert.equal(readFileSync(p, 'utf8'), `${h.pid}\n`, 'a SIGKILLed holder leaves its pidfile');
  const pf = await procpin.claimPidfile(p);
  try {
    assert.equal(readFileSync(p, 'utf8'), `${process.pid}\n`);
  } finally {
    await pf.release();
  }
});

test('a pidfile naming a live pid (1) that nobody locks is taken over: the lock is the truth [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = join(d.path, 'app.pid');
  writeFileSync(p, '1\n');
  const pf = await procpin.claimPidfile(p);
  try {
    assert.equal(readFileSync(p, 'utf8'), `${process.pid}\n`);
  } finally {
    await pf.release();
  }
});

test('Claim and Pidfile cannot be constructed from outside: they own the descriptor they close [C.no-crash]', () => {
  for (const C of [procpin.Claim, procpin.Pidfile]) {
    // @ts-expect-error constructed directly, on purpose: it must throw
    assert.throws(() => new C('/tmp/x', 0), { code: 'ERR_ILLEGAL_CONSTRUCTOR', name: 'TypeError' });
    // @ts-expect-error constructed directly, on purpose: it must throw
    assert.throws(() => new C(Symbol('procpin.create'), '/tmp', 'x', 'file', 0, {}), {
      code: 'ERR_ILLEGAL_CONSTRUCTOR',
    });
  }
});

test('claimPidfile refuses a symlink at the path [L3b.pidfile.not-pidfile]', async (t) => {
  const d = scratch(t);
  writeFileSync(join(d.path, 'target'), 'keep');
  symlinkSync(join(d.path, 'target'), join(d.path, 'app.pid'));
  await assert.rejects(procpin.claimPidfile(join(d.path, 'app.pid')), { code: 'ELOOP' });
  assert.equal(readFileSync(join(d.path, 'target'), 'utf8'), 'keep');
});

test('contending claimPidfile calls in several processes: exactly one holds it at any time [L3b.pidfile.lock]', async (t) => {
  const d = scratch(t);
  const p = JSON.stringify(join(d.path, 'app.pid'));
  const log = join(d.path, 'log');
  const ms = process.env.PROCPIN_STRESS ? 10000 : 1500;
  const code = `import * as procpin from ${pkg};
import fs from 'node:fs';
const end = Date.now() + ${ms};
let held = 0, refused = 0, bad = [];
while (Date.now() < end) {
  let pf;
  try { pf = await procpin.claimPidfile(${p}); } catch (e) {
    if (e.code !== 'ERR_PROCPIN_LOCKED') throw e;
    refused++; continue;
  }
  // While we hold it, the file names us and a marker of ours is the only one.
  fs.writeFileSync(${JSON.stringify(log)}, String(process.pid));
  await new Promise((r) => setImmediate(r));
  const who = fs.readFileSync(${p}, 'utf8');
  const marker = fs.readFileSync(${JSON.stringify(log)}, 'utf8');
  if (who !== process.pid + '\\n' || marker !== String(process.pid)) bad.push(who + '/' + marker);
  held++;
  await pf.release();
}
console.log(JSON.stringify({ held, refused, bad }));`;
  const { runNode } = await import('../helpers.mjs');
  const results = await Promise.all([0, 1, 2].map(() => runNode(code, { timeout: ms + 30000 })));
  let held = 0;
  for (const r of results) {
    assert.equal(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    assert.deepEqual(o.bad, []);
    held += o.held;
  }
  t.diagnostic(`${held} holds`);
  assert.ok(held > 0);
  await waitFor(() => !exists(join(d.path, 'app.pid')), { what: 'pidfile released' });
});

test('claim, sweep and claimPidfile work in a Worker, with no descriptor warning and nothing left [L3b.claim.release]', async (t) => {
  const d = scratch(t);
  const { runNode } = await import('../helpers.mjs');
  const r = await runNode(`import { Worker } from 'node:worker_threads';
const w = new Worker(\`
(async () => {
  const p = await import(${JSON.stringify(JSON.parse(pkg))});
  const fs = await import('node:fs');
  const dir = ${JSON.stringify(d.path)};
  for (let i = 0; i < 4; i++) {
    const c = await p.claim(dir, 'w-', { kind: i % 2 ? 'file' : 'directory' });
    await c.release();
  }
  fs.mkdirSync(dir + '/w-999999999');
  const r = await p.sweep(dir, { prefix: 'w-' });
  const pf = await p.claimPidfile(dir + '/x.pid');
  await pf.release();
  console.log(JSON.stringify({ removed: r.removed.length, left: fs.readdirSync(dir) }));
})();
\`, { eval: true });
await new Promise((resolve) => w.on('exit', resolve));`);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(JSON.parse(r.stdout), { removed: 1, left: [] });
});
