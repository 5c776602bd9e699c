// sweep() against an adversary: an entry swapped for a symlink at each point between check and
// removal (an injected hook in the native code does the swap exactly there), mounts inside and
// at a dead owner's entry, and claimants and sweepers racing in several processes.
// The swap hook is the test build's (the production addon has none).
import { hooked as binding } from '../use-test-build.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { isRoot, need, pkg, runNode, waitFor } from '../helpers.mjs';
import { deadPid, exists, names, scratch, keptReasons } from './sweep-fixtures.mjs';

const P = 'prefix-';
const AFTER_CHECK = 1;
const AFTER_LOCK = 2;
const BEFORE_CONTENTS = 3;
const BEFORE_UNLINK = 4;

async function swapAt(t, point, kind) {
  const d = scratch(t);
  const dead = await deadPid();
  const name = `${P}${dead}`;
  const outside = join(d.path, 'outside');
  mkdirSync(join(outside, 'sub'), { recursive: true });
  writeFileSync(join(outside, 'precious'), 'x');
  writeFileSync(join(outside, 'sub', 'precious'), 'x');
  const entry = join(d.path, 'swept');
  mkdirSync(entry);
  const p = join(entry, name);
  if (kind === 'directory') {
    mkdirSync(join(p, 'sub'), { recursive: true });
    writeFileSync(join(p, 'sub', 'own'), 'x');
    writeFileSync(join(p, 'precious'), 'x');
  } else {
    writeFileSync(p, 'own');
  }
  const target = kind === 'directory' ? outside : join(outside, 'precious');
  binding.sweepTestHook(point, name, target);
  let r;
  try {
    r = await procpin.sweep(entry, { prefix: P });
  } finally {
    binding.sweepTestHook();
  }
  return { r, d, entry, name, outside, target };
}

for (const [point, label] of [
  [AFTER_CHECK, 'after the checks, before it is opened'],
  [AFTER_LOCK, 'after it is opened and locked'],
  [BEFORE_CONTENTS, 'after the last check, while its contents are removed'],
  [BEFORE_UNLINK, 'after its contents are gone, right before the unlink'],
]) {
  test(`a directory swapped for a symlink ${label} removes nothing outside [L3b.sweep.replaced]`, async (t) => {
    const { r, entry, name, outside } = await swapAt(t, point, 'directory');
    assert.deepEqual(r.removed, []);
    assert.deepEqual(keptReasons(r), [[name, 'replaced']]);
    assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'x');
    assert.equal(readFileSync(join(outside, 'sub', 'precious'), 'utf8'), 'x');
    // The symlink that took the name stays; it is not ours to judge any more.
    assert.equal(readlinkSync(join(entry, name)), outside);
    if (point === AFTER_CHECK || point === AFTER_LOCK) {
      // Caught before anything was removed: the moved directory is untouched.
      assert.deepEqual(readdirSync(join(entry, `${name}.orig`)).sort(), ['precious', 'sub']);
    } else {
      // Its contents went through the locked descriptor: the checked inode, wherever its name is.
      assert.deepEqual(readdirSync(join(entry, `${name}.orig`)), []);
    }
  });
}

test('a file swapped for a symlink after it is locked, before the unlink, is left, and so is its target [L3b.sweep.replaced]', async (t) => {
  const { r, entry, name, target } = await swapAt(t, AFTER_LOCK, 'file');
  assert.deepEqual(keptReasons(r), [[name, 'replaced']]);
  assert.equal(readlinkSync(join(entry, name)), target);
  assert.equal(readFileSync(target, 'utf8'), 'x');
  assert.equal(readFileSync(join(entry, `${name}.orig`), 'utf8'), 'own');
});

test('a file swapped for a symlink after the checks is never opened through it [L3b.sweep.replaced]', async (t) => {
  const { r, entry, name, target } = await swapAt(t, AFTER_CHECK, 'file');
  assert.deepEqual(keptReasons(r), [[name, 'replaced']]);
  assert.equal(readlinkSync(join(entry, name)), target);
  assert.equal(readFileSync(target, 'utf8'), 'x');
});

for (const kind of /** @type {const} */ (['directory', 'file'])) {
  test(`a ${kind} claim that loses its entry before it is locked retries under a new name [L3b.claim.create]`, async (t) => {
    const d = scratch(t);
    // The entry is swapped away between its creation and its lock, as a sweeper with
    // authority 'lock' could do: the claim must not hand it out.
    const CLAIM_BEFORE_LOCK = 5;
    binding.sweepTestHook(CLAIM_BEFORE_LOCK, `${P}${process.pid}-`, '/');
    let c;
    try {
      c = await procpin.claim(d.path, P, { kind });
    } finally {
      binding.sweepTestHook();
    }
    try {
      const { lstatSync } = await import('node:fs');
      const st = lstatSync(c.path);
      assert.equal(kind === 'directory' ? st.isDirectory() : st.isFile(), true);
      assert.equal(readdirSync(d.path).filter((n) => n.endsWith('.orig')).length, 1, 'the hook fired');
    } finally {
      await c.release();
    }
  });
}

function mount(args) {
  const r = spawnSync('mount', args, { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}
function umount(path) {
  spawnSync('umount', ['-l', path]);
}
/** Runs `fn` while `mount args at` is mounted; unmounts after, whatever `fn` did. */
async function mounted(args, at, fn) {
  mount([...args, at]);
  try {
    return await fn();
  } finally {
    umount(at);
  }
}

test("a mount inside a dead owner's directory is not descended, and the entry is kept as mount [L3b.sweep.mount]", async (t) => {
  if (!need(t, isRoot, 'mounting tmpfs needs root')) return;
  const d = scratch(t);
  const dead = await deadPid();
  const entry = join(d.path, `${P}${dead}`);
  const mnt = join(entry, 'deep', 'mnt');
  mkdirSync(mnt, { recursive: true });
  writeFileSync(join(entry, 'own'), 'x');
  await mounted(['-t', 'tmpfs', 'none'], mnt, async () => {
    writeFileSync(join(mnt, 'precious'), 'x');
    const dry = await procpin.sweep(d.path, { prefix: P, dryRun: true });
    assert.deepEqual(keptReasons(dry), [[`${P}${dead}`, 'mount']]);
    assert.equal(exists(join(entry, 'own')), true);
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(r.removed, []);
    assert.deepEqual(keptReasons(r), [[`${P}${dead}`, 'mount']]);
    assert.equal(readFileSync(join(mnt, 'precious'), 'utf8'), 'x');
  });
});

test("a bind mount of the same filesystem inside a dead owner's directory is not descended either [L3b.sweep.mount]", async (t) => {
  if (!need(t, isRoot, 'bind mounts need root')) return;
  const d = scratch(t);
  const dead = await deadPid();
  const outside = join(d.path, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'precious'), 'x');
  const entry = join(d.path, `${P}${dead}`);
  const mnt = join(entry, 'bound');
  mkdirSync(mnt, { recursive: true });
  await mounted(['--bind', outside], mnt, async () => {
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(keptReasons(r), [[`${P}${dead}`, 'mount']]);
    assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'x');
  });
});

test("a dead owner's entry that is itself a mount point is kept as mount, its contents untouched [L3b.sweep.mount]", async (t) => {
  if (!need(t, isRoot, 'mounting tmpfs needs root')) return;
  const d = scratch(t);
  const dead = await deadPid();
  const entry = join(d.path, `${P}${dead}`);
  mkdirSync(entry);
  await mounted(['-t', 'tmpfs', 'none'], entry, async () => {
    writeFileSync(join(entry, 'precious'), 'x');
    const dry = await procpin.sweep(d.path, { prefix: P, dryRun: true });
    assert.deepEqual(keptReasons(dry), [[`${P}${dead}`, 'mount']]);
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(keptReasons(r), [[`${P}${dead}`, 'mount']]);
    assert.equal(readFileSync(join(entry, 'precious'), 'utf8'), 'x');
  });
});

test('a claimant that is SIGKILLed leaves its entry, and the next claim removes it [L3b.sweep.race]', async (t) => {
  const d = scratch(t);
  const claimants = [];
  for (const kind of ['directory', 'file']) {
    const c = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import * as procpin from ${pkg};
const c = await procpin.claim(${JSON.stringify(d.path)}, ${JSON.stringify(P)}, { kind: '${kind}' });
if (c.kind === 'directory') (await import('node:fs')).writeFileSync(c.path + '/work', 'x');
console.log(c.path);
setInterval(() => {}, 1 << 30);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    c.stdout.on('data', (x) => (out += x));
    await waitFor(() => out.includes('\n'), { what: 'claimed' });
    claimants.push({ c, path: out.trim() });
  }
  // While the claimants live, another claim keeps their entries (alive, and locked).
  const mine = await procpin.claim(d.path, P);
  assert.deepEqual(mine.swept.removed, []);
  await mine.release();
  for (const { c, path } of claimants) {
    c.kill('SIGKILL');
    await once(c, 'exit');
    assert.ok(exists(path), 'a SIGKILLed claimant runs no cleanup');
  }
  const leftovers = claimants.map(({ path }) => path.slice(d.path.length + 1));
  const next = await procpin.claim(d.path, P);
  t.after(() => next.release());
  assert.deepEqual(names(next.swept.removed), leftovers.sort());
  assert.deepEqual(readdirSync(d.path), [next.path.slice(d.path.length + 1)]);
});

// Claimants, sweepers (both authorities) and claimants that get SIGKILLed, in parallel
// processes. A claimant checks that its entry is still there, intact, right before releasing.
test('claimants and sweepers racing in several processes never remove a live entry [L3b.sweep.race]', async (t) => {
  const d = scratch(t);
  const ms = process.env.PROCPIN_STRESS ? 20000 : 3000;
  const dir = JSON.stringify(d.path);
  const claimant = (i) => `import * as procpin from ${pkg};
import fs from 'node:fs';
const end = Date.now() + ${ms};
let ops = 0, violations = [];
for (let n = 0; Date.now() < end; n++) {
  const kind = n % 2 ? 'file' : 'directory';
  const c = await procpin.claim(${dir}, ${JSON.stringify(P)}, { kind, authority: ${i} % 2 ? 'lock' : 'pid' });
  const marker = kind === 'directory' ? c.path + '/marker' : c.path;
  fs.writeFileSync(marker, 'mine ' + n);
  await new Promise((r) => setTimeout(r, n % 3));
  try {
    if (fs.readFileSync(marker, 'utf8') !== 'mine ' + n) violations.push('changed ' + c.path);
  } catch (e) { violations.push(e.code + ' ' + c.path); }
  await c.release();
  ops++;
}
console.log(JSON.stringify({ ops, violations }));`;
  const sweeper = (i) => `import * as procpin from ${pkg};
const end = Date.now() + ${ms};
let sweeps = 0, removed = 0, errors = [];
while (Date.now() < end) {
  const r = await procpin.sweep(${dir}, { prefix: ${JSON.stringify(P)}, authority: ${i} % 2 ? 'lock' : 'pid' });
  sweeps++;
  removed += r.removed.length;
  for (const e of r.kept) if (e.reason === 'error') errors.push(e.error.message);
  if (r.error) errors.push(r.error.message);
}
console.log(JSON.stringify({ sweeps, removed, errors }));`;
  const jobs = [
    ...[0, 1, 2].map((i) => runNode(claimant(i), { timeout: ms + 30000 })),
    ...[0, 1].map((i) => runNode(sweeper(i), { timeout: ms + 30000 })),
  ];
  // Meanwhile: claimants SIGKILLed right after claiming leave dead entries behind.
  let victims = 0;
  const end = Date.now() + ms;
  const victimLoop = async () => {
    while (Date.now() < end) {
      const kind = victims % 2 ? 'file' : 'directory';
      const v = spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import * as procpin from ${pkg};
await procpin.claim(${dir}, ${JSON.stringify(P)}, { kind: '${kind}' });
process.kill(process.pid, 'SIGKILL');`,
        ],
        { stdio: 'ignore' },
      );
      await once(v, 'exit');
      victims++;
    }
  };
  await Promise.all([victimLoop(), victimLoop(), victimLoop()]);
  const results = await Promise.all(jobs);
  let ops = 0;
  let removed = 0;
  for (const r of results) {
    assert.equal(r.code, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    if ('violations' in o) {
      assert.deepEqual(o.violations, []);
      ops += o.ops;
    } else {
      assert.deepEqual(o.errors, []);
      removed += o.removed;
    }
  }
  t.diagnostic(`${ops} claims released, ${victims} claimants SIGKILLed, ${removed} entries swept`);
  assert.ok(ops > 0 && victims > 0);
  // Every claimant is gone now: whatever is left is dead and goes.
  const last = await procpin.sweep(d.path, { prefix: P });
  assert.deepEqual(last.kept, []);
  assert.deepEqual(readdirSync(d.path), []);
});
