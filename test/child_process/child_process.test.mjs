// SPEC Layer 2b: procpin/child_process behaves as child_process.spawn does (events, order,
// arguments, properties, errors) with a ProcessGroup underneath. The cases named "(Node: ...)"
// are Node's own test/parallel/test-child-process-* cases about spawn on Linux, rewritten here
// against the adapter; docs/child_process.md lists which ones apply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { createRequire } from 'node:module';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { spawn, ChildProcess, ProcessGroup } from 'procpin/child_process';
import { isGone, liveMembers, procStat, waitFor } from '../helpers.mjs';

const require = createRequire(import.meta.url);
/** @typedef {(...args: any[]) => any} Spawner either spawn, called with the same arguments */

/** Records a child's events in order, and resolves at 'close'. */
function record(child) {
  const events = [];
  for (const ev of ['spawn', 'exit', 'error', 'close']) {
    child.on(ev, (...args) =>
      events.push([
        ev,
        ...args.map((a) => (a instanceof Error ? (/** @type {NodeJS.ErrnoException} */ (a).code ?? a.name) : a)),
      ]),
    );
  }
  const closed = new Promise((resolve) => child.once('close', () => resolve(events)));
  return { events, closed };
}

test('require and import give the same spawn; ChildProcess and ProcessGroup come with it [C.module.dual]', () => {
  const cjs = require('procpin/child_process');
  assert.equal(cjs.spawn, spawn);
  assert.equal(cjs.ChildProcess, ChildProcess);
  assert.equal(cjs.ProcessGroup, ProcessGroup);
});

test('events come in child_process order with its arguments: spawn, exit, close after the output ended (Node: test-child-process-spawn-event) [L2b.events]', async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const c = impl('sh', ['-c', 'echo ok; exit 3']);
    const r = record(c);
    let out = '';
    let sawSpawn = false;
    c.on('spawn', () => (sawSpawn = true));
    c.stdout.on('data', (d) => {
      assert.ok(sawSpawn, "'data' comes after 'spawn'");
      out += d;
    });
    let stdoutEnded = false;
    c.stdout.on('end', () => (stdoutEnded = true));
    c.on('close', () => assert.ok(stdoutEnded, "'close' comes after stdout ended"));
    assert.deepEqual(
      await r.closed,
      [['spawn'], ['exit', 3, null], ['close', 3, null]],
      impl === spawn ? 'procpin' : 'node',
    );
    assert.equal(out, 'ok\n');
    assert.equal(c.exitCode, 3);
    assert.equal(c.signalCode, null);
  }
});

test("a failed start emits 'error' then 'close' asynchronously, shaped as child_process's, and throws nothing (Node: test-child-process-spawn-error) [L2b.start-error]", async () => {
  const theirs = cp.spawn('procpin-no-such-cmd', ['bar']);
  const ours = spawn('procpin-no-such-cmd', ['bar']);
  for (const c of [theirs, ours]) {
    assert.equal(c.pid, undefined);
    assert.ok(c.stdin && c.stdout && c.stderr, 'stdio streams are there even so');
    assert.equal(c.stdio[1], c.stdout);
    c.on('spawn', () => assert.fail('no spawn event'));
  }
  const errs = await Promise.all([theirs, ours].map((c) => new Promise((r) => c.once('error', r))));
  for (const key of ['message', 'errno', 'code', 'syscall', 'path']) assert.equal(errs[1][key], errs[0][key], key);
  assert.deepEqual(errs[1].spawnargs, ['bar']);
  assert.equal(errs[1].syscall, 'spawn procpin-no-such-cmd');
  const closes = await Promise.all([theirs, ours].map((c) => new Promise((r) => c.once('close', (...a) => r(a)))));
  assert.deepEqual(closes[1], closes[0]);
  assert.equal(ours.exitCode, theirs.exitCode);
});

test('a cwd that does not exist is an ENOENT error event; "" and null mean no chdir (Node: test-child-process-cwd) [L2b.start-error]', async () => {
  const bad = spawn('pwd', [], { cwd: '/procpin-does-not-exist' });
  const err = await new Promise((r) => bad.once('error', r));
  assert.equal(err.code, 'ENOENT');
  for (const cwd of ['', null, undefined, tmpdir(), new URL('file:///dev')]) {
    const c = spawn('pwd', [], { cwd });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    const [code] = await new Promise((r) => c.once('close', (...a) => r(a)));
    assert.equal(code, 0);
    if (cwd) assert.equal(out.trim(), cwd instanceof URL ? '/dev' : cwd);
  }
  assert.throws(() => spawn('pwd', [], { cwd: new URL('http://example.com/') }), /scheme file/);
});

test('kill() sets killed and signalCode; exit gives (null, SIGTERM) (Node: test-child-process-kill) [L2b.group]', async () => {
  const c = spawn('cat');
  const r = record(c);
  assert.equal(c.killed, false);
  assert.equal(c.signalCode, null);
  await new Promise((res) => c.once('spawn', res));
  assert.equal(c.kill(), true);
  assert.equal(c.killed, true);
  assert.deepEqual(await r.closed, [['spawn'], ['exit', null, 'SIGTERM'], ['close', null, 'SIGTERM']]);
  assert.equal(c.signalCode, 'SIGTERM');
  assert.equal(c.kill(), false, 'nothing is sent after the exit');
  // @ts-expect-error not a signal name
  assert.throws(() => c.kill('SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
});

test('kill() signals the whole group, and the leader exit cleans what is left (what tree-kill was for) [L2b.group]', async () => {
  const c = spawn('sh', ['-c', 'sleep 300 & sleep 300 & echo $!; wait'], { grace: 200 });
  let out = '';
  c.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('\n'), { what: 'the member pid' });
  const member = Number(out.trim());
  assert.ok(c.group instanceof ProcessGroup);
  assert.equal(c.group.pgid, c.pid);
  assert.equal(procStat(member).pgid, c.pid);
  c.kill('SIGTERM');
  await new Promise((r) => c.once('close', r));
  assert.ok(isGone(member), 'the background member is gone too');
  assert.equal(c.group.state, 'released');
  assert.deepEqual(liveMembers(c.pid), []);
});

test("a background member holding stdout does not hold 'close': the group is cleaned at the leader's exit [L2b.group]", async () => {
  const c = spawn('sh', ['-c', 'sleep 300 & echo started'], { grace: 100 });
  c.stdout.resume();
  const t0 = performance.now();
  const [code] = await new Promise((r) => c.once('close', (...a) => r(a)));
  assert.equal(code, 0);
  assert.ok(performance.now() - t0 < 10_000);
});

test('timeout sends killSignal, and a bad timeout is ERR_OUT_OF_RANGE (Node: test-child-process-spawn-timeout-kill-signal) [L2b.node-cases]', async () => {
  for (const killSignal of /** @type {(NodeJS.Signals | undefined)[]} */ ([undefined, 'SIGKILL'])) {
    const c = spawn('sleep', ['300'], { timeout: 5, killSignal });
    const [, sig] = await new Promise((r) => c.once('exit', (...a) => r(a)));
    assert.equal(sig, killSignal ?? 'SIGTERM');
  }
  for (const timeout of ['badValue', {}]) {
    // @ts-expect-error timeout takes a number
    assert.throws(() => spawn('sleep', ['300'], { timeout }), { code: 'ERR_OUT_OF_RANGE' });
  }
  const ac = new AbortController();
  const c = spawn('sleep', ['300'], { timeout: 6, signal: ac.signal });
  assert.equal(getEventListeners(ac.signal, 'abort').length, 1);
  await new Promise((r) => c.once('exit', r));
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
});

test('an AbortSignal stops it and emits an AbortError with the reason as cause; one aborted after the exit emits nothing (Node: test-child-process-spawn-controller) [L2b.node-cases]', async () => {
  for (const reason of [undefined, new Error('boom'), 'boom']) {
    for (const early of [false, true]) {
      const ac = new AbortController();
      if (early) ac.abort(reason);
      const c = spawn('sleep', ['300'], { signal: ac.signal, killSignal: 'SIGKILL' });
      const error = new Promise((r) => c.once('error', r));
      if (!early) ac.abort(reason);
      const [code, sig] = await new Promise((r) => c.once('exit', (...a) => r(a)));
      assert.deepEqual([code, sig], [null, 'SIGKILL']);
      const e = await error;
      assert.equal(e.name, 'AbortError');
      if (reason !== undefined) assert.equal(e.cause, reason);
    }
  }
  const ac = new AbortController();
  const c = spawn('sleep', ['300'], { signal: ac.signal });
  c.on('error', () => assert.fail('no error after the exit'));
  c.once('exit', () => ac.abort());
  c.kill();
  await new Promise((r) => c.once('close', r));
});

test('argument combinations are validated as child_process does (Node: test-child-process-spawn-typeerror) [L2b.options]', async () => {
  const type = { code: 'ERR_INVALID_ARG_TYPE', name: 'TypeError' };
  // @ts-expect-error args is not an array
  assert.throws(() => spawn('x', 'this is not an array'), type);
  // @ts-expect-error no command
  assert.throws(() => spawn(), type);
  assert.throws(() => spawn(''), { code: 'ERR_INVALID_ARG_VALUE', name: 'TypeError' });
  // @ts-expect-error the command is not a string
  assert.throws(() => spawn({ toString: () => null }), type);
  // @ts-expect-error args is not an array
  assert.throws(() => spawn('true', true), type);
  assert.throws(() => spawn('true', [], null), type);
  // @ts-expect-error options is not an object
  assert.throws(() => spawn('true', [], 1), type);
  assert.throws(() => spawn('true', [], { uid: 2 ** 63 }), type);
  assert.throws(() => spawn('true', [], { gid: 2 ** 63 }), type);
  // @ts-expect-error options is not an object
  assert.throws(() => spawn('true', [], 's'), type);
  // @ts-expect-error options is not a plain object
  assert.throws(() => spawn('true', [], []), type);
  const ok = [[], [[]], [[], {}], [{}], [undefined, {}], [null, {}], [[], undefined]];
  const children = ok.map((rest) => spawn('true', ...rest));
  await Promise.all(children.map((c) => new Promise((r) => c.once('close', r))));
  for (const c of children) assert.equal(c.exitCode, 0);
});

test('NUL bytes in file, args, env or cwd are refused (Node: test-child-process-reject-null-bytes) [L2b.node-cases]', () => {
  for (const bad of [
    () => spawn('tr\0ue'),
    () => spawn('true', ['a\0b']),
    () => spawn('true', [], { env: { A: 'x\0y' } }),
    () => spawn('true', [], { env: { 'A\0': 'x' } }),
    () => spawn('true', [], { cwd: '/tmp\0' }),
    () => spawn('true', [], { argv0: 'a\0' }),
  ]) {
    assert.throws(bad, { code: 'ERR_INVALID_ARG_VALUE' });
  }
});

test('argv0, spawnfile and spawnargs are as child_process has them, also with shell (Node: test-child-process-spawn-argv0, -spawn-shell) [L2b.node-cases]', async () => {
  /** @type {[string, string[], { argv0?: string, shell?: boolean | string }][]} */
  const cases = [
    ['sh', ['-c', 'echo $0'], { argv0: 'procpin-argv0' }],
    ['echo $((2+3))', [], { shell: true }],
    ['echo', ['a', 'b'], { shell: '/bin/bash' }],
  ];
  for (const [cmd, args, options] of cases) {
    const theirs = cp.spawn(cmd, args, options);
    const ours = spawn(cmd, args, options);
    assert.equal(ours.spawnfile, theirs.spawnfile);
    assert.deepEqual(ours.spawnargs, theirs.spawnargs);
    const outs = await Promise.all(
      [theirs, ours].map(
        (c) =>
          new Promise((r) => {
            let o = '';
            c.stdout.on('data', (d) => (o += d));
            c.once('close', () => r(o));
          }),
      ),
    );
    assert.equal(outs[1], outs[0]);
  }
});

test('env is the given one, and process.env without it (Node: test-child-process-env, -default-options) [L2b.node-cases]', async () => {
  process.env.PROCPIN_CP_DEFAULT = 'inherited';
  const read = (options) =>
    new Promise((r) => {
      const c = spawn('sh', ['-c', 'echo "$PROCPIN_CP_DEFAULT|$HELLO"'], options);
      let o = '';
      c.stdout.on('data', (d) => (o += d));
      c.once('close', () => r(o.trim()));
    });
  assert.equal(await read({}), 'inherited|');
  assert.equal(await read({ env: { HELLO: 'world', PATH: process.env.PATH } }), '|world');
  delete process.env.PROCPIN_CP_DEFAULT;
});

test("stdio 'inherit', 'ignore', arrays and 'overlapped' give the streams child_process gives (Node: test-child-process-stdio, -stdio-overlapped) [L2b.node-cases]", () => {
  for (const stdio of /** @type {('inherit' | 'ignore' | 'overlapped' | ('pipe' | 'ignore' | 'inherit')[] | undefined)[]} */ ([
    'inherit',
    'ignore',
    ['pipe', 'ignore', 'inherit'],
    ['ignore', 'pipe'],
    'overlapped',
    undefined,
  ])) {
    const theirs = cp.spawn('true', [], { stdio });
    const ours = spawn('true', [], { stdio });
    for (let i = 0; i < 3; i++)
      assert.equal(ours.stdio[i] === null, theirs.stdio[i] === null, `${String(stdio)} [${i}]`);
    ours.kill('SIGKILL');
  }
  // @ts-expect-error not a stdio value
  assert.throws(() => spawn('true', [], { stdio: 'bogus' }), { code: 'ERR_INVALID_ARG_VALUE' });
  // @ts-expect-error 'ipc' is not supported
  assert.throws(() => spawn('true', [], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'] }), { code: 'ERR_INVALID_ARG_VALUE' });
});

test('stdin reaches the child and its output comes back whole (Node: test-child-process-stdin, -double-pipe) [L2b.node-cases]', async () => {
  const c = spawn('cat');
  let out = '';
  c.stdout.setEncoding('utf8');
  c.stdout.on('data', (d) => (out += d));
  const big = 'x'.repeat(1 << 20);
  c.stdin.end(big);
  const [code] = await new Promise((r) => c.once('close', (...a) => r(a)));
  assert.equal(code, 0);
  assert.equal(out.length, big.length);
  assert.equal(c.connected, false);
});

test("'close' comes after a read(0)-touched stdout, and a 'readable' reader gets all of it (Node: test-child-process-flush-stdio) [L2b.events]", async () => {
  const p = spawn('echo', []);
  p.stdout.read();
  assert.deepEqual(await new Promise((r) => p.once('close', (...a) => r(a))), [0, null]);
  const q = spawn('echo', ['123']);
  const buffer = [];
  q.stdout.on('readable', () => {
    let b;
    while ((b = q.stdout.read()) !== null) buffer.push(b);
  });
  assert.deepEqual(await new Promise((r) => q.once('close', (...a) => r(a))), [0, null]);
  assert.equal(Buffer.concat(buffer).toString().trim(), '123');
});

test('detached: true makes the group a new session; it is cleaned all the same [L2b.options]', async () => {
  const c = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  await new Promise((r) => c.once('spawn', r));
  const st = procStat(c.pid);
  assert.equal(st.sid, c.pid);
  assert.equal(st.pgid, c.pid);
  c.kill('SIGKILL');
  await new Promise((r) => c.once('close', r));
  // @ts-expect-error detached takes a boolean
  assert.throws(() => spawn('true', [], { detached: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
});

test('windowsHide and windowsVerbatimArguments are accepted and mean nothing [L2b.options]', async () => {
  const c = spawn('true', [], { windowsHide: true, windowsVerbatimArguments: true, stdio: 'ignore' });
  const [code] = await new Promise((r) => c.once('close', (...a) => r(a)));
  assert.equal(code, 0);
});

test('Symbol.asyncDispose (what await using calls) stops the group and waits for close [L2b.group]', async () => {
  const c = spawn('sleep', ['300'], { stdio: 'ignore', grace: 100 });
  let closed = false;
  c.once('close', () => (closed = true));
  await new Promise((r) => c.once('spawn', r));
  assert.equal(await c[Symbol.asyncDispose](), undefined);
  assert.ok(closed);
  assert.ok(isGone(c.pid));
});

test('undefined, null and [] all stand for "no args" and the options still apply (Node: test-child-process-spawn-args) [L2b.node-cases]', async () => {
  const dir = tmpdir();
  const outs = await Promise.all(
    [undefined, null, []].map(
      (args) =>
        new Promise((resolve) => {
          const c = spawn('pwd', args, { cwd: dir });
          let o = '';
          c.stdout.on('data', (d) => (o += d));
          c.stdout.on('end', () => resolve(o.trim()));
        }),
    ),
  );
  assert.deepEqual([...new Set(outs)], [dir]);
});

test('a child writing 100,000 bytes to an inherited stdout exits 0 (Node: test-child-process-set-blocking) [L2b.node-cases]', async () => {
  // Run under a parent whose stdout is a pipe, as the test runner's is.
  const code = `
    const { spawn } = require('procpin/child_process');
    const c = spawn('sh', ['-c', 'head -c 100000 /dev/zero | tr "\\\\0" C; echo'], { stdio: 'inherit' });
    c.on('exit', (code) => process.stderr.write('exit ' + code + '\\n'));`;
  const r = await new Promise((resolve) => {
    const p = cp.spawn(process.execPath, ['-e', code], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: new URL('../..', import.meta.url),
    });
    let out = 0;
    let err = '';
    p.stdout.on('data', (d) => (out += d.length));
    p.stderr.on('data', (d) => (err += d));
    p.on('close', () => resolve({ out, err }));
  });
  assert.equal(r.err.trim(), 'exit 0');
  assert.equal(r.out, 100_001);
});
