// However the supervisor ends, nothing it started outlives it (SPEC "However the supervisor
// ends"). The supervisor is a child node process with two groups of three live members each (a
// shell leader and two background sleeps that nothing but a group signal reaches); the test ends
// it in one way and asserts its own exit status and 0 members alive afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { isGone, liveMembers, need, pkg, procStat, waitFor } from '../helpers.mjs';
import { endAndCount, idle, killLeft, startSupervisor, supervisorCode, survivors } from './supervisor-helpers.mjs';
import { compileC } from '../oldkernel.mjs';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT'])) {
  test(`a supervisor ended by ${sig} with no listener of its own kills every group and still dies by ${sig} [L3a.end.signal]`, async (t) => {
    await endAndCount(t, {
      code: supervisorCode(idle),
      end: (sup) => sup.kill(sig),
      expect: { code: null, signal: sig },
    });
  });
}

// Every other signal whose default action ends the process, sent by someone else or raised by
// the supervisor itself: the native handler kills the groups and the signal's own default
// action follows (a real fault re-executes and dies the same way).
for (const sig of [
  'SIGUSR2',
  'SIGALRM',
  'SIGVTALRM',
  'SIGPROF',
  'SIGPWR',
  'SIGIO',
  'SIGXCPU',
  'SIGSEGV',
  'SIGBUS',
  'SIGFPE',
  'SIGILL',
  'SIGTRAP',
  'SIGSYS',
]) {
  test(`a supervisor that raises ${sig} kills every group and still dies by ${sig} [L3a.end.signal]`, async (t) => {
    await endAndCount(t, {
      code: supervisorCode(`process.kill(process.pid, '${sig}'); ${idle}`, { go: true }),
      expect: { code: null, signal: sig },
    });
  });
}

for (const [fault, sig] of [
  ['segv', 'SIGSEGV'],
  ['fpe', 'SIGFPE'],
  ['ill', 'SIGILL'],
]) {
  test(`a supervisor that dies of a real ${sig} fault in native code kills every group and still dies by ${sig} [L3a.end.signal]`, async (t) => {
    const so = compileC('real_fault', { output: 'real_fault.so', shared: true });
    if (!need(t, so, `cc to build the faulting library: ${compileC.lastError}`)) return;
    await endAndCount(t, {
      code: supervisorCode(
        `process.env.PROCPIN_FAULT = '${fault}'; process.dlopen({ exports: {} }, ${JSON.stringify(so)});`,
        { go: true },
      ),
      expect: { code: null, signal: sig },
    });
  });
}

test("a WebAssembly out-of-bounds trap (V8's own SIGSEGV) is an exception, not the supervisor's end: its groups live on [L3a.end.signal]", async (t) => {
  // (func (param i32) (result i32) (i32.load (local.get 0))) over one page of memory.
  const wasm = [
    0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 5, 3, 1, 0, 1, 7, 5, 1, 1, 102, 0, 0, 10, 9,
    1, 7, 0, 32, 0, 40, 2, 0, 11,
  ];
  const s = startSupervisor(
    supervisorCode(
      `const { instance } = await WebAssembly.instantiate(new Uint8Array(${JSON.stringify(wasm)}));
      let traps = 0;
      for (let i = 0; i < 200; i++) try { instance.exports.f(1 << 30); } catch (e) { if (e instanceof WebAssembly.RuntimeError) traps++; }
      process.stdout.write('TRAPS ' + traps + ' ' + JSON.stringify(groups.map((g) => count(g.pgid))) + '\\n');
      process.exit(0);`,
      { go: true },
    ),
  );
  const pgids = await s.ready;
  t.after(() => killLeft(pgids));
  s.sup.stdin.write('go\n');
  assert.deepEqual(await s.done, { code: 0, signal: null }, s.output());
  assert.match(s.output(), /TRAPS 200 \[3,3\]/);
  assert.deepEqual(await survivors(pgids), []);
});

test('a supervisor that spends its CPU limit (SIGXCPU) kills every group and dies by SIGXCPU [L3a.end.signal]', async (t) => {
  await endAndCount(t, {
    prefix: 'ulimit -St 1;',
    code: supervisorCode('for (;;);', { go: true }),
    expect: { code: null, signal: 'SIGXCPU' },
  });
});

for (const sig of /** @type {const} */ (['SIGTERM', 'SIGINT', 'SIGHUP'])) {
  test(`a supervisor whose groups a Worker spawned, ended by ${sig} with no listener, kills them and still dies by ${sig} [L3a.end.signal]`, async (t) => {
    // The main thread never loaded procpin: no JavaScript listener of procpin's is there.
    const code = `
      const { Worker } = await import('node:worker_threads');
      const w = new Worker(${JSON.stringify(`(async () => { ${supervisorCode(idle)} })()`)}, { eval: true, stdout: true });
      w.stdout.on('data', (d) => process.stdout.write(d));`;
    await endAndCount(t, { code, end: (sup) => sup.kill(sig), expect: { code: null, signal: sig } });
  });
}

test('a supervisor whose application listens for SIGTERM lets it decide, and its exit still kills every group [L3a.end.signal]', async (t) => {
  await endAndCount(t, {
    code: supervisorCode(`process.on('SIGTERM', () => setTimeout(() => process.exit(9), 20)); ${idle}`),
    end: (sup) => sup.kill('SIGTERM'),
    expect: { code: 9, signal: null },
  });
});

test('a supervisor that calls abort() kills every group and still dies by SIGABRT [L3a.end.abort]', async (t) => {
  await endAndCount(t, {
    code: supervisorCode('process.abort();', { go: true }),
    expect: { code: null, signal: 'SIGABRT' },
  });
});

test('a supervisor that runs out of memory kills every group and still dies by SIGABRT [L3a.end.abort]', async (t) => {
  await endAndCount(t, {
    nodeArgs: ['--max-old-space-size=16'],
    code: supervisorCode('const hog = []; for (;;) hog.push(new Array(1e5).fill({ x: Math.random() }));', { go: true }),
    expect: { code: null, signal: 'SIGABRT' },
  });
});

test("a supervisor ended by process.exit() in another library's 'exit' listener kills every group [L3a.end.exit]", async (t) => {
  // That listener is registered before procpin's, so procpin's 'exit' listener never runs.
  await endAndCount(t, {
    code: supervisorCode('process.exit(0);', { before: "process.on('exit', () => process.exit(5));", go: true }),
    expect: { code: 5, signal: null },
  });
});

test('a supervisor ended by process.reallyExit kills every group [L3a.end.exit]', async (t) => {
  await endAndCount(t, {
    code: supervisorCode('process.reallyExit(7);', { go: true }),
    expect: { code: 7, signal: null },
  });
});

test('a supervisor ended by an uncaught exception kills every group [L3a.end.exit]', async (t) => {
  await endAndCount(t, {
    code: supervisorCode("setTimeout(() => { throw new Error('boom'); }, 1);", { go: true }),
    expect: { code: 1, signal: null },
  });
});

test('a supervisor whose event loop runs dry with unreferenced groups kills them as it exits [L3a.end.exit]', async (t) => {
  await endAndCount(t, {
    code: supervisorCode('for (const g of groups) g.leader.unref();', { go: true }),
    expect: { code: 0, signal: null },
  });
});

test('^C typed at a terminal reaches the groups that are not in the foreground, and the supervisor dies by SIGINT [L3a.end.signal]', async (t) => {
  if (!need(t, has('python3'), 'python3 (pty module) for a pseudo-terminal')) return;
  // python3 runs the supervisor on a new pseudo-terminal (pty.fork: a new session whose
  // foreground group is the supervisor's), waits for READY, types ^C and reports the status.
  const code = supervisorCode(idle);
  const py = `
import os, pty, sys, time, json, signal
pid, fd = pty.fork()
if pid == 0:
    os.execv(${JSON.stringify(process.execPath)}, [${JSON.stringify(process.execPath)}, '--input-type=module', '-e', sys.argv[1]])
buf = b''
end = time.time() + 15
while b'READY' not in buf or not buf.endswith(b'\\n'):
    if time.time() > end: break
    try: buf += os.read(fd, 4096)
    except OSError: break
line = [l for l in buf.decode().splitlines() if l.startswith('READY')]
print(line[0] if line else 'NOREADY', flush=True)
os.write(fd, b'\\x03')
_, st = os.waitpid(pid, 0)
print('STATUS', json.dumps({'code': os.WEXITSTATUS(st) if os.WIFEXITED(st) else None, 'signal': os.WTERMSIG(st) if os.WIFSIGNALED(st) else None}), flush=True)
`;
  const r = spawnSync('python3', ['-c', py, code], { encoding: 'utf8', timeout: 30000 });
  const ready = /READY (\[.*\])/.exec(r.stdout);
  assert.ok(ready, r.stdout + r.stderr);
  const pgids = JSON.parse(ready[1]);
  t.after(() => killLeft(pgids));
  const status = JSON.parse(/STATUS (.*)/.exec(r.stdout)[1]);
  const left = await survivors(pgids);
  t.diagnostic(`status ${JSON.stringify(status)}, ${left.length} of 6 members alive afterwards`);
  assert.deepEqual(left, []);
  assert.deepEqual(status, { code: null, signal: 2 });
});

test("worker.terminate() kills the Worker's own groups and leaves the process's alone [L3a.end.worker]", async (t) => {
  const mine = (await import('../../dist/index.js')).spawnGroup('sleep', ['1000'], { stdio: 'ignore' });
  t.after(() => mine.stop());
  const w = new Worker(
    `(async () => {
      const { parentPort } = await import('node:worker_threads');
      ${supervisorCode('parentPort.postMessage(groups.map((g) => g.pgid));')}
    })()`,
    { eval: true },
  );
  const pgids = await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  t.after(() => killLeft(pgids));
  assert.equal(pgids.flatMap((g) => liveMembers(g)).length, 6);
  await w.terminate();
  const left = await survivors(pgids);
  t.diagnostic(`${left.length} of 6 members alive after terminate()`);
  assert.deepEqual(left, []);
  assert.equal(mine.state, 'running');
  assert.ok(!isGone(mine.pid) && procStat(mine.pid).ppid === process.pid);
});

test('a cgroup.kill descriptor in the end-kill table is written when the supervisor exits [L3a.end.exit]', async (t) => {
  const { readFileSync, mkdirSync, rmdirSync, writeFileSync } = await import('node:fs');
  const line = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .find((l) => / - cgroup2 /.test(l));
  const mount = line?.split(' ')[4];
  let dir = null;
  if (mount) {
    dir = `${mount}/procpin-endkill-${process.pid}`;
    try {
      mkdirSync(dir);
    } catch {
      dir = null;
    }
  }
  if (!need(t, dir, 'a writable cgroup2 mount (root)')) return;
  t.after(() => {
    try {
      writeFileSync(`${dir}/cgroup.kill`, '1');
    } catch {}
    for (let i = 0; i < 200; i++) {
      try {
        rmdirSync(dir);
        break;
      } catch {}
    }
  });
  // The supervisor moves a sleep into the cgroup, registers its cgroup.kill and exits.
  const code = `
    const { binding } = await import(${JSON.stringify(pkg.slice(1, -1).replace(/index\.js$/, 'binding.js'))});
    const { openSync, writeFileSync } = await import('node:fs');
    const { spawn } = await import('node:child_process');
    const s = spawn('sleep', ['1000'], { stdio: 'ignore', detached: true });
    await new Promise((r) => s.once('spawn', r));
    writeFileSync(${JSON.stringify(dir)} + '/cgroup.procs', String(s.pid));
    s.unref();
    const slot = binding.endKillCgroup(openSync(${JSON.stringify(dir)} + '/cgroup.kill', 'w'));
    console.log(JSON.stringify({ pid: s.pid, slot }));
    process.exit(0);`;
  const s = startSupervisor(code, { groups: false });
  await s.done;
  const o = JSON.parse(s.output().trim().split('\n')[0]);
  assert.ok(o.slot >= 0, s.output());
  await waitFor(() => isGone(o.pid), { timeout: 3000, what: 'the cgroup member killed at exit' });
  assert.match(readFileSync(`${dir}/cgroup.events`, 'utf8'), /populated 0/);
});

// An application listens for a signal after its first group, then stops listening (libuv puts
// the default action back): the signal is hooked again, and ends the supervisor as before.
for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGUSR2', 'SIGALRM'])) {
  test(`a supervisor that listened for ${sig} after its first group and then stopped listening kills every group when ${sig} ends it [L3a.end.signal]`, async (t) => {
    await endAndCount(t, {
      code: supervisorCode(`
        const f = () => {};
        process.on('${sig}', f);
        process.off('${sig}', f);
        ${idle}`),
      end: (sup) => sup.kill(sig),
      expect: { code: null, signal: sig },
    });
  });
}
