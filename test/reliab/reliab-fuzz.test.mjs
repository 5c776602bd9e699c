// Hostile input: arbitrary values over every export (test/fixtures/reliab-fuzz.mjs, 10^5 calls in
// a child process that must exit 0 with no descriptor leaked), NUL bytes in every string that
// reaches the kernel, and argument lists over the kernel's limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { isGone, need, openFds, root, tmpDirFor } from '../helpers.mjs';
import { canPidNs, runCmd, STRESS } from '../fixtures/reliab-lib.mjs';

const hasSpawn = typeof procpin.spawn === 'function' && typeof procpin.spawnGroup === 'function';
const hasSweep = typeof procpin.sweep === 'function' && typeof procpin.claim === 'function';
const CALLS = Number(process.env.PROCPIN_FUZZ_CALLS) || (STRESS ? 1_000_000 : 100_000);

test(
  `${CALLS} calls with arbitrary values over every export: no crash, no hang, no descriptor or process left [C.no-crash]`,
  { timeout: 600_000 },
  async (t) => {
    if (!need(t, canPidNs, 'needs root and unshare --pid (a random pid must name only our own processes)')) return;
    const dir = tmpDirFor(t, 'procpin-fuzz-');
    const seed = Number(process.env.PROCPIN_FUZZ_SEED) || Date.now() % 1_000_000;
    const r = await runCmd(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount-proc',
        '--kill-child',
        process.execPath,
        join(root, 'test', 'fixtures', 'reliab-fuzz.mjs'),
        join(root, 'dist', 'index.js'),
        dir.path,
        String(CALLS),
        String(seed),
      ],
      { timeout: 590_000 },
    );
    let last = '';
    try {
      last = readFileSync(join(dir.path, 'current'), 'utf8').split('\n')[0];
    } catch {}
    assert.equal(r.signal, null, `the fuzz process died by ${r.signal} (seed ${seed}) during: ${last}\n${r.stderr}`);
    assert.equal(r.code, 0, `exit ${r.code} (seed ${seed}) during: ${last}\n${r.stderr}`);
    const out = JSON.parse(readFileSync(join(dir.path, 'result.json'), 'utf8'));
    t.diagnostic(
      `seed ${seed}: ${out.calls} calls in ${out.ms} ms over ${Object.keys(out.byExport).length} exports and methods; outcomes ${JSON.stringify(out.codes)}`,
    );
    assert.equal(out.calls, CALLS);
    assert.deepEqual(out.problems, [], `${out.problemCount} problems`);
    if (out.fdsMid !== out.fdsBefore)
      t.diagnostic(`descriptors after the first half: ${out.fdsMid} (before: ${out.fdsBefore})`);
    assert.equal(out.fdsAfter, out.fdsMid, `descriptors leaked in the second half: ${out.leaked?.join('; ')}`);
    assert.deepEqual(out.leftovers, [], 'processes left running');
    // The whole surface was reached, not only Layer 1.
    if (hasSpawn) for (const k of ['spawn', 'spawnGroup', 'openProcess']) assert.ok(out.byExport[k] > 0, k);
    if (hasSweep) for (const k of ['sweep', 'claim', 'claimPidfile']) assert.ok(out.byExport[k] > 0, k);
  },
);

function rejectsNul(t, what, fn) {
  return assert.rejects(
    (async () => fn())(),
    (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, 'ERR_INVALID_ARG_VALUE', `${what}: ${err.code} ${err.message}`);
      assert.match(err.message, /null bytes|NUL|\\x00|\\u0000/i, what);
      return true;
    },
    what,
  );
}

test('NUL bytes in file, args, env, cwd and argv0 give ERR_INVALID_ARG_VALUE before anything starts [C.args.refused-first]', async (t) => {
  if (!need(t, hasSpawn, 'spawn and spawnGroup are not built yet')) return;
  const fds = openFds();
  /** @type {Array<[string, (file: string, args?: string[], options?: object) => unknown]>} */
  const spawners = [
    ['spawn', procpin.spawn],
    ['spawnGroup', procpin.spawnGroup],
  ];
  for (const [name, s] of spawners) {
    const cases = {
      file: () => s('tr\0ue'),
      'an argument': () => s('true', ['a', 'b\0c']),
      'an env value': () => s('true', [], { env: { A: 'x\0y' } }),
      'an env name': () => s('true', [], { env: { 'A\0B': 'x' } }),
      cwd: () => s('true', [], { cwd: '/tmp\0/x' }),
      argv0: () => s('true', [], { argv0: 'tr\0ue' }),
    };
    for (const [what, fn] of Object.entries(cases)) {
      // Thrown synchronously (spawn returns a value): assert.throws, not a rejection.
      assert.throws(
        fn,
        (/** @type {import('procpin').ProcpinSystemError} */ err) => err.code === 'ERR_INVALID_ARG_VALUE',
        `${name}: NUL in ${what}`,
      );
    }
  }
  assert.deepEqual(openFds(), fds);
});

test('NUL bytes in a sweep or claim path or prefix are refused with ERR_INVALID_ARG_VALUE [C.args.refused-first]', async (t) => {
  if (!need(t, hasSweep, 'sweep and claim are not built yet')) return;
  const dir = tmpDirFor(t, 'procpin-nul-');
  await rejectsNul(t, 'sweep dir', () => procpin.sweep(`${dir.path}\0x`, { prefix: 'p-' }));
  await rejectsNul(t, 'sweep prefix', () => procpin.sweep(dir.path, { prefix: 'p\0-' }));
  await rejectsNul(t, 'claim dir', () => procpin.claim(`${dir.path}\0x`, 'p-'));
  await rejectsNul(t, 'claim prefix', () => procpin.claim(dir.path, 'p\0-'));
  await rejectsNul(t, 'claimPidfile path', () => procpin.claimPidfile(`${dir.path}/x\0.pid`));
});

function assertE2big(fn, what) {
  const fds = openFds();
  let err;
  try {
    const c = fn();
    err = new Error(`${what}: started pid ${c.pid}`);
  } catch (e) {
    err = e;
  }
  assert.equal(err.code, 'E2BIG', `${what}: ${err.stack}`);
  assert.equal(err.errno, -7);
  assert.ok(['execve', 'spawn'].includes(err.syscall), err.syscall);
  assert.ok(Array.isArray(err.spawnargs), 'spawnargs');
  assert.deepEqual(openFds(), fds, `${what}: descriptor leaked`);
  return err;
}

test('argv and env over the kernel limit give E2BIG, leave no zombie and no descriptor [L2.spawn.fail]', async (t) => {
  if (!need(t, hasSpawn, 'spawn is not built yet')) return;
  const before = zombieChildren();
  // One string over MAX_ARG_STRLEN (32 pages = 128 KiB).
  assertE2big(() => procpin.spawn('true', ['x'.repeat(131072)]), 'one huge argument');
  // Many strings over ARG_MAX (a quarter of the 8 MiB stack limit = 2 MiB).
  const many = Array.from({ length: 3000 }, () => 'y'.repeat(1000));
  assertE2big(() => procpin.spawn('true', many), 'argv over ARG_MAX');
  const env = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`V${i}`, 'z'.repeat(1000)]));
  assertE2big(() => procpin.spawn('true', [], { env }), 'env over ARG_MAX');
  assertE2big(() => procpin.spawnGroup('true', many), 'a group with argv over ARG_MAX');
  assert.deepEqual(zombieChildren(), before, 'a zombie was left');
});

function zombieChildren() {
  const out = [];
  const me = String(process.pid);
  for (const line of readFileSync('/proc/self/task/' + me + '/children', 'utf8')
    .split(' ')
    .filter(Boolean)) {
    if (isGone(Number(line))) out.push(Number(line));
  }
  return out;
}

test('claim with mode -0 is accepted or refused, never aborts the process (found by the fuzz) [C.no-crash]', async (t) => {
  if (!need(t, hasSweep, 'claim is not built yet')) return;
  const dir = tmpDirFor(t, 'procpin-mode-');
  // -0 passes an integer check but is not an Int32 to V8: FileHandle.chmod(-0) hits a C++
  // assertion in Node and aborts. procpin must normalise it before it reaches fs.
  const r = await runCmd(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { claim } from ${JSON.stringify(join(root, 'dist', 'index.js'))};
     try { const c = await claim(process.argv[1], 'p-', { kind: 'file', mode: -0 }); await c.release(); } catch (e) { if (!(e instanceof Error)) throw e; }`,
      dir.path,
    ],
    { timeout: 60000 },
  );
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.code, 0, r.stderr);
});

// Found by the fuzz: Pidfile's and Claim's constructors took a descriptor number from any caller,
// and release() closed it: `new Pidfile(path, 9).release()` closed one of libuv's own epoll
// descriptors and the process died by SIGSEGV / abort in uv__io_poll. They now refuse outside
// construction with a module-private token, as Child and ProcessHandle do.
test('exported classes built by a caller never close a descriptor they do not own [C.no-crash]', async (t) => {
  if (!need(t, hasSweep, 'sweep is not built yet')) return;
  for (const [name, C] of Object.entries(procpin)) {
    if (typeof C !== 'function' || !C.prototype || Object.getOwnPropertyNames(C.prototype).length < 2) continue;
    const fd = openSync('/dev/null', 'r');
    try {
      let obj = null;
      try {
        // @ts-expect-error any exported class, called by a caller with made-up arguments on purpose
        obj = new C('/nonexistent/procpin-probe', fd, 'file', fd, {});
      } catch {}
      for (const m of ['release', 'close', Symbol.asyncDispose, Symbol.dispose]) {
        try {
          await obj?.[m]?.();
        } catch {}
      }
      assert.doesNotThrow(
        () => fstatSync(fd),
        `new ${name}(…, fd) then release/close closed a descriptor it did not open`,
      );
    } finally {
      try {
        closeSync(fd);
      } catch {}
    }
  }
});
