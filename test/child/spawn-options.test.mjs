// SPEC Layer 2, spawn's child_process options: uid, gid (supplementary groups dropped as libuv
// does), shell, signal, timeout, killSignal, a Stream with a descriptor in stdio; an unknown or
// unimplemented option throws ERR_INVALID_ARG_VALUE naming it and starts nothing; options are
// read once. And stdio in blocking mode: descriptors inherited at 0-2 reach the child without
// O_NONBLOCK, as libuv hands them over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as net from 'node:net';
import { spawn, spawnGroup } from '../../dist/index.js';
import { spawn as cpSpawn } from '../../dist/child_process.js';
import { CI, isRoot, need, procStat, procStatus, runCmd, root, waitFor } from '../helpers.mjs';

/** Every child of this process (live or zombie): what "starts nothing" is checked against. */
function ourChildren() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.ppid === process.pid) out.push(st.pid);
  }
  return out.sort();
}

async function run(file, args, options) {
  const c = spawn(file, args, options);
  let out = '';
  c.stdout?.on('data', (d) => (out += d));
  const info = await c.exited;
  if (c.stdout && !c.stdout.closed) await new Promise((r) => c.stdout.once('close', r));
  c.reap();
  return { info, out };
}

/**
 * spawn, spawnGroup or child_process.spawn, called alike: what each returns is checked by the test.
 * @typedef {(file: string, args: string[], options: object) => any} AnySpawn
 */

test('uid and gid are set in the child and its supplementary groups are dropped, as libuv does [L2.spawn.credentials]', async (t) => {
  need(t, isRoot, 'needs root to change uid');
  const c = spawn('sleep', ['30'], { uid: 65534, gid: 65533, stdio: 'ignore' });
  t.after(() => c.kill('SIGKILL'));
  await waitFor(() => procStatus(c.pid).Name === 'sleep', { what: 'exec' });
  const st = procStatus(c.pid);
  assert.equal(st.Uid.split(/\s+/)[0], '65534');
  assert.deepEqual(new Set(st.Uid.split(/\s+/)), new Set(['65534']), 'real, effective, saved and fs uid');
  assert.deepEqual(new Set(st.Gid.split(/\s+/)), new Set(['65533']));
  assert.equal(st.Groups, '', 'no supplementary group is left (root has group 0 there)');
  c.kill('SIGKILL');
  await c.exited;
  c.reap();
});

test('a uid that cannot be set fails the start with EPERM from setuid and leaves no child [L2.spawn.credentials]', async (t) => {
  need(t, isRoot, 'needs root to drop to another uid first');
  // An unprivileged parent may not become another user: run the attempt as uid 65534.
  const code = `
    const { spawn } = require(${JSON.stringify(`${root}/dist/index.js`)});
    try { spawn('true', [], { uid: 0, stdio: 'ignore' }); console.log('started'); }
    catch (e) { console.log(e.code, e.syscall); }`;
  const r = await runCmd('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, '-e', code]);
  assert.equal(r.stdout.trim(), 'EPERM setuid', r.stderr);
});

test('uid and gid are validated before anything starts [L2.spawn.credentials]', () => {
  const before = ourChildren();
  assert.throws(() => spawn('true', [], { uid: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => spawn('true', [], { uid: 1.5 }), { code: 'ERR_OUT_OF_RANGE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawn('true', [], { gid: '0' }), { code: 'ERR_INVALID_ARG_TYPE' });
  assert.deepEqual(ourChildren(), before);
});

test('shell: true runs file and args joined by spaces through /bin/sh -c; a string names the shell [L2.spawn.shell]', async () => {
  const a = await run('echo $0', ['"$((1+2))"'], { shell: true, stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(a.out, '/bin/sh 3\n');
  const b = await run('echo $0', [], { shell: '/bin/bash', stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(b.out, '/bin/bash\n');
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawn('x', [], { shell: 1 }), { code: 'ERR_INVALID_ARG_TYPE' });
  const c = await run('echo', ['$0'], { shell: '', stdio: ['ignore', 'pipe', 'inherit'] });
  assert.equal(c.out, '$0\n', "shell: '' is no shell, as in child_process");
  assert.throws(() => spawn('true', [], null), { code: 'ERR_INVALID_ARG_TYPE' });
});

test('an AbortSignal sends killSignal to the child; one aborted already starts it and stops it at once [L2.spawn.abort-timeout]', async () => {
  const ac = new AbortController();
  const c = spawn('sleep', ['30'], { signal: ac.signal, killSignal: 'SIGINT', stdio: 'ignore' });
  ac.abort();
  const info = await c.exited;
  c.reap();
  assert.equal(info.signal, 'SIGINT');
  const d = spawn('sleep', ['30'], { signal: AbortSignal.abort(), stdio: 'ignore' });
  assert.equal((await d.exited).signal, 'SIGTERM');
  d.reap();
});

test('timeout sends killSignal to a child that runs too long, and nothing to one that ended first [L2.spawn.abort-timeout]', async () => {
  const t0 = performance.now();
  const c = spawn('sleep', ['30'], { timeout: 50, killSignal: 'SIGUSR1', stdio: 'ignore' });
  const info = await c.exited;
  c.reap();
  assert.equal(info.signal, 'SIGUSR1');
  assert.ok(performance.now() - t0 < 10_000);
  const d = spawn('true', [], { timeout: 10_000, stdio: 'ignore' });
  assert.equal((await d.exited).exitCode, 0);
  d.reap();
  assert.throws(() => spawn('true', [], { timeout: -1 }), { code: 'ERR_OUT_OF_RANGE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawn('true', [], { killSignal: 'SIGNOPE' }), { code: 'ERR_UNKNOWN_SIGNAL' });
});

test('stdio takes a Stream that has a descriptor: process.stderr and a connected net.Socket [L2.spawn.stdio]', async (t) => {
  const server = net.createServer();
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  t.after(() => server.close());
  const got = new Promise((resolve) =>
    server.once('connection', (s) => {
      let d = '';
      s.on('data', (c) => (d += c));
      s.on('end', () => resolve(d));
    }),
  );
  const sock = net.connect(/** @type {import('node:net').AddressInfo} */ (server.address()).port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const c = spawn('sh', ['-c', 'echo through-the-socket'], { stdio: ['ignore', sock, process.stderr] });
  await c.exited;
  c.reap();
  sock.end();
  assert.equal(await got, 'through-the-socket\n');
  const unconnected = new net.Socket();
  assert.throws(() => spawn('true', [], { stdio: ['ignore', unconnected, 'ignore'] }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /options\.stdio\[1\]/,
  });
});

test('an unknown or unimplemented option throws ERR_INVALID_ARG_VALUE naming it and starts nothing [C.options.unknown]', () => {
  const before = ourChildren();
  /** @type {Array<[AnySpawn, string]>} */
  const spawners = [
    [spawn, 'spawn'],
    [spawnGroup, 'spawnGroup'],
  ];
  for (const [fn, name] of spawners) {
    for (const opt of ['detached', 'uidd', 'serialization', 'windowsHide']) {
      assert.throws(
        () => fn('true', [], { stdio: 'ignore', [opt]: true }),
        { code: 'ERR_INVALID_ARG_VALUE', message: new RegExp(`options\\.${opt}`) },
        `${name} ${opt}`,
      );
    }
  }
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => spawn('true', [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] }), {
    code: 'ERR_INVALID_ARG_VALUE',
  });
  // @ts-expect-error an option that does not exist, on purpose: it must be refused
  assert.throws(() => cpSpawn('true', [], { serialization: 'advanced' }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /options\.serialization/,
  });
  // @ts-expect-error an option that does not exist, on purpose: it must be refused
  assert.throws(() => cpSpawn('true', [], { shelll: true }), { code: 'ERR_INVALID_ARG_VALUE' });
  // An unknown name whose value is undefined means nothing and is not refused.
  // @ts-expect-error an option spawn does not have, on purpose: undefined means nothing
  const c = spawn('true', [], { stdio: 'ignore', detached: undefined });
  c.kill('SIGKILL');
  assert.deepEqual(
    ourChildren().filter((p) => p !== c.pid),
    before,
  );
});

test('options are read once: a getter that answers differently the second time never reaches the child [C.options.once]', async () => {
  for (const fn of /** @type {AnySpawn[]} */ ([spawn, spawnGroup, cpSpawn])) {
    let reads = 0;
    const options = {
      stdio: ['ignore', 'pipe', 'inherit'],
      get env() {
        reads++;
        // First an environment of one variable; a second read would answer "none given", which
        // used to hand the child the whole environment.
        return reads === 1 ? { ONLY: 'this' } : undefined;
      },
    };
    process.env.PROCPIN_SECRET_OPTION_TEST = 'leaked';
    const c = fn('/usr/bin/env', [], options);
    const stdout = c.stdout ?? c.leader.stdout;
    let out = '';
    stdout.on('data', (d) => (out += d));
    await new Promise((r) => stdout.once('close', r));
    delete process.env.PROCPIN_SECRET_OPTION_TEST;
    if (c.reap) {
      await c.exited;
      c.reap();
    } else if (c.closed) await c.closed;
    else await new Promise((r) => (c.exitCode !== null ? r() : c.once('close', r)));
    assert.equal(reads, 1, `${fn.name}: the getter ran once`);
    assert.equal(out, 'ONLY=this\n', fn.name);
  }
});

test('a signal look-alike whose addEventListener throws starts nothing (no leader left running) [L2.spawn.abort-timeout]', () => {
  const lookAlike = {
    aborted: false,
    addEventListener() {
      throw new Error('boom');
    },
    removeEventListener() {},
  };
  const before = ourChildren();
  for (const fn of /** @type {AnySpawn[]} */ ([spawn, spawnGroup, cpSpawn])) {
    assert.throws(() => fn('sleep', ['30'], { stdio: 'ignore', signal: lookAlike }), /boom/, fn.name);
  }
  assert.deepEqual(ourChildren(), before, 'no child was started');
});

test('descriptors inherited at 0-2 reach the child blocking: 300,000 lines through a slow non-blocking pipe arrive whole [L2.spawn.stdio-blocking]', async (t) => {
  need(t, true, '');
  // The supervisor's stdout is a pipe that Node made non-blocking (process.stdout on a pipe);
  // its reader is slow, so the pipe fills and a non-blocking writer gets EAGAIN.
  const sup = `
    const { spawn } = require(${JSON.stringify(`${root}/dist/index.js`)});
    const fs = require('node:fs');
    process.stdout.write('');
    const c = spawn('seq', ['1', '300000'], { stdio: ['ignore', 'inherit', 'inherit'] });
    c.exited.then((i) => { c.reap(); fs.writeSync(2, 'exit ' + i.exitCode + '\\n'); });`;
  const script = `${JSON.stringify(process.execPath)} -e "$SUP" | { sleep 0.3; while IFS= read -r l; do n=$((n+1)); last=$l; done; echo "$n $last"; }`;
  const r = await runCmd('bash', ['-c', script], { env: { SUP: sup }, timeout: 120_000 });
  assert.equal(r.stderr.trim(), 'exit 0', 'seq exits 0: no "write error: Resource temporarily unavailable"');
  assert.equal(r.stdout.trim(), '300000 300000');
});

test('the flag cleared is the one libuv clears: child_process and procpin leave the same flags behind [L2.spawn.stdio-blocking]', async () => {
  const code = (mod) => `
    const m = require(${JSON.stringify(mod)});
    const fs = require('node:fs');
    process.stdout.write('');
    const flags = () => fs.readFileSync('/proc/self/fdinfo/1', 'utf8').match(/flags:\\s*(\\d+)/)[1];
    const before = flags();
    const c = m.spawn('true', [], { stdio: ['ignore', 'inherit', 'ignore'] });
    const done = () => fs.writeSync(2, before + ' ' + flags() + '\\n');
    if (c.on) c.on('close', done); else c.exited.then(() => { c.reap(); done(); });`;
  const ours = await runCmd('sh', ['-c', `${JSON.stringify(process.execPath)} -e "$C" | cat`], {
    env: { C: code(`${root}/dist/index.js`) },
  });
  const theirs = await runCmd('sh', ['-c', `${JSON.stringify(process.execPath)} -e "$C" | cat`], {
    env: { C: code('node:child_process') },
  });
  assert.equal(ours.stderr.trim(), theirs.stderr.trim());
  const [before, after] = ours.stderr
    .trim()
    .split(' ')
    .map((o) => parseInt(o, 8));
  assert.ok(before & 0o4000, 'Node made its stdout pipe non-blocking');
  assert.equal(after & 0o4000, 0, 'the child got it blocking (and so, as with libuv, the shared description)');
  void CI;
});

test('args with a hole are refused with ERR_INVALID_ARG_TYPE naming the element, by spawn and spawnGroup, and nothing starts; the drop-in reads the hole as child_process does [C.args.refused-first]', () => {
  const before = ourChildren();
  /** @type {[unknown[], string][]} */
  const holes = [
    // eslint-disable-next-line no-sparse-arrays
    [[, 'x'], 'args[0]'],
    // eslint-disable-next-line no-sparse-arrays
    [['x', , 'y'], 'args[1]'],
  ];
  for (const [args, at] of holes) {
    // Typed loosely: an array with a hole, on purpose, must be refused by each.
    /** @type {((file: string, args: unknown[], options: object) => unknown)[]} */
    // The drop-in reads a hole as child_process does ('undefined': child_process-arguments.test.mjs).
    const spawns = /** @type {any} */ ([spawn, spawnGroup]);
    for (const fn of spawns) {
      assert.throws(
        () => fn('echo', args, { stdio: 'ignore' }),
        (err) => {
          assert.equal(/** @type {any} */ (err).code, 'ERR_INVALID_ARG_TYPE', String(err));
          assert.ok(String(/** @type {any} */ (err).message).includes(`"${at}"`), String(err));
          return true;
        },
      );
    }
  }
  assert.deepEqual(ourChildren(), before);
});
