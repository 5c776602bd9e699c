// @ts-nocheck -- not type-checked yet: its deliberate wrong-type calls (abuse, validation) are not marked with @ts-expect-error and its inferred types are not declared.
// SPEC Layer 2 on real processes: spawn, Child (exited without reaping, poll, kill, reap, close,
// ref/unref), spawn failures, process groups, descriptors, signals, parent death, openProcess.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import * as procpin from '../../dist/index.js';
import { spawn, openProcess } from '../../dist/index.js';
import {
  isGone,
  need,
  openFds,
  ourZombies,
  pkg,
  procStat,
  procState,
  procStatus,
  runNode,
  tmpDir as makeTmpDir,
  waitFor,
} from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

/** A temporary directory removed when test `t` ends. */
function tmpDir(t) {
  const d = makeTmpDir();
  t.after(() => d[Symbol.dispose]());
  return d;
}

function collect(stream) {
  return new Promise((resolve, reject) => {
    let s = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => (s += d));
    stream.on('end', () => resolve(s));
    stream.on('error', reject);
  });
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
  assert.throws(() => child.kill('SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => child.kill(1.5), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => child.kill({}), { code: 'ERR_INVALID_ARG_TYPE' });
  child.kill('SIGKILL');
  return child.exited.then(() => child.reap());
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

test('a missing program throws ENOENT (execve, path, spawnargs) synchronously and leaves no zombie [L2.spawn.fail]', () => {
  const before = ourZombies();
  assert.throws(
    () => spawn('procpin-no-such-program', ['a', 'b']),
    (err) => {
      assert.equal(err.code, 'ENOENT');
      assert.equal(err.errno, -2);
      assert.equal(err.syscall, 'execve');
      assert.equal(err.path, 'procpin-no-such-program');
      assert.deepEqual(err.spawnargs, ['a', 'b']);
      assert.match(err.message, /^ENOENT: no such file or directory, execve/);
      assert.match(err.stack.split('\n')[1], /child\.test\.mjs/); // stack starts at the caller
      return true;
    },
  );
  assert.deepEqual(ourZombies(), before);
});

test('a file without execute permission throws EACCES and leaves no zombie [L2.spawn.fail]', (t) => {
  const dir = tmpDir(t);
  const file = join(dir.path, 'noexec');
  writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  const before = ourZombies();
  assert.throws(() => spawn(file), { code: 'EACCES', syscall: 'execve', path: file });
  // as execvp: EACCES is remembered while the search goes on, and reported when nothing ran
  assert.throws(() => spawn('noexec', [], { env: { PATH: `${dir.path}:/nonexistent-dir` } }), {
    code: 'EACCES',
    syscall: 'execve',
  });
  assert.deepEqual(ourZombies(), before);
});

test('the PATH search skips an entry that cannot run and runs a later one [L2.spawn.exec]', async (t) => {
  const a = tmpDir(t);
  const b = tmpDir(t);
  writeFileSync(join(a.path, 'prog'), '#!/bin/sh\nexit 1\n', { mode: 0o644 });
  writeFileSync(join(b.path, 'prog'), '#!/bin/sh\nexit 7\n', { mode: 0o755 });
  const child = spawn('prog', [], {
    env: { PATH: `/nonexistent-dir:${a.path}:${b.path}` },
    stdio: 'ignore',
  });
  assert.equal((await child.exited).exitCode, 7);
  child.reap();
});

test('a missing cwd throws ENOENT with syscall chdir and the cwd as path, leaving no zombie [L2.spawn.fail]', () => {
  const before = ourZombies();
  assert.throws(() => spawn('true', [], { cwd: '/nonexistent-procpin-dir' }), {
    code: 'ENOENT',
    syscall: 'chdir',
    path: '/nonexistent-procpin-dir',
  });
  assert.deepEqual(ourZombies(), before);
});

test('cwd sets the working directory (a string or a file: URL) [L2.spawn.exec]', async (t) => {
  const dir = tmpDir(t);
  for (const cwd of [dir.path, new URL(`file://${dir.path}`)]) {
    const child = spawn('pwd', [], { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
    assert.equal((await collect(child.stdout)).trim(), dir.path);
    await child.exited;
    child.reap();
  }
});

test("processGroup 'new' (the default) makes the child lead a group of its own [L2.spawn.group]", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const st = procStat(child.pid);
  assert.equal(st.pgid, child.pid);
  assert.equal(st.sid, procStat(process.pid).sid);
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
});

test("processGroup 'session' makes the child lead a new session [L2.spawn.group]", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore', processGroup: 'session' });
  const st = procStat(child.pid);
  assert.equal(st.sid, child.pid);
  assert.equal(st.pgid, child.pid);
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
});

test("processGroup 'inherit' leaves the child in our group [L2.spawn.group]", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore', processGroup: 'inherit' });
  const me = procStat(process.pid);
  const st = procStat(child.pid);
  assert.equal(st.pgid, me.pgid);
  assert.equal(st.sid, me.sid);
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
});

// Node marks the low descriptors it inherits close-on-exec at startup; one at 100 keeps the
// flag off, so a node process started with it there holds a descriptor that exec would pass on.
const fdScript = `
import { spawn } from ${pkg};
import { readdirSync, readFileSync } from 'node:fs';
const flags = parseInt(/flags:\\s+(\\d+)/.exec(readFileSync('/proc/self/fdinfo/100', 'utf8'))[1], 8);
const closeFds = process.argv[1] === 'keep' ? false : true;
const child = spawn('sleep', ['30'], { stdio: ['ignore', 'ignore', 'ignore'], closeFds });
// clone returns once execve has replaced the memory, a moment before the kernel closes the
// close-on-exec descriptors: look once sleep sleeps.
const state = () => readFileSync('/proc/' + child.pid + '/stat', 'utf8').split(') ')[1][0];
for (let i = 0; i < 5000 && state() !== 'S'; i++) await new Promise((r) => setTimeout(r, 1));
const fds = readdirSync('/proc/' + child.pid + '/fd').map(Number).sort((a, b) => a - b);
child.kill('SIGKILL');
await child.exited;
child.reap();
console.log(JSON.stringify({ cloexec: (flags & 0o2000000) !== 0, fds }));
`;

function runWithFd100(args) {
  return new Promise((resolve, reject) => {
    const fd = openSync('/dev/null', 'r');
    const stdio = ['ignore', 'pipe', 'inherit'];
    for (let i = 3; i < 100; i++) stdio.push('ignore');
    stdio.push(fd);
    const p = cpSpawn(process.execPath, ['--input-type=module', '-e', fdScript, ...args], { stdio });
    closeSync(fd);
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))));
  });
}

test('the child sees only fds 0-2, even when the parent holds a descriptor without close-on-exec [L2.spawn.close-fds]', async () => {
  const r = await runWithFd100([]);
  assert.equal(r.cloexec, false, 'the fixture must hold fd 100 without close-on-exec');
  assert.deepEqual(r.fds, [0, 1, 2]);
  // closeFds: false lets it through: the check above can fail
  const keep = await runWithFd100(['keep']);
  assert.ok(keep.fds.includes(100), String(keep.fds));
});

test('our own descriptors (pidfds, pipes) never reach a child, even with closeFds false [L2.spawn.close-fds]', async () => {
  const holder = spawn('sleep', ['30'], { stdio: 'pipe' });
  const ours = new Set(
    [holder.pidfd, ...holder.stdio.map((s) => s._handle.fd)].map((fd) => readlinkSync(`/proc/self/fd/${fd}`)),
  );
  assert.equal(ours.size, 4);
  const child = spawn('sleep', ['30'], { stdio: 'ignore', closeFds: false });
  // clone returns once execve has replaced the memory, a moment before the kernel closes the
  // close-on-exec descriptors: look once sleep sleeps.
  await waitFor(() => procState(child.pid) === 'S', { what: 'sleep to sleep' });
  for (const fd of readdirSync(`/proc/${child.pid}/fd`)) {
    const target = readlinkSync(`/proc/${child.pid}/fd/${fd}`);
    assert.ok(!ours.has(target), `fd ${fd} (${target}) reached the child`);
    assert.notEqual(target, 'anon_inode:[pidfd]');
  }
  for (const c of [holder, child]) {
    c.kill('SIGKILL');
    await c.exited;
    c.reap();
  }
  for (const s of holder.stdio) s.destroy();
});

test('the child starts with an empty signal mask and default dispositions (SIGPIPE not ignored) [L2.spawn.signals-reset]', async () => {
  const mine = procStatus(process.pid);
  assert.notEqual(BigInt(`0x${mine.SigIgn}`) & (1n << 12n), 0n, 'Node ignores SIGPIPE in the parent');
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const st = procStatus(child.pid);
  assert.equal(st.SigBlk, '0000000000000000');
  assert.equal(st.SigIgn, '0000000000000000');
  // (SigCgt is the program's own business: execve resets handlers, and a sanitizer run's
  // LD_PRELOAD installs some in every program.)
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
});

test('the pidfd is close-on-exec, blocking, and refers to the child; reap() closes it [L2.spawn.pidfd]', async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const fd = child.pidfd;
  assert.ok(fd > 2);
  const info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
  assert.match(info, new RegExp(`^Pid:\\s+${child.pid}$`, 'm'));
  const flags = parseInt(/flags:\s+(\d+)/.exec(info)[1], 8);
  assert.notEqual(flags & 0o2000000, 0, 'O_CLOEXEC');
  assert.equal(flags & 0o4000, 0, 'not O_NONBLOCK (a blocking waitid(P_PIDFD) must wait)');
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
  assert.equal(child.pidfd, -1);
  assert.equal(openFds().includes(fd), false);
});

test('parentDeathSignal kills the child when its parent is SIGKILLed; without it the child lives on [L2.spawn.pdeathsig]', async () => {
  const inner = (sig) => `
    import { spawn } from ${pkg};
    const c = spawn('sleep', ['60'], { stdio: 'ignore', parentDeathSignal: ${sig} });
    console.log(c.pid);
    setInterval(() => {}, 1000);
  `;
  for (const sig of ["'SIGKILL'", 'null']) {
    const parent = spawn(process.execPath, ['--input-type=module', '-e', inner(sig)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    parent.stdout.setEncoding('utf8');
    parent.stdout.on('data', (d) => (out += d));
    await waitFor(() => out.includes('\n'), { what: 'the grandchild pid', timeout: 10000 });
    const pid = Number(out.trim());
    assert.equal(procStat(pid).ppid, parent.pid);
    parent.kill('SIGKILL');
    await parent.exited;
    parent.reap();
    if (sig === 'null') {
      await new Promise((r) => setTimeout(r, 200)); // a bounded look: it must still be there
      assert.equal(isGone(pid), false, 'without parentDeathSignal the child survives');
      assert.match(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), /^sleep\0/);
      process.kill(pid, 'SIGKILL');
    } else {
      await waitFor(() => isGone(pid), { what: 'the grandchild to die', timeout: 5000 });
    }
  }
});

test('parentDeathSignal catches a parent that died before the child set it (the re-check) [L2.spawn.pdeathsig]', async () => {
  // The child re-checks getppid() after the prctl; a parent that is still there must not trip it.
  const child = spawn('sh', ['-c', 'exit 3'], { stdio: 'ignore', parentDeathSignal: 'SIGTERM' });
  assert.equal((await child.exited).exitCode, 3);
  child.reap();
});

test('argv0 sets argv[0]; args reach the program unchanged [L2.spawn.exec]', async () => {
  const child = spawn('cat', ['/proc/self/cmdline'], {
    argv0: 'procpin-cat',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  assert.equal(await collect(child.stdout), 'procpin-cat\0/proc/self/cmdline\0');
  await child.exited;
  child.reap();
  const echo = spawn('printf', ['%s|', 'a b', '', 'ü'], { stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(await collect(echo.stdout), 'a b||ü|');
  await echo.exited;
  echo.reap();
});

test('env replaces the environment, skips undefined values, and its PATH is searched [L2.spawn.exec]', async () => {
  const child = spawn('/usr/bin/env', [], {
    env: { FOO: 'bar', NUM: 1, GONE: undefined, PATH: '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  assert.deepEqual((await collect(child.stdout)).trim().split('\n').sort(), ['FOO=bar', 'NUM=1', 'PATH=/usr/bin:/bin']);
  await child.exited;
  child.reap();
  assert.throws(() => spawn('env', [], { env: { PATH: '/nonexistent-dir' } }), { code: 'ENOENT' });
});

test('strings with NUL bytes and bad options are refused before anything starts [C.args.refused-first]', () => {
  const nul = 'a\u0000b';
  for (const call of [
    () => spawn(nul),
    () => spawn('true', [nul]),
    () => spawn('true', [], { cwd: nul }),
    () => spawn('true', [], { argv0: nul }),
    () => spawn('true', [], { env: { A: nul } }),
    () => spawn('true', [], { env: { [nul]: 'x' } }),
    () => spawn(''),
    () => spawn('true', [], { processGroup: 'other' }),
    () => spawn('true', [], { stdio: 'ipc' }),
    () => spawn('true', [], { stdio: ['pipe', 'bogus'] }),
  ]) {
    assert.throws(call, { code: 'ERR_INVALID_ARG_VALUE' });
  }
  for (const call of [
    () => spawn(1),
    () => spawn('true', 'x'),
    () => spawn('true', [1]),
    () => spawn('true', [], 'x'),
    () => spawn('true', [], { env: 'x' }),
    () => spawn('true', [], { closeFds: 'yes' }),
    () => spawn('true', [], { stdio: 5 }),
  ]) {
    assert.throws(call, { code: 'ERR_INVALID_ARG_TYPE' });
  }
  assert.throws(() => spawn('true', [], { stdio: ['pipe', -1] }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => spawn('true', [], { parentDeathSignal: 'SIGNOPE' }), {
    code: 'ERR_UNKNOWN_SIGNAL',
  });
});

test('argv or env too large fails with E2BIG, not a crash, and leaves no zombie [L2.spawn.fail]', () => {
  const before = ourZombies();
  // one string longer than MAX_ARG_STRLEN (128 KiB)
  assert.throws(() => spawn('true', ['x'.repeat(256 * 1024)]), { code: 'E2BIG', syscall: 'execve' });
  // a total above the limit (a quarter of the stack limit, 2 MiB here) in many small pieces
  const env = {};
  for (let i = 0; i < 400; i++) env[`V${i}`] = 'y'.repeat(64 * 1024);
  assert.throws(() => spawn('true', [], { env }), { code: 'E2BIG' });
  assert.deepEqual(ourZombies(), before);
});

test('spawn(file, options) works without args [L2.spawn.exec]', async () => {
  const child = spawn('true', { stdio: 'ignore' });
  assert.equal((await child.exited).exitCode, 0);
  child.reap();
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
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const fdsBefore = openFds().length;
  let pid;
  (() => {
    pid = spawn('true', [], { stdio: 'ignore' }).pid;
  })();
  await waitFor(() => procState(pid) === 'Z', { what: 'the zombie' });
  await waitFor(
    async () => {
      gc();
      await new Promise((r) => setImmediate(r));
      return procState(pid) === null;
    },
    { what: 'the collected Child to be reaped', timeout: 10000 },
  );
  await waitFor(() => openFds().length <= fdsBefore, { what: 'the pidfd to be closed' });
});

test('an unreachable running Child is reaped when it exits later [L2.lifetime]', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  let pid;
  (() => {
    const c = spawn('sleep', ['30'], { stdio: 'ignore' });
    void c.exited.then(() => {}); // nothing keeps the Child itself
    pid = c.pid;
  })();
  gc();
  await new Promise((r) => setImmediate(r));
  process.kill(pid, 'SIGKILL');
  await waitFor(
    async () => {
      gc();
      await new Promise((r) => setImmediate(r));
      return procState(pid) === null;
    },
    { what: 'the child to be reaped', timeout: 10000 },
  );
});

test('awaiting exited keeps the Child alive: the promise resolves though nothing else holds it [L2.lifetime]', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
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
  assert.throws(() => new procpin.Child(), TypeError);
  assert.throws(() => new procpin.ProcessHandle(), TypeError);
});
