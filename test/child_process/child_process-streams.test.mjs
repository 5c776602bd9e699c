// SPEC Layer 2b, the streams: procpin/child_process behaves as child_process.spawn does (events, order,
// arguments, properties, errors) with a ProcessGroup underneath. The cases named "(Node: ...)"
// are Node's own test/parallel/test-child-process-* cases about spawn on Linux, rewritten here
// against the adapter; docs/child_process.md lists which ones apply.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { spawn } from 'procpin/child_process';

test('stdin written past its buffer and ended before it drained arrives whole (Node: test-child-process-stdio-big-write-end) [L2b.node-cases]', async () => {
  const c = spawn('wc', ['-c']);
  let n = '';
  c.stdout.setEncoding('ascii');
  c.stdout.on('data', (d) => (n += d));
  let sent = 0;
  let size = 0;
  let buf;
  do {
    size += 1024;
    buf = Buffer.alloc(size, '.');
    sent += size;
  } while (c.stdin.write(buf));
  for (let i = 0; i < 100; i++) {
    c.stdin.write(Buffer.alloc(size, '.'));
    sent += size;
  }
  c.stdin.end();
  await new Promise((r) => c.stdout.once('end', r));
  assert.equal(Number(n.trim()), sent);
});

test('a failed start leaves a stream given in stdio as it was: this process still reads all of it [L2b.start-error]', async () => {
  const src = spawn('printf', ['kept'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const bad = spawn('procpin-no-such-program', { stdio: [src.stdout, 'pipe', 'pipe'] });
  const err = await new Promise((r) => bad.once('error', r));
  assert.equal(err.code, 'ENOENT');
  assert.notEqual(src.stdout.readableFlowing, false);
  let got = '';
  src.stdout.setEncoding('utf8').on('data', (d) => (got += d));
  const [code] = await new Promise((r) => src.once('close', (...a) => r(a)));
  assert.equal(code, 0);
  assert.equal(got, 'kept');
});

test("a connected socket given as a child's stdin is read by the child only, and this process still writes to its peer [L2b.options]", async (t) => {
  const net = await import('node:net');
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  t.after(() => server.close());
  const accepted = new Promise((r) => server.once('connection', r));
  const client = net.connect(/** @type {import('node:net').AddressInfo} */ (server.address()).port, '127.0.0.1');
  await new Promise((r) => client.once('connect', r));
  const peer = await accepted;
  t.after(() => (peer.destroy(), client.destroy()));
  const c = spawn('head', ['-c', '6'], { stdio: [client, 'pipe', 'inherit'] });
  let out = '';
  c.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  peer.write('hello\n');
  const [code] = await new Promise((r) => c.once('close', (...a) => r(a)));
  assert.equal(code, 0);
  assert.equal(out, 'hello\n');
  assert.equal(client.bytesRead, 0, 'this process read none of it');
  // The parent's side of the socket still writes.
  const back = new Promise((r) => peer.once('data', r));
  client.write('back');
  assert.equal(String(await back), 'back');
});

for (const [what, file] of [
  ['after a start error', '/nonexistent/procpin-no-such-file'],
  ['after an exit', 'true'],
]) {
  test(`a 'close' listener that throws ${what} is an uncaught exception, as in child_process, not an unhandled rejection [L2b.events]`, () => {
    const script = `
      const { spawn } = require('procpin/child_process');
      process.on('uncaughtException', (err, origin) => {
        process.stdout.write(origin + ' ' + err.message);
        process.exit(0);
      });
      const c = spawn(${JSON.stringify(file)});
      c.on('error', () => {});
      c.on('close', () => { throw new Error('from the listener'); });
    `;
    const r = cp.spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(r.stdout, 'uncaughtException from the listener', r.stderr);
  });
}
