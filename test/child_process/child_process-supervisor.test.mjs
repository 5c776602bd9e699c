// procpin/child_process used as a supervisor uses child_process.spawn: the differences a
// supervisor would trip over, each compared with child_process side by side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { spawn } from 'procpin/child_process';

/** @typedef {(...args: any[]) => any} Spawner either spawn, called with the same arguments */
// Object.prototype, as a test pollutes it with keys of its own.
const proto = /** @type {Record<string, unknown>} */ (Object.prototype);

function events(child) {
  const list = [];
  for (const ev of ['spawn', 'exit', 'error', 'close']) {
    child.on(ev, (...a) => list.push([ev, ...a.map((x) => (x instanceof Error ? x.name : x))]));
  }
  return new Promise((resolve) =>
    child.once('close', () =>
      resolve({ list, killed: child.killed, exitCode: child.exitCode, signalCode: child.signalCode }),
    ),
  );
}

test('a timeout that ends the child sets killed, as child_process does [L2b.group]', async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    for (const killSignal of [undefined, 'SIGKILL']) {
      const r = await events(impl('sleep', ['30'], { timeout: 50, killSignal }));
      assert.equal(r.killed, true, `${impl === spawn ? 'procpin' : 'child_process'} ${killSignal}`);
      assert.equal(r.signalCode, killSignal ?? 'SIGTERM');
    }
  }
});

test('an abort that ends the child sets killed, as child_process does [L2b.group]', async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const ac = new AbortController();
    const c = impl('sleep', ['30'], { signal: ac.signal });
    const ended = events(c);
    c.once('spawn', () => ac.abort());
    const r = await ended;
    assert.equal(r.killed, true);
    assert.deepEqual(
      r.list.map((e) => e[0]),
      ['spawn', 'error', 'exit', 'close'],
    );
  }
});

test("a signal aborted before spawn gives 'spawn' first, then 'error', as child_process does [L2b.events]", async () => {
  const want = (await events(cp.spawn('sleep', ['30'], { signal: AbortSignal.abort() }))).list;
  const got = await events(spawn('sleep', ['30'], { signal: AbortSignal.abort() }));
  assert.deepEqual(got.list, want);
  assert.equal(got.killed, true);
});

test('stdin is destroyed when the child exits: a late write is no uncaught EPIPE, as with child_process [L2b.node-cases]', async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const c = impl('true');
    const errors = [];
    const late = new Promise((resolve) =>
      c.on('exit', () => {
        assert.equal(c.stdin.destroyed, true);
        c.stdin.write('x'.repeat(100_000), (err) => resolve(err?.code));
      }),
    );
    c.stdin.on('error', (e) => errors.push(e.code));
    await events(c);
    assert.equal(await late, 'ERR_STREAM_DESTROYED');
    assert.deepEqual(errors, []);
  }
});

test('an env that inherits from another object (Object.create(process.env)) passes the inherited variables, as child_process does [L2b.options]', async () => {
  const env = Object.create({ ...process.env, PROCPIN_INHERITED: 'yes' });
  env.PROCPIN_OWN = 'own';
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const c = impl('sh', ['-c', 'echo "$PROCPIN_INHERITED $PROCPIN_OWN"'], { env });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    const r = await events(c);
    assert.equal(r.exitCode, 0);
    assert.equal(out.trim(), 'yes own');
  }
});

test('keys polluted onto Object.prototype reach neither the options nor the environment [L2b.options]', async () => {
  proto.PROCPIN_POLLUTED = 'bad';
  proto.shell = true;
  try {
    const c = spawn('sh', ['-c', 'echo "[$PROCPIN_POLLUTED]"'], { env: { PATH: process.env.PATH } });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    const r = await events(c);
    assert.equal(r.exitCode, 0);
    assert.equal(out.trim(), '[]');
    assert.equal(c.spawnfile, 'sh');
  } finally {
    delete proto.PROCPIN_POLLUTED;
    delete proto.shell;
  }
});
