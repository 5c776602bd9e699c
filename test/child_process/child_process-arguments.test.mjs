// procpin/child_process reads spawn's arguments as child_process.spawn does: every case here
// calls both with the same arguments and compares what each did (the error thrown, or the events,
// spawnfile, spawnargs and output). The differences docs/child_process.md lists are tested apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { inspect } from 'node:util';
import { spawn } from 'procpin/child_process';
import { isRoot, need } from '../helpers.mjs';

/**
 * What one spawn did: the error it threw (class, code, errno, syscall; the message where there
 * is no code), or its spawnfile, spawnargs, the events up to 'close' and its output.
 * @param {(...a: any[]) => any} fn
 * @param {unknown[]} a
 */
async function outcome(fn, a) {
  let c;
  try {
    c = fn(...a);
  } catch (e) {
    const err = /** @type {NodeJS.ErrnoException} */ (e);
    return {
      threw: [err.constructor.name, err.code, err.errno, err.syscall, err.code ? '' : err.message],
    };
  }
  const events = [];
  let out = '';
  let err = '';
  c.stdout?.on('data', (d) => (out += d));
  c.stderr?.on('data', (d) => (err += d));
  c.on('error', (e) => events.push(['error', e.code]));
  const closed = await new Promise((resolve) => c.once('close', (...r) => resolve(r)));
  events.push(['close', ...closed]);
  return { spawnfile: c.spawnfile, spawnargs: c.spawnargs, events, out, err };
}

let cases = 0;
/** Both spawns with the same arguments did the same. */
async function same(...a) {
  const [theirs, ours] = await Promise.all([outcome(cp.spawn, a), outcome(spawn, a)]);
  assert.deepEqual(ours, theirs, `case ${++cases}: ${inspect(a, { showProxy: true })}`);
  return ours;
}

// The child's own view of its descriptors 1 and 3, on its stderr (its own look: no shell
// redirection in between).
const fds = [
  '-e',
  "for (const f of [1, 3]) { try { process.stderr.write(require('fs').readlinkSync('/proc/self/fd/' + f) + '\\n'); } catch { process.stderr.write('none\\n'); } }",
];

test('args elements that are not strings become text as child_process makes them: holes and undefined "undefined", numbers, null, objects; a Symbol or a throwing toString throws the same error [L2b.arguments]', async () => {
  const r = await same('echo', [1, 2, null, undefined, {}, true, 1n]);
  assert.equal(r.out, '1 2 null undefined [object Object] true 1\n');
  // eslint-disable-next-line no-sparse-arrays -- holes, on purpose
  assert.equal((await same('echo', [, 'x', , 'y'])).out, 'undefined x undefined y\n');
  // A NUL inside text made from an object ends that argument there, as the C string does.
  assert.equal((await same('echo', [new String('a\0b'), 'c'])).out, 'a c\n');
  await same('echo', [{ toString: () => 'from toString' }]);
  await same('echo', [Symbol('s')]);
  await same('echo', [
    {
      toString: () => {
        throw new Error('boom');
      },
    },
  ]);
  // With shell, the command is joined as child_process joins it (null and holes are empty).
  // eslint-disable-next-line no-sparse-arrays -- a hole, on purpose
  assert.equal((await same('echo', [null, 1, , 'x'], { shell: true })).out, '1 x\n');
  await same('echo', [Symbol('s')], { shell: true });
  await same('echo', [new String('a\0b'), 'c'], { shell: true });
});

test('an options object in place of args is the options, and a third argument is then ignored whatever it is; a TypedArray, String or arguments object there is options whose elements are no options [L2b.arguments]', async () => {
  for (const third of [null, 'x', 1, [], { cwd: '/tmp' }, undefined]) {
    assert.equal((await same('pwd', { cwd: '/' }, third)).out, '/\n', String(third));
  }
  await same('echo', new Uint8Array([1, 2]));
  await same('echo', new Uint8Array([1]), { cwd: '/' });
  await same('echo', new String('ab'));
  // An arguments object, as a wrapper passes one on.
  const argumentsObject = (function () {
    return arguments;
  })('x', 'y');
  await same('echo', argumentsObject);
  await same('true', [], argumentsObject);
  await same('echo', () => {});
});

test('null for env, timeout, argv0, uid, gid, shell, detached and killSignal is as if left out, and a falsy env is process.env, as child_process has them [L2b.arguments]', async () => {
  const cmd = ['sh', ['-c', 'echo "$0|$HOME"']];
  for (const name of ['env', 'timeout', 'argv0', 'uid', 'gid', 'shell', 'detached', 'killSignal']) {
    assert.equal((await same(...cmd, { [name]: null })).out, `sh|${process.env.HOME}\n`, name);
  }
  for (const env of ['', 0, NaN, false]) {
    assert.equal((await same(...cmd, { env })).out, `sh|${process.env.HOME}\n`, String(env));
  }
});

test('an env that is not an object is read as child_process reads it: a string by its characters, a number, a boolean or a Symbol as empty, a function by its own keys; a value that is a Symbol throws [L2b.arguments]', async () => {
  assert.equal((await same('/usr/bin/env', [], { env: 'xy' })).out, '0=x\n1=y\n');
  for (const env of [5, true, Symbol('e')]) {
    assert.equal((await same('/usr/bin/env', [], { env })).out, '', String(env));
  }
  assert.equal((await same('/usr/bin/env', [], { env: Object.assign(() => {}, { A: 'b' }) })).out, 'A=b\n');
  assert.equal((await same('/usr/bin/env', [], { env: ['A=b'] })).out, '0=A=b\n');
  // Text made from an object ends at a NUL, as the C string does; a string with one is refused.
  assert.equal((await same('/usr/bin/env', [], { env: { A: { toString: () => 'a\0b' } } })).out, 'A=a\n');
  await same('/usr/bin/env', [], { env: { A: 'a\0b' } });
  await same('/usr/bin/env', [], { env: { A: Symbol('v') } });
});

test("this process's NODE_V8_COVERAGE reaches a child whose env lacks it, as child_process passes it for coverage tools [L2b.arguments]", async () => {
  process.env.NODE_V8_COVERAGE = '/nonexistent-procpin-coverage';
  try {
    // Each spawn gets its own env object: child_process writes the variable into the one given.
    const fresh = async (make) => {
      const [theirs, ours] = [await outcome(cp.spawn, make()), await outcome(spawn, make())];
      assert.deepEqual(ours, theirs);
      return ours;
    };
    const r = await fresh(() => ['/usr/bin/env', [], { env: { A: '1' } }]);
    assert.equal(r.out, 'A=1\nNODE_V8_COVERAGE=/nonexistent-procpin-coverage\n');
    await fresh(() => ['/usr/bin/env', [], { env: { NODE_V8_COVERAGE: 'own' } }]);
    await fresh(() => ['/usr/bin/env', [], { env: Object.create({ NODE_V8_COVERAGE: 'inherited' }) }]);
  } finally {
    delete process.env.NODE_V8_COVERAGE;
  }
});

test('cwd as a Buffer or Uint8Array is accepted and its bytes are checked for NUL as child_process checks them; procpin runs the child in the directory it names [L2b.arguments]', async () => {
  for (const cwd of [Buffer.from('/'), new Uint8Array([47])]) {
    const r = await outcome(spawn, ['pwd', [], { cwd }]);
    assert.equal(r.out, '/\n');
    assert.deepEqual(r.events, [['close', 0, null]]);
    // child_process accepts it too (and then runs the child where the parent is).
    assert.deepEqual((await outcome(cp.spawn, ['pwd', [], { cwd }])).events, [['close', 0, null]]);
  }
  await same('pwd', [], { cwd: Buffer.from('/\0') });
  // A URL-like object is a URL to child_process: a file: one is its path, another scheme throws.
  const urlish = { href: 'file:///', protocol: 'file:', pathname: '/', hostname: '' };
  assert.equal((await same('pwd', [], { cwd: urlish })).out, '/\n');
  await same('pwd', [], { cwd: { ...urlish, href: 'http://x/', protocol: 'http:', hostname: 'x' } });
  for (const cwd of [false, 0, {}]) await same('pwd', [], { cwd });
});

test("stdio is read as child_process reads it: not a string nor an array is ERR_INVALID_ARG_VALUE, a falsy one 'pipe', an unknown string or a Buffer in the array ERR_INVALID_SYNC_FORK_INPUT, a negative number a pipe [L2b.arguments]", async () => {
  for (const stdio of [{}, 5, true, Symbol('s'), () => {}, 'inherit ', 'bogus']) {
    await same('true', [], { stdio });
  }
  for (const stdio of [0, '', false, null, NaN]) {
    assert.equal((await same('echo', ['a'], { stdio })).out, 'a\n', String(stdio));
  }
  for (const e of [
    'bogus',
    '',
    Buffer.from('x'),
    new DataView(new ArrayBuffer(1)),
    {},
    false,
    true,
    Symbol('e'),
    () => {},
    { fd: '1' },
  ]) {
    await same('true', [], { stdio: ['pipe', e, 'pipe'] });
  }
  for (const e of [-1, -Infinity]) {
    assert.equal((await same('echo', ['a'], { stdio: ['pipe', e, 'pipe'] })).out, 'a\n', String(e));
  }
});

test('a descriptor number in stdio is taken as child_process takes it: 1.5 is 1, NaN and Infinity 0, -1 after wrapping is EINVAL, another negative one /dev/null; an object with a numeric fd the same [L2b.arguments]', async () => {
  for (const e of [
    1.5,
    NaN,
    Infinity,
    2 ** 32 + 1,
    { fd: 1.5 },
    { fd: NaN },
    2 ** 31,
    { fd: -2 },
    2 ** 32 - 1,
    { fd: -1 },
    { fd: 2 ** 32 - 1 },
  ]) {
    await same(process.execPath, fds, { stdio: ['pipe', e, 'pipe'] });
    await same(process.execPath, fds, { stdio: ['pipe', 'inherit', 'pipe', e] });
  }
});

test('uid and gid are int32 as child_process has them: -1 is the EINVAL child_process throws, a number above int32 ERR_INVALID_ARG_TYPE, a Symbol or BigInt the TypeError its test throws [L2b.arguments]', async () => {
  for (const id of ['uid', 'gid']) {
    for (const v of [-1, 2 ** 31, 0xfffffffe, 1.5, '0', false, Symbol('id'), 1n]) await same('true', [], { [id]: v });
  }
});

test('as root, a negative uid or gid other than -1 is the id it wraps to, as child_process passes it [L2b.arguments]', async (t) => {
  need(t, isRoot, 'needs root');
  assert.equal((await same('id', ['-u'], { uid: -2 })).out, '4294967294\n');
  assert.equal((await same('id', ['-g'], { gid: -3 })).out, '4294967293\n');
});

test('options are read as child_process reads them: own enumerable keys only, each getter once, a throwing getter throws its error [L2b.arguments]', async () => {
  assert.equal((await same('pwd', [], Object.create({ cwd: '/' }))).out, `${process.cwd()}\n`);
  const hidden = Object.defineProperty({}, 'cwd', { value: '/', enumerable: false });
  assert.equal((await same('pwd', [], hidden)).out, `${process.cwd()}\n`);
  for (const fn of [cp.spawn, spawn]) {
    let reads = 0;
    const options = {
      get cwd() {
        reads += 1;
        return '/';
      },
    };
    const r = await outcome(fn, ['pwd', [], options]);
    assert.equal(r.out, '/\n');
    assert.equal(reads, 1, fn === spawn ? 'procpin' : 'child_process');
  }
  await same('pwd', [], {
    get cwd() {
      throw new Error('no cwd');
    },
  });
  await same(
    'pwd',
    [],
    new Proxy(
      { cwd: '/' },
      {
        get() {
          throw new Error('no get');
        },
      },
    ),
  );
  // A Proxy with no keys is never asked for one (nor for what it is).
  await same(
    'pwd',
    [],
    new Proxy(
      {},
      {
        get() {
          throw new Error('no get');
        },
      },
    ),
  );
});

test('options, args and env given as Proxies are asked exactly what child_process asks of them, in its order [L2b.arguments]', async () => {
  /** A Proxy that logs each question asked of it. */
  const logged = (target, log, name) =>
    new Proxy(
      target,
      Object.fromEntries(
        ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf'].map((trap) => [
          trap,
          (...a) => {
            log.push(`${name}.${trap}(${trap === 'ownKeys' || trap === 'getPrototypeOf' ? '' : String(a[1])})`);
            return Reflect[trap](...a);
          },
        ]),
      ),
    );
  const cases = [
    (log) => ['/bin/echo', ['a'], logged({ cwd: '/', env: { PATH: '/bin' }, stdio: 'pipe' }, log, 'options')],
    (log) => ['/bin/echo', logged(['a', 1], log, 'args')],
    (log) => ['/bin/echo', logged(['a', 1], log, 'args'), { shell: true }],
    (log) => ['/bin/echo', ['a'], { env: logged({ A: '1', B: 2 }, log, 'env') }],
  ];
  for (const make of cases) {
    /** @type {string[][]} */
    const logs = [];
    for (const fn of /** @type {((...a: any[]) => any)[]} */ ([cp.spawn, spawn])) {
      /** @type {string[]} */
      const log = [];
      const c = fn(...make(log));
      c.stdout?.resume();
      await new Promise((resolve) => c.once('close', resolve));
      logs.push(log);
    }
    assert.deepEqual(logs[1], logs[0]);
  }
});
