// SPEC Layer 2 on real processes, the start of a child: spawn failures, the PATH search, cwd,
// process groups, descriptors, the signal mask, parent death, argv and env, refused arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from '../../dist/index.js';
import { binding } from '../../dist/binding.js';
import {
  isGone,
  openFds,
  ourZombies,
  pkg,
  procStat,
  procState,
  procStatus,
  tmpDir as makeTmpDir,
  waitFor,
} from '../helpers.mjs';

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

/** Ends a child this test started: SIGKILL, its exit, the reap. */
async function killAndReap(child) {
  child.kill('SIGKILL');
  await child.exited;
  child.reap();
}

test('a missing program throws ENOENT (execve, path, spawnargs) synchronously and leaves no zombie [L2.spawn.fail]', () => {
  const before = ourZombies();
  assert.throws(
    () => spawn('procpin-no-such-program', ['a', 'b']),
    (/** @type {import('procpin').ProcpinSystemError} */ err) => {
      assert.equal(err.code, 'ENOENT');
      assert.equal(err.errno, -2);
      assert.equal(err.syscall, 'execve');
      assert.equal(err.path, 'procpin-no-such-program');
      assert.deepEqual(err.spawnargs, ['a', 'b']);
      assert.match(err.message, /^ENOENT: no such file or directory, execve/);
      assert.match(err.stack.split('\n')[1], /child-spawn\.test\.mjs/); // stack starts at the caller
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
  await killAndReap(child);
});

test("processGroup 'session' makes the child lead a new session [L2.spawn.group]", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore', processGroup: 'session' });
  const st = procStat(child.pid);
  assert.equal(st.sid, child.pid);
  assert.equal(st.pgid, child.pid);
  await killAndReap(child);
});

test("processGroup 'inherit' leaves the child in our group [L2.spawn.group]", async () => {
  const child = spawn('sleep', ['30'], { stdio: 'ignore', processGroup: 'inherit' });
  const me = procStat(process.pid);
  const st = procStat(child.pid);
  assert.equal(st.pgid, me.pgid);
  assert.equal(st.sid, me.sid);
  await killAndReap(child);
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
    /** @type {Array<'ignore' | 'pipe' | 'inherit' | number>} */
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
    [
      holder.pidfd,
      ...holder.stdio.map((s) => /** @type {{ _handle: { fd: number } }} */ (/** @type {unknown} */ (s))._handle.fd),
    ].map((fd) => readlinkSync(`/proc/self/fd/${fd}`)),
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
  await killAndReap(child);
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
  await killAndReap(child);
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
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { processGroup: 'other' }),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { stdio: 'ipc' }),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { stdio: ['pipe', 'bogus'] }),
  ]) {
    assert.throws(call, { code: 'ERR_INVALID_ARG_VALUE' });
  }
  for (const call of [
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn(1),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', 'x'),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [1]),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], 'x'),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { env: 'x' }),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { closeFds: 'yes' }),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => spawn('true', [], { stdio: 5 }),
  ]) {
    assert.throws(call, { code: 'ERR_INVALID_ARG_TYPE' });
  }
  assert.throws(() => spawn('true', [], { stdio: ['pipe', -1] }), { code: 'ERR_OUT_OF_RANGE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawn('true', [], { parentDeathSignal: 'SIGNOPE' }), {
    code: 'ERR_UNKNOWN_SIGNAL',
  });
});

test('argv or env too large fails with E2BIG, not a crash, and leaves no zombie [L2.spawn.fail]', () => {
  const before = ourZombies();
  // one string longer than MAX_ARG_STRLEN (128 KiB)
  assert.throws(() => spawn('true', ['x'.repeat(256 * 1024)]), { code: 'E2BIG', syscall: 'execve' });
  // a total above the limit (a quarter of the stack limit, 2 MiB here) in many small pieces
  /** @type {Record<string, string>} */
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

test('the addon refuses an out array that is not an Int32Array of 1 + stdio.length with a TypeError, before anything starts [C.args.refused-first]', () => {
  const before = readdirSync('/proc/self/fd').length;
  const noop = () => {};
  const call = (out) =>
    binding.spawn(['/bin/true'], ['true'], '', null, [-2, -2, -2], 0, 0, false, noop, -1, [-1, -1], -1, out);
  for (const out of [new Int32Array(3), new Float64Array(4), new Uint32Array(4), [0, 0, 0, 0], {}, 7]) {
    assert.throws(() => call(out), { name: 'TypeError', message: /out must be an Int32Array/ });
  }
  assert.equal(readdirSync('/proc/self/fd').length, before, 'no descriptor (no pidfd, no /dev/null) left');
  const out = new Int32Array(4).fill(-9);
  const h = /** @type {import('../../dist/binding.js').NativeChildHandle} */ (call(out));
  assert.equal(typeof h.reap, 'function', 'the handle itself');
  assert.ok(out[0] > 0, 'the pid in out[0]');
  assert.deepEqual([...out.subarray(1)], [-1, -1, -1], 'no parent descriptor for ignored stdio');
  h.killAndReap(5000);
});
