// SPEC Layer 3a: stop({ signal, grace }) chosen at stop time, `foreground: true` on a terminal,
// and collecting a group's or a child's output with a size limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnGroup, collectOutput, stdioEnded } from '../../dist/index.js';
import { isGone, liveMembers, need, procLib, root, runCmd, tmpDirFor, waitFor } from '../helpers.mjs';

test('stop({ signal }) sends the signal chosen at stop time instead of killSignal [L3a.stop.options]', async () => {
  const g = spawnGroup('sleep', ['300'], { stdio: 'ignore', killSignal: 'SIGTERM' });
  const r = await g.stop({ signal: 'SIGINT' });
  assert.equal(r.signal, 'SIGINT');
  assert.equal(r.stoppedWhileRunning, true);
});

test('stop({ grace }) shortens the wait before SIGKILL for a member that ignores killSignal [L3a.stop.options]', async () => {
  const g = spawnGroup('sh', ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'], { grace: 60_000 });
  await new Promise((r) => g.leader.stdout.once('data', r));
  g.leader.stdout.resume();
  const t0 = performance.now();
  const r = await g.stop({ grace: 50 });
  assert.ok(performance.now() - t0 < 20_000, 'not the group grace of 60 s');
  assert.equal(r.signal, 'SIGKILL');
  assert.equal(r.killed, true);
  assert.deepEqual(liveMembers(g.pgid), []);
});

test('stop() is once: a later stop with other choices gets the same promise; bad choices reject [L3a.stop.once]', async () => {
  const g = spawnGroup('sleep', ['300'], { stdio: 'ignore' });
  const a = g.stop({ signal: 'SIGUSR1' });
  const b = g.stop({ signal: 'SIGINT', grace: 1 });
  assert.equal(a, b);
  assert.equal((await a).signal, 'SIGUSR1');
  const h = spawnGroup('sleep', ['300'], { stdio: 'ignore' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  await assert.rejects(h.stop({ signal: 'SIGNOPE' }), { code: 'ERR_UNKNOWN_SIGNAL' });
  await assert.rejects(h.stop({ grace: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  // @ts-expect-error an option that does not exist, on purpose: it must be refused
  await assert.rejects(h.stop({ sginal: 'SIGINT' }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.equal(h.state, 'running', 'a refused stop starts nothing');
  assert.equal(await h[Symbol.asyncDispose](), undefined, 'asyncDispose resolves to undefined');
  assert.equal(h.state, 'released');
});

test('foreground: true on a terminal: a command that reads a line and runs stty -a completes, and the terminal comes back [L3a.foreground]', async (t) => {
  need(t, spawnSync('sh', ['-c', 'command -v script']).status === 0, 'needs script(1)');
  const dir = tmpDirFor(t, 'procpin-fg-');
  const prog = join(dir.path, 'fg.cjs');
  writeFileSync(
    prog,
    `const { spawnGroup } = require(${JSON.stringify(join(root, 'dist', 'index.js'))});
    const fs = require('node:fs');
    const modes = () => require('node:child_process').execFileSync('stty', ['-g'], { stdio: ['inherit', 'pipe', 'inherit'] }).toString();
    const before = modes();
    const g = spawnGroup('sh', ['-c', 'read line; stty -echo; stty -a > /dev/null && echo "GOT-$line"'], { stdio: 'inherit', foreground: process.argv[2] === 'fg', timeout: process.argv[2] === 'fg' ? 20000 : 1500, grace: 100 });
    g.closed.then(async (r) => {
      const { procStat } = await import(${procLib});
      const me = procStat('self');
      console.log(['RESULT', r.exitCode, r.timedOut, me.tpgid === me.pgid ? 'fg-back' : 'fg-lost', modes() === before ? 'modes-back' : 'modes-changed'].join(' '));
    });`,
  );
  const run = (mode) =>
    runCmd('script', ['-qec', `${process.execPath} ${prog} ${mode}`, '/dev/null'], {
      input: 'hello\n',
      timeout: 60_000,
    });
  const r = await run('fg');
  assert.match(r.stdout, /GOT-hello/);
  assert.match(r.stdout, /RESULT 0 false fg-back modes-back/);
  // Without it the group is in the background: its read stops it (SIGTTIN) until the timeout.
  const bg = await run('bg');
  assert.match(bg.stdout, /RESULT {2}true/, 'exitCode null: stopped until the timeout');
  assert.doesNotMatch(bg.stdout, /GOT-/);
});

test('foreground: true without a controlling terminal does nothing and the group runs as usual [L3a.foreground]', async () => {
  const code = `const { spawnGroup } = require(${JSON.stringify(join(root, 'dist', 'index.js'))});
    spawnGroup('true', [], { stdio: 'ignore', foreground: true }).closed.then((r) => console.log('done', r.exitCode));`;
  const r = await runCmd('setsid', [process.execPath, '-e', code]);
  assert.equal(r.stdout.trim(), 'done 0', r.stderr);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawnGroup('true', [], { foreground: 'yes' }), { code: 'ERR_INVALID_ARG_TYPE' });
});

test('a test runner in a few lines: 20 jobs in parallel, a timeout each, output collected as strings [L3a.options]', async () => {
  const jobs = Array.from({ length: 20 }, (_, i) =>
    collectOutput(
      spawnGroup(
        'sh',
        ['-c', i === 7 ? 'echo slow; exec sleep 300' : `echo out ${i}; echo err ${i} >&2; exit ${i % 3}`],
        { timeout: 2000, grace: 100 },
      ),
    ),
  );
  const results = await Promise.all(jobs);
  results.forEach((r, i) => {
    if (i === 7) {
      assert.equal(r.timedOut, true);
      assert.equal(r.stdout, 'slow\n');
      return;
    }
    assert.equal(r.exitCode, i % 3);
    assert.equal(r.stdout, `out ${i}\n`);
    assert.equal(r.stderr, `err ${i}\n`);
  });
});

test('more than maxBuffer rejects with ERR_CHILD_PROCESS_STDIO_MAXBUFFER after the group was cleaned [L3a.options]', async () => {
  const g = spawnGroup('sh', ['-c', 'sleep 300 & yes'], { grace: 100 });
  const err = /** @type {import('procpin').MaxBufferError<Buffer>} */ (
    await collectOutput(g, { maxBuffer: 10_000, encoding: 'buffer' }).catch((e) => e)
  );
  assert.equal(err.code, 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER');
  assert.ok(err instanceof RangeError);
  assert.equal(err.message, 'stdout maxBuffer length exceeded');
  assert.ok(Buffer.isBuffer(err.stdout));
  assert.equal(err.stdout.length, 10_000);
  assert.equal(g.state, 'released');
  assert.equal(/** @type {import('procpin').GroupResult} */ (err.result).stoppedWhileRunning, true);
  assert.deepEqual(liveMembers(g.pgid), []);
});

test("a Child's output is collected with its exit, and stdioEnded says when the streams closed [L3a.options]", async () => {
  const c = spawn('sh', ['-c', 'printf abc; printf def >&2; exit 4']);
  const r = await collectOutput(c, { encoding: 'latin1' });
  assert.deepEqual([r.exitCode, r.stdout, r.stderr], [4, 'abc', 'def']);
  c.reap();
  const g = spawnGroup('echo', ['x']);
  g.leader.stdout.resume();
  await stdioEnded(g);
  assert.ok(g.leader.stdout.destroyed);
  await g.closed;
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  await assert.rejects(collectOutput({}), { code: 'ERR_INVALID_ARG_TYPE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  await assert.rejects(collectOutput(spawnGroup('true'), { maxBufer: 1 }), { code: 'ERR_INVALID_ARG_VALUE' });
  void isGone;
  void waitFor;
});
