// More of Node's own test/parallel/test-child-process-* cases about spawn on Linux, rewritten
// (not copied) against procpin/child_process; docs/child_process.md lists them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { readlinkSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'procpin/child_process';

const root = new URL('../..', import.meta.url);

/** Resolves with [code, signal] at 'close'; rejects on 'error'. */
function closed(child) {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve([code, signal]));
  });
}

function text(stream) {
  let s = '';
  stream.setEncoding('utf8');
  stream.on('data', (d) => (s += d));
  return () => s;
}

test("a grandchild started with stdio 'inherit' reads and writes its parent's pipes (Node: test-child-process-stdio-inherit) [L2b.node-cases]", async () => {
  const parent = `import { spawn } from 'procpin/child_process';
    spawn('cat', { stdio: 'inherit' }).on('close', (code) => process.exit(code));`;
  const c = spawn(process.execPath, ['--input-type=module', '-e', parent], { cwd: root });
  const out = text(c.stdout);
  const err = text(c.stderr);
  c.stdin.end('asdfasdf');
  assert.deepEqual(await closed(c), [0, null], err());
  assert.equal(out(), 'asdfasdf');
});

test("two children's stdout given one child's stdin merge into it: (cat; cat) | cat (Node: test-child-process-stdio-merge-stdouts-into-cat) [L2b.node-cases]", async () => {
  const p3 = spawn('cat', { stdio: ['pipe', 'pipe', process.stderr] });
  const p1 = spawn('cat', { stdio: ['pipe', p3.stdin, process.stderr] });
  const p2 = spawn('cat', { stdio: ['pipe', p3.stdin, process.stderr] });
  const ends = Promise.all([closed(p1), closed(p2), closed(p3)]);
  p3.stdout.setEncoding('utf8');
  const next = () => new Promise((r) => p3.stdout.once('data', r));
  // One at a time, so that the order is the order written.
  p1.stdin.end('hello\n');
  assert.equal(await next(), 'hello\n');
  p2.stdin.end('world\n');
  assert.equal(await next(), 'world\n');
  p3.stdin.end('foobar\n');
  assert.equal(await next(), 'foobar\n');
  assert.deepEqual(await ends, [
    [0, null],
    [0, null],
    [0, null],
  ]);
});

// A child's stdout handed to another child is no longer read here (as child_process: the handle
// stops reading, the stream is paused); reading it again is the parent's choice.
test("a child's stdout given as another child's stdin can be read once that child exited (Node: test-child-process-stdio-reuse-readable-stdio) [L2b.node-cases]", async () => {
  const p1 = spawn('cat', { stdio: ['pipe', 'pipe', 'inherit'] });
  const p2 = spawn('head', ['-n1'], { stdio: [p1.stdout, 'pipe', 'inherit'] });
  const end1 = closed(p1);
  const exit2 = new Promise((r) => p2.once('exit', r));
  p2.stdout.setEncoding('utf8');
  const first = new Promise((r) => p2.stdout.once('data', r));
  p1.stdin.write('hello\n');
  assert.equal(await first, 'hello\n');
  await exit2;
  p1.stdout.setEncoding('utf8');
  const second = new Promise((r) => p1.stdout.once('data', r));
  // Paused, as child_process leaves it: reading it again is asked for.
  p1.stdout.resume();
  p1.stdin.end('world\n');
  assert.equal(await second, 'world\n');
  assert.deepEqual(await end1, [0, null]);
});

test('a node child that logs 202 lines and calls process.exit(0) delivers all of them (Node: test-child-process-stdout-flush-exit) [L2b.node-cases]', async () => {
  const code =
    "console.log('hello'); for (let i = 0; i < 200; i++) console.log('filler'); console.log('goodbye'); process.exit(0)";
  const c = spawn(process.execPath, ['-e', code]);
  const out = text(c.stdout);
  const err = text(c.stderr);
  assert.deepEqual(await closed(c), [0, null]);
  assert.equal(err(), '');
  assert.ok(out().startsWith('hello\n'));
  assert.ok(out().endsWith('filler\ngoodbye\n'));
  assert.equal(out().split('\n').length, 203);
});

test('a node child can write to its stdout pipe without throwing (Node: test-child-process-can-write-to-stdout) [L2b.node-cases]', async () => {
  const c = spawn(process.execPath, ['-e', "console.log('hello, world!')"]);
  const out = text(c.stdout);
  const exit = new Promise((r) => c.once('exit', (code, signal) => r([code, signal])));
  assert.deepEqual(await closed(c), [0, null]);
  assert.deepEqual(await exit, [0, null]);
  assert.equal(out(), 'hello, world!\n');
});

test('cat <file> | grep x | wc -c moves 1 MiB through children chained by their streams (Node: test-child-process-pipe-dataflow) [L2b.node-cases]', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'procpin-dataflow-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'data.txt');
  const buf = Buffer.alloc(1024 * 1024, 'x');
  for (let i = 0; i < 1024; i++) buf[i * 1024] = 10; // lines, so that grep's buffering splits the flow
  writeFileSync(file, buf);
  const cat = spawn('cat', [file]);
  const grep = spawn('grep', ['x'], { stdio: [cat.stdout, 'pipe', 'pipe'] });
  const wc = spawn('wc', ['-c'], { stdio: [grep.stdout, 'pipe', 'pipe'] });
  // As Node's case checks: this process never starts reading the handed-over streams.
  const handed = [cat.stdout, grep.stdout];
  t.after(() => handed.forEach((s) => s.destroy()));
  for (const s of handed) {
    /** @type {{ _handle: { readStart: () => void } }} */ (/** @type {unknown} */ (s))._handle.readStart = () =>
      assert.fail('read by the parent');
  }
  const errs = [cat, grep, wc].map((c) => text(c.stderr));
  const out = text(wc.stdout);
  // 'exit' for the two whose stdout was handed over: their 'close' waits for that stream,
  // which nobody here reads (as in child_process).
  const exited = (c) => new Promise((r) => c.once('exit', (code, signal) => r([code, signal])));
  const ends = await Promise.all([exited(cat), exited(grep), closed(wc)]);
  assert.deepEqual(
    ends,
    [
      [0, null],
      [0, null],
      [0, null],
    ],
    errs.map((e) => e()).join(''),
  );
  assert.equal(errs.map((e) => e()).join(''), '');
  // 1024 newlines replaced x's, and grep adds none: still 1 MiB.
  assert.equal(out().trim(), String(1024 * 1024));
});

test('Symbol.dispose kills the child at once (killed is true right away), exit says SIGTERM, both outputs end (Node: test-child-process-destroy) [L2b.node-cases]', async () => {
  const c = spawn('cat');
  const ended = [c.stdout, c.stderr].map((s) => new Promise((r) => s.once('end', r)));
  c.stderr.on('data', () => assert.fail('no stderr output'));
  const exits = [1, 2].map(() => new Promise((r) => c.once('exit', (code, signal) => r([code, signal, c.signalCode]))));
  c.stdout.resume();
  c.stderr.resume();
  assert.equal(c.signalCode, null);
  assert.equal(c.killed, false);
  c[Symbol.dispose]();
  assert.equal(c.killed, true);
  assert.deepEqual(await Promise.all(exits), [
    [null, 'SIGTERM', 'SIGTERM'],
    [null, 'SIGTERM', 'SIGTERM'],
  ]);
  await Promise.all(ended);
  assert.deepEqual(await closed(c), [null, 'SIGTERM']);
});

test('stdio is validated as child_process does: a bad string or a number throws, a short array is padded with pipes, Streams give their descriptors (Node: test-child-process-validate-stdio) [L2b.options]', async () => {
  for (const stdio of ['foo', 600]) {
    // @ts-expect-error bad stdio values and an options object in place of args: each is refused
    assert.throws(() => spawn('true', { stdio }), { code: 'ERR_INVALID_ARG_VALUE' });
    // @ts-expect-error the same, to child_process
    assert.throws(() => cp.spawn('true', { stdio }), { code: 'ERR_INVALID_ARG_VALUE' });
  }
  const short = spawn('true', { stdio: [] });
  assert.ok(short.stdin && short.stdout && short.stderr, 'three pipes for []');
  assert.equal(short.stdio.length, 3);
  assert.deepEqual(await closed(short), [0, null]);
  const c = spawn('sleep', ['30'], { stdio: [process.stdin, process.stdout, process.stderr] });
  assert.deepEqual([c.stdin, c.stdout, c.stderr], [null, null, null]);
  try {
    for (const fd of [0, 1, 2]) {
      assert.equal(readlinkSync(`/proc/${c.pid}/fd/${fd}`), readlinkSync(`/proc/self/fd/${fd}`), `fd ${fd}`);
    }
  } finally {
    c.kill();
  }
  assert.deepEqual(await closed(c), [null, 'SIGTERM']);
});
