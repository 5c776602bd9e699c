// stdio of spawned children: pipes behave as child_process's (backpressure, EOF), 'inherit',
// 'ignore', descriptor numbers, overlapping mappings, extra descriptors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnGroup } from '../../dist/index.js';
import { openFds, pkg, procState, runNode, tmpDirFor, waitFor } from '../helpers.mjs';

/**
 * A stream's bytes once it ended: a string in `encoding`, or a Buffer without one.
 * @param {import('node:stream').Readable} stream
 * @param {BufferEncoding | null} [encoding]
 */
function collect(stream, encoding = 'utf8') {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on('data', (d) => chunks.push(d));
    stream.on('end', () => {
      const b = Buffer.concat(chunks);
      resolve(encoding ? b.toString(encoding) : b);
    });
    stream.on('error', reject);
  });
}

async function finish(child) {
  const info = await child.exited;
  child.reap();
  return info;
}

test('a pipe round trip through cat: stdin in, stdout out, end at EOF [L2.spawn.stdio]', async () => {
  const child = spawn('cat');
  assert.ok(child.stdin && child.stdout && child.stderr);
  assert.equal(child.stdio.length, 3);
  // Both are sockets (net.Socket), typed by their one direction.
  assert.equal(/** @type {import('node:net').Socket} */ (child.stdin).readable, false);
  assert.equal(/** @type {import('node:net').Socket} */ (child.stdout).writable, false);
  const out = collect(child.stdout);
  const err = collect(child.stderr);
  child.stdin.write('hello ');
  child.stdin.end('world\n');
  assert.equal(await out, 'hello world\n');
  assert.equal(await err, '');
  assert.equal((await finish(child)).exitCode, 0);
});

test('32 MiB through cat arrive intact, with backpressure on the writer [L2.spawn.stdio]', async () => {
  const data = randomBytes(32 * 1024 * 1024);
  const child = spawn('cat', [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out = collect(child.stdout, null);
  let refused = 0;
  let drains = 0;
  child.stdin.on('drain', () => drains++);
  const chunk = 256 * 1024;
  for (let off = 0; off < data.length; off += chunk) {
    if (!child.stdin.write(data.subarray(off, off + chunk))) {
      refused++;
      await new Promise((r) => child.stdin.once('drain', r));
    }
  }
  child.stdin.end();
  const got = await out;
  assert.ok(refused > 0 && drains > 0, 'write() must have returned false and drained');
  assert.equal(got.length, data.length);
  assert.equal(createHash('sha256').update(got).digest('hex'), createHash('sha256').update(data).digest('hex'));
  assert.equal((await finish(child)).exitCode, 0);
});

test('a child that does not read makes write() return false once the pipe is full [L2.spawn.stdio]', async () => {
  // sleep never reads its stdin; the pipe fills (64 KiB) and the stream buffers the rest.
  const child = spawn('sleep', ['30'], { stdio: ['pipe', 'ignore', 'ignore'] });
  let ok = true;
  let n = 0;
  while (ok && n < 1000) {
    ok = child.stdin.write(Buffer.alloc(64 * 1024));
    n++;
  }
  assert.equal(ok, false);
  assert.ok(n < 1000);
  await waitFor(() => child.stdin.writableLength > 0, { what: 'buffered data' });
  const epipe = new Promise((r) => child.stdin.on('error', r)); // the reader is gone, as with child_process
  child.kill('SIGKILL');
  assert.equal((await epipe).code, 'EPIPE');
  await finish(child);
  child.stdin.destroy();
});

test('stdout delivers the data and ends when the child exits [L2.spawn.stdio]', async () => {
  const child = spawn('sh', ['-c', 'printf abc; exit 4'], { stdio: ['ignore', 'pipe', 'ignore'] });
  assert.equal(child.stdin, null);
  assert.equal(child.stderr, null);
  assert.equal(await collect(child.stdout), 'abc');
  assert.equal((await finish(child)).exitCode, 4);
});

test("the child writing to a closed stdout pipe gets SIGPIPE (Node's SIG_IGN is not inherited) [L2.spawn.signals-reset]", async () => {
  // bounded, so that a child that wrongly ignores SIGPIPE ends too (exit 0) and the test fails
  const child = spawn('sh', ['-c', 'sleep 0.1; i=0; while [ $i -lt 100000 ]; do echo y; i=$((i+1)); done'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  child.stdout.destroy();
  const info = await finish(child);
  assert.equal(info.signal, 'SIGPIPE');
});

test("'inherit' passes this process's descriptors [L2.spawn.stdio]", async () => {
  const r = await runNode(`
    import { spawn } from ${pkg};
    const c = spawn('sh', ['-c', 'echo to-out; echo to-err >&2'], { stdio: 'inherit' });
    await c.exited; c.reap();
  `);
  assert.equal(r.stdout, 'to-out\n');
  assert.equal(r.stderr, 'to-err\n');
});

test("'ignore' gives /dev/null for 0-2 and closes 3+ [L2.spawn.stdio]", async () => {
  const child = spawn('sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore', 'ignore'] });
  await waitFor(() => procState(child.pid) === 'S', { what: 'sleep to sleep' });
  for (const fd of [0, 1, 2]) assert.equal(readlinkSync(`/proc/${child.pid}/fd/${fd}`), '/dev/null');
  assert.throws(() => readlinkSync(`/proc/${child.pid}/fd/3`), { code: 'ENOENT' });
  child.kill('SIGKILL');
  await finish(child);
});

test('a descriptor number maps that descriptor of the parent [L2.spawn.stdio]', async (t) => {
  const dir = tmpDirFor(t);
  const file = join(dir.path, 'out.txt');
  const fd = openSync(file, 'w');
  const child = spawn('sh', ['-c', 'echo into-file'], { stdio: ['ignore', fd, 'inherit'] });
  await finish(child);
  closeSync(fd);
  assert.equal(readFileSync(file, 'utf8'), 'into-file\n');
});

test('overlapping mappings are honoured: stdio [ignore, 2, 1] swaps stdout and stderr [L2.spawn.stdio]', async () => {
  const r = await runNode(`
    import { spawn } from ${pkg};
    const c = spawn('sh', ['-c', 'echo was-out; echo was-err >&2'], { stdio: ['ignore', 2, 1] });
    await c.exited; c.reap();
  `);
  assert.equal(r.stdout, 'was-err\n');
  assert.equal(r.stderr, 'was-out\n');
});

test("null and undefined mean 'pipe' for 0-2; an extra 'pipe' at fd 3 is a duplex socket [L2.spawn.stdio]", async () => {
  const child = spawn('sh', ['-c', 'read line <&3; echo "got $line" >&3; echo out'], {
    stdio: [null, undefined, 'ignore', 'pipe'],
  });
  assert.ok(child.stdin && child.stdout);
  assert.equal(child.stderr, null);
  const fd3 = /** @type {import('node:net').Socket} */ (child.stdio[3]);
  assert.ok(fd3.readable && fd3.writable);
  fd3.write('ping\n');
  let got = '';
  fd3.setEncoding('utf8');
  fd3.on('data', (d) => (got += d));
  const out = collect(child.stdout);
  child.stdin.end();
  assert.equal(await out, 'out\n');
  await waitFor(() => got === 'got ping\n', { what: 'the answer on fd 3' });
  await finish(child);
  fd3.destroy();
});

test('a failed spawn closes the pipes it made [L2.spawn.fail]', () => {
  const n0 = openFds().length;
  for (let i = 0; i < 20; i++) {
    assert.throws(() => spawn('procpin-no-such-program', [], { stdio: ['pipe', 'pipe', 'pipe', 'pipe'] }), {
      code: 'ENOENT',
    });
  }
  assert.equal(openFds().length, n0);
});

test("a child's stdout given to a group's leader as its stdin is read by that leader only: every byte arrives, this process reads none [L2.spawn.stdio]", async (t) => {
  const dir = tmpDirFor(t);
  const file = join(dir.path, 'data');
  const data = randomBytes(4 * 1024 * 1024);
  writeFileSync(file, data);
  const producer = spawn('cat', [file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const group = spawnGroup('sha256sum', { stdio: [producer.stdout, 'pipe', 'inherit'] });
  t.after(() => group[Symbol.asyncDispose]());
  // The handle no longer reads here and the stream is paused, not flowing.
  const out = /** @type {import('node:net').Socket & { _handle: { reading: boolean } }} */ (producer.stdout);
  assert.equal(out._handle.reading, false);
  assert.equal(producer.stdout.readableFlowing, false);
  const sum = collect(group.leader.stdout);
  assert.equal((await group.exited).exitCode, 0);
  assert.equal((await sum).split(' ')[0], createHash('sha256').update(data).digest('hex'));
  assert.equal((await finish(producer)).exitCode, 0);
  assert.equal(out.bytesRead, 0, 'this process read none of the bytes');
  assert.equal(producer.stdout.readableLength, 0);
  producer.stdout.destroy();
});

test('a stream handed to a child is read here again once this process asks: the rest of the bytes come here [L2.spawn.stdio]', async () => {
  const src = spawn('cat', { stdio: ['pipe', 'pipe', 'inherit'] });
  const reader = spawn('head', ['-n1'], { stdio: [src.stdout, 'pipe', 'inherit'] });
  const first = collect(reader.stdout);
  src.stdin.write('one\n');
  assert.equal(await first, 'one\n');
  assert.equal((await finish(reader)).exitCode, 0);
  assert.equal(src.stdout.readableFlowing, false, 'paused while the reader had it');
  const rest = collect(src.stdout);
  src.stdout.resume();
  src.stdin.end('two\n');
  assert.equal(await rest, 'two\n');
  assert.equal((await finish(src)).exitCode, 0);
});

test('a failed spawn leaves a stream given in stdio as it was: this process still reads it [L2.spawn.fail]', async () => {
  const src = spawn('printf', ['kept'], { stdio: ['ignore', 'pipe', 'inherit'] });
  assert.throws(() => spawn('procpin-no-such-program', [], { stdio: [src.stdout, 'pipe', 'pipe'] }), {
    code: 'ENOENT',
  });
  assert.notEqual(src.stdout.readableFlowing, false);
  assert.equal(await collect(src.stdout), 'kept');
  assert.equal((await finish(src)).exitCode, 0);
});
