// SPEC Layer 2, spawn: "`file` resolves through PATH as execvp does" and "Bad arguments are refused
// before any syscall ... as Node's validators do".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from '../../dist/index.js';
import { openFds, tmpDirFor } from '../helpers.mjs';

test('an executable script without #! runs through /bin/sh with its arguments, as execvp and child_process run it [L2.spawn.exec]', async (t) => {
  const dir = tmpDirFor(t, 'procpin-noshebang-');
  const file = join(dir.path, 'script');
  writeFileSync(file, 'exit $(($1 + $#))\n');
  chmodSync(file, 0o755);
  assert.equal(spawnSync(file, ['5']).status, 6, 'child_process runs it');
  const c = spawn(file, ['5'], { stdio: 'ignore' });
  const info = await c.exited;
  c.reap();
  assert.equal(info.exitCode, 6);
  // Without arguments too (argv is then just the script's path).
  const d = spawn(file, [], { stdio: 'ignore' });
  const none = await d.exited;
  d.reap();
  assert.equal(none.exitCode, 0);
});

test('an env value that cannot become a string is refused before anything starts, not passed as "Symbol(x)" [C.args.refused-first]', () => {
  const before = openFds();
  // @ts-expect-error a symbol env value: it must be refused
  assert.throws(() => spawn('true', [], { env: { A: Symbol('x') }, stdio: 'ignore' }), TypeError);
  assert.deepEqual(openFds(), before);
});

test('without options.env the child gets process.env as it is now, set and deleted variables included [L2.spawn.exec]', async () => {
  process.env.PROCPIN_SPEC_SET = 'yes';
  process.env.PROCPIN_SPEC_GONE = 'still here';
  delete process.env.PROCPIN_SPEC_GONE;
  try {
    const c = spawn('sh', ['-c', 'test "$PROCPIN_SPEC_SET" = yes && test -z "${PROCPIN_SPEC_GONE+x}"'], {
      stdio: 'ignore',
    });
    const info = await c.exited;
    c.reap();
    assert.equal(info.exitCode, 0);
  } finally {
    delete process.env.PROCPIN_SPEC_SET;
  }
});

test('without options.env the child gets exactly process.env, in its order, with empty, non-ASCII and "=" values intact [L2.spawn.exec]', async () => {
  process.env.PROCPIN_SPEC_EMPTY = '';
  process.env.PROCPIN_SPEC_EQ = 'a=b==c';
  process.env.PROCPIN_SPEC_UTF8 = 'grüße, 世界';
  try {
    const c = spawn('cat', ['/proc/self/environ'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks = [];
    for await (const chunk of c.stdout) chunks.push(chunk);
    const info = await c.exited;
    c.reap();
    assert.equal(info.exitCode, 0);
    const seen = Buffer.concat(chunks).toString('utf8').split('\0').slice(0, -1);
    assert.deepEqual(
      seen,
      Object.keys(process.env).map((k) => `${k}=${process.env[k]}`),
    );
  } finally {
    delete process.env.PROCPIN_SPEC_EMPTY;
    delete process.env.PROCPIN_SPEC_EQ;
    delete process.env.PROCPIN_SPEC_UTF8;
  }
});

test("without options.env a variable set on process.env's own prototype reaches the child, as for...in reads it, and Object.prototype's does not [L2.spawn.exec]", async () => {
  const proto = Object.getPrototypeOf(process.env);
  proto.PROCPIN_SPEC_PROTO = 'from the prototype';
  // @ts-expect-error polluting every object on purpose
  Object.prototype.PROCPIN_SPEC_POLLUTED = 'polluted';
  try {
    const c = spawn(
      'sh',
      ['-c', 'test "$PROCPIN_SPEC_PROTO" = "from the prototype" && test -z "${PROCPIN_SPEC_POLLUTED+x}"'],
      { stdio: 'ignore' },
    );
    const info = await c.exited;
    c.reap();
    assert.equal(info.exitCode, 0);
  } finally {
    delete proto.PROCPIN_SPEC_PROTO;
    // @ts-expect-error see above
    delete Object.prototype.PROCPIN_SPEC_POLLUTED;
  }
});

test("a child spawned from a Worker gets the Worker's own process.env [L2.spawn.exec]", async () => {
  const { Worker } = await import('node:worker_threads');
  const code = `
    const { parentPort } = require('node:worker_threads');
    const { spawn } = require(${JSON.stringify(new URL('../../dist/index.js', import.meta.url).pathname)});
    process.env.PROCPIN_SPEC_WORKER = 'worker';
    const c = spawn('sh', ['-c', 'test "$PROCPIN_SPEC_WORKER" = worker'], { stdio: 'ignore' });
    c.exited.then((i) => { c.reap(); parentPort.postMessage(i.exitCode); });`;
  const w = new Worker(code, { eval: true });
  const exitCode = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  assert.equal(exitCode, 0);
  assert.equal(process.env.PROCPIN_SPEC_WORKER, undefined);
});
