// SPEC Layer 2 on real processes: a Child's life (exited without reaping, poll, kill, reap, close,
// ref/unref, collection), openProcess. The start of a child: test/child/child-spawn.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import * as procpin from '../../dist/index.js';
import { spawn, openProcess } from '../../dist/index.js';
import { isGone, need, openFds, pkg, procState, runNode, waitFor } from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

/** The garbage collector, exposed for this process. */
function exposeGc() {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
}

/** A collection, and a turn of the loop for what it finalized. */
async function collect(gc) {
  gc();
  await new Promise((r) => setImmediate(r));
}

/** Collects until the child `pid` has been reaped (its finalizer's work), with a bound. */
function collectUntilReaped(gc, pid, what) {
  return waitFor(
    async () => {
      await collect(gc);
      return procState(pid) === null;
    },
    { what, timeout: 10000 },
  );
}

test('a child that exits with a code reports CLD_EXITED and that code [L2.exited.unreaped]', async () => {
  const child = spawn('sh', ['-c', 'exit 42'], { stdio: 'ignore' });
  const info = await child.exited;
  assert.equal(info.pid, child.pid);
  assert.equal(info.code, 'CLD_EXITED');
  assert.equal(info.exitCode, 42);
  assert.equal(info.status, 42);
  assert.equal(info.signal, null);
  assert.equal(info.uid, process.getuid());
  assert.deepEqual(child.reap(), info);
});

test('once exited has resolved the pidfd is no longer watched by the event loop, reaped or not (its epoll registration is gone) [L2.exited.unreaped]', async () => {
  const r = await runNode(`
    import * as p from ${pkg};
    import { readdirSync, readlinkSync, readFileSync } from 'node:fs';
    const fds = (kind) => readdirSync('/proc/self/fd').filter((f) => {
      try { return readlinkSync('/proc/self/fd/' + f) === kind; } catch { return false; }
    }).map(Number);
    // The descriptors registered in this process's epoll sets (libuv's loop), from the kernel.
    const watched = () => fds('anon_inode:[eventpoll]').flatMap((e) =>
      [...readFileSync('/proc/self/fdinfo/' + e, 'utf8').matchAll(/^tfd:\\s+(\\d+)/gm)].map((m) => Number(m[1])));
    const pidfdsWatched = () => watched().filter((fd) => fds('anon_inode:[pidfd]').includes(fd)).length;
    const out = {};
    const c = p.spawn('sh', ['-c', 'read x'], { stdio: ['pipe', 'ignore', 'ignore'] });
    // libuv adds a watched descriptor to its epoll set in a later poll phase: wait for it, bounded.
    for (const end = Date.now() + 5000; pidfdsWatched() === 0 && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 1));
    }
    out.running = pidfdsWatched();
    c.stdin.end('go\\n');
    out.info = (await c.exited).exitCode;
    await new Promise((r) => setImmediate(r));
    out.exited = pidfdsWatched();
    out.state = readFileSync('/proc/' + c.pid + '/stat', 'utf8').split(') ')[1][0];
    c.reap();
    out.reaped = pidfdsWatched();
    console.log(JSON.stringify(out));`);
  const line = r.stdout.trim().split('\n').at(-1);
  assert.deepEqual(JSON.parse(line), { running: 1, info: 0, exited: 0, state: 'Z', reaped: 0 }, r.stderr);
});

test('a child killed by a signal reports CLD_KILLED and the signal name [L2.exited.unreaped]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  assert.equal(child.kill('SIGKILL'), true);
  const info = await child.exited;
  assert.equal(info.code, 'CLD_KILLED');
  assert.equal(info.signal, 'SIGKILL');
  assert.equal(info.exitCode, null);
  assert.equal(info.status, 9);
  child.reap();
});

test('after exited the child is a zombie (state Z) until reap(), then its pid is gone [L2.exited.unreaped]', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  await child.exited;
  assert.equal(procState(child.pid), 'Z');
  // still Z a while later: nothing reaps it behind our back
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(procState(child.pid), 'Z');
  assert.equal(child.reaped, false);
  child.reap();
  assert.equal(child.reaped, true);
  assert.equal(procState(child.pid), null);
});

test('poll() is null while the child runs and the exit afterwards, without reaping [L2.poll]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  assert.equal(child.poll(), null);
  child.kill('SIGTERM');
  await waitFor(() => child.poll() !== null, { what: 'poll() to see the exit' });
  const info = child.poll();
  assert.equal(info.signal, 'SIGTERM');
  assert.equal(procState(child.pid), 'Z');
  assert.deepEqual(await child.exited, info);
  assert.deepEqual(child.reap(), info);
  assert.deepEqual(child.poll(), info); // after the reap, what the reap reported
});

test('kill() is true while the child runs and false once it exited, sending nothing to the zombie [L2.kill.exited]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  assert.equal(child.kill(0), true);
  assert.equal(child.kill('SIGTERM'), true);
  const info = await child.exited;
  assert.equal(child.kill('SIGKILL'), false);
  assert.equal(procState(child.pid), 'Z');
  assert.deepEqual(child.poll(), info); // still SIGTERM: the SIGKILL was not sent
  child.reap();
  assert.equal(child.kill('SIGKILL'), false);
});

test('kill() knows the exit even before exited has resolved [L2.kill.exited]', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  // spin without yielding, so that the event loop cannot deliver the exit first
  const end = Date.now() + 5000;
  while (procState(child.pid) !== 'Z' && Date.now() < end);
  assert.equal(procState(child.pid), 'Z');
  assert.equal(child.kill('SIGTERM'), false);
  assert.equal((await child.exited).exitCode, 0);
  child.reap();
});

test('kill() validates its signal like Node does [C.signal.validate]', () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => child.kill('SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => child.kill(1.5), { code: 'ERR_UNKNOWN_SIGNAL' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => child.kill({}), { code: 'ERR_INVALID_ARG_TYPE' });
  child.kill('SIGKILL');
  return child.exited.then(() => {
    child.reap();
  });
});

test('reap() while the child runs throws ERR_PROCPIN_NOT_EXITED and leaves it running [L2.reap.after-exit]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  assert.throws(() => child.reap(), { code: 'ERR_PROCPIN_NOT_EXITED' });
  assert.equal(child.reaped, false);
  assert.notEqual(procState(child.pid), null);
  assert.notEqual(procState(child.pid), 'Z');
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
  assert.equal(procState(child.pid), null);
});

test('close() reaps an exited child, is idempotent, and [Symbol.dispose] closes [C.handle.close-once]', async () => {
  const child = spawn('true', [], { stdio: 'ignore' });
  await child.exited;
  const fd = child.pidfd;
  child.close();
  assert.equal(child.reaped, true);
  assert.equal(procState(child.pid), null);
  assert.equal(openFds().includes(fd), false);
  child.close();
  assert.equal(child.kill(), false);
  assert.equal(child.reap().exitCode, 0);

  const other = spawn('true', [], { stdio: 'ignore' });
  await other.exited;
  other[Symbol.dispose]();
  assert.equal(other.reaped, true);
  assert.equal(procState(other.pid), null);
});

test('close() on a running child leaves it running and reaps it the moment it exits [L2.lifetime]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  child.close();
  assert.equal(child.kill('SIGKILL'), false, 'a closed handle sends nothing');
  assert.ok(!isGone(child.pid));
  process.kill(child.pid, 'SIGKILL'); // safe: unreaped, so the pid is still this child's
  // a closed child no longer keeps the loop alive: wait with a timer
  await waitFor(() => child.reaped, { what: 'the reap at exit' });
  const info = await child.exited;
  assert.equal(info.signal, 'SIGKILL');
  assert.equal(child.reaped, true);
  assert.equal(procState(child.pid), null);
});

test('an unreachable Child is reaped and its pidfd closed once it exited and was collected [L2.lifetime]', async () => {
  const gc = exposeGc();
  const fdsBefore = openFds().length;
  let pid;
  (() => {
    pid = spawn('true', [], { stdio: 'ignore' }).pid;
  })();
  await waitFor(() => procState(pid) === 'Z', { what: 'the zombie' });
  await collectUntilReaped(gc, pid, 'the collected Child to be reaped');
  await waitFor(() => openFds().length <= fdsBefore, { what: 'the pidfd to be closed' });
});

test('an unreachable running Child is reaped when it exits later [L2.lifetime]', async () => {
  const gc = exposeGc();
  let pid;
  (() => {
    const c = spawn('sleep', ['30'], { stdio: 'ignore' });
    void c.exited.then(() => {}); // nothing keeps the Child itself
    pid = c.pid;
  })();
  await collect(gc);
  process.kill(pid, 'SIGKILL');
  await collectUntilReaped(gc, pid, 'the child to be reaped');
});

test('awaiting exited keeps the Child alive: the promise resolves though nothing else holds it [L2.lifetime]', async () => {
  const gc = exposeGc();
  const p = spawn('sh', ['-c', 'sleep 0.2; exit 9'], { stdio: 'ignore' }).exited;
  gc();
  assert.equal((await p).exitCode, 9);
});

test('an unref()ed running child does not keep node alive; a ref()ed one does [L2.lifetime]', async () => {
  const r = await runNode(`
    import { spawn } from ${pkg};
    const c = spawn('sleep', ['30'], { stdio: 'ignore' });
    c.unref();
    console.log(c.pid);
  `);
  assert.equal(r.code, 0, r.stderr);
  const pid = Number(r.stdout.trim());
  // node exited while the child still ran
  assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /^sleep\0/);
  process.kill(pid, 'SIGKILL');

  const t0 = Date.now();
  const r2 = await runNode(`
    import { spawn } from ${pkg};
    const c = spawn('sleep', ['0.5'], { stdio: 'ignore' });
    c.unref();
    c.ref();
    c.exited.then((i) => console.log(i.exitCode));
  `);
  assert.equal(r2.stdout.trim(), '0');
  assert.ok(Date.now() - t0 >= 500);
});

test('exit watching uses no thread per child and leaves child_process children alone [C.loop.no-block]', async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const before = threads();
  const cp = cpSpawn('sh', ['-c', 'exit 5']);
  const cpExit = new Promise((r) => cp.on('exit', (code) => r(code)));
  const kids = Array.from({ length: 20 }, () => spawn('sleep', ['30'], { stdio: 'ignore' }));
  assert.equal(threads(), before);
  assert.equal(await cpExit, 5, "child_process's own exit still arrives");
  for (const k of kids) k.kill('SIGKILL');
  for (const k of kids) {
    await k.exited;
    k.reap();
  }
});

test('spawn throws ERR_PROCPIN_SIGCHLD_IGNORED when SIGCHLD is ignored (SIG_IGN or SA_NOCLDWAIT) [L2.sigchld.ignored]', async (t) => {
  const so = compileC('sigchld_ignore', { output: 'sigchld_ignore.so', shared: true });
  if (!need(t, so !== null, `cc: ${compileC.lastError}`)) return;
  const script = `
    import { spawn } from ${pkg};
    const c = spawn('true', [], { stdio: 'ignore' }); // fine before
    await c.exited; c.reap();
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    try { spawn('true', [], { stdio: 'ignore' }); console.log('spawned'); }
    catch (e) { console.log(e.code); }
  `;
  for (const env of [{}, { PROCPIN_TEST_NOCLDWAIT: '1' }]) {
    const r = await runNode(script, { env });
    assert.equal(r.stdout.trim(), 'ERR_PROCPIN_SIGCHLD_IGNORED', r.stderr);
  }
});

test('openProcess watches a process it did not start: kill, exited, then kill is false [L2.open-process]', async () => {
  const cp = cpSpawn('sleep', ['30']);
  const cpExit = new Promise((r) => cp.on('exit', (code, sig) => r(sig)));
  const h = openProcess(cp.pid);
  assert.equal(h.pid, cp.pid);
  assert.ok(h.pidfd > 2);
  assert.equal(h.kill(0), true);
  assert.equal(h.kill('SIGTERM'), true);
  await h.exited;
  assert.equal(h.kill('SIGKILL'), false);
  assert.equal(await cpExit, 'SIGTERM', 'child_process still reaps its own child');
  const fd = h.pidfd;
  h.close();
  h.close();
  assert.equal(h.pidfd, -1);
  assert.equal(openFds().includes(fd), false);
  assert.equal(h.kill('SIGTERM'), false);
});

test('openProcess on a pid that names no process throws ESRCH; bad pids are refused [L2.open-process]', () => {
  assert.throws(() => openProcess(0x3ffffe), { code: 'ESRCH', syscall: 'pidfd_open', pid: 0x3ffffe });
  assert.throws(() => openProcess(0), { code: 'ERR_OUT_OF_RANGE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => openProcess('1'), { code: 'ERR_INVALID_ARG_TYPE' });
});

test('an unref()ed ProcessHandle does not keep node alive [L2.open-process]', async () => {
  const r = await runNode(`
    import { openProcess } from ${pkg};
    const h = openProcess(1);
    h.unref();
    h.exited.then(() => console.log('never'));
    console.log('done');
  `);
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), 'done');
});

test('Child and ProcessHandle cannot be constructed directly [C.no-crash]', () => {
  // @ts-expect-error constructed directly, on purpose: it must throw
  assert.throws(() => new procpin.Child(), TypeError);
  // @ts-expect-error constructed directly, on purpose: it must throw
  assert.throws(() => new procpin.ProcessHandle(), TypeError);
});
