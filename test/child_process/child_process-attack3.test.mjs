// procpin/child_process attacked from the installed package: names that procpin reads from its
// own objects polluted onto Object.prototype, the Windows-only options as child_process checks
// them, and a supervisor that ends while its foreground child holds the terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from 'procpin';
import { spawn } from 'procpin/child_process';
import { need, openFds, root, runCmd, tmpDirFor } from '../helpers.mjs';

// Object.prototype, as a test pollutes it with keys of its own.
const proto = /** @type {Record<string, unknown>} */ (Object.prototype);
const closed = (c) => new Promise((resolve) => c.once('close', (...a) => resolve(a)));

test('keys polluted onto Object.prototype reach neither the options nor what procpin hands the addon: errno, internal, cgroupProcs, handle change nothing [L2b.options]', async (t) => {
  const dir = tmpDirFor(t, 'procpin-pollute-');
  const sink = join(dir.path, 'sink');
  writeFileSync(sink, '');
  // A descriptor of ours that a polluted cgroupProcs would make the child write its pid to.
  const fd = openSync(sink, 'w');
  try {
    for (const [key, value] of /** @type {[string, unknown][]} */ ([
      ['errno', -1],
      ['internal', 1],
      ['cgroupProcs', fd],
      ['handle', 1],
    ])) {
      const fds = openFds();
      proto[key] = value;
      try {
        const c = spawn('sh', ['-c', 'echo out; echo err >&2']);
        const leader = procpin.spawn('sh', ['-c', 'echo out']);
        const group = procpin.spawnGroup('sh', ['-c', 'echo out']);
        const errors = [];
        c.on('error', (e) => errors.push(/** @type {NodeJS.ErrnoException} */ (e).code));
        let out = '';
        let err = '';
        c.stdout?.on('data', (d) => (out += d));
        c.stderr?.on('data', (d) => (err += d));
        leader.stdout?.resume();
        group.leader.stdout?.resume();
        assert.deepEqual(await closed(c), [0, null], key);
        assert.deepEqual(errors, [], key);
        assert.deepEqual([out, err], ['out\n', 'err\n'], key);
        assert.equal((await leader.exited).exitCode, 0, key);
        leader.reap();
        leader.close();
        assert.equal((await group.closed).exitCode, 0, key);
      } finally {
        delete proto[key];
      }
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(openFds(), fds, `${key}: no descriptor left behind`);
    }
  } finally {
    closeSync(fd);
  }
  assert.equal(readFileSync(sink, 'utf8'), '', 'no child wrote to a descriptor of ours');
});

test('windowsHide and windowsVerbatimArguments are accepted and mean nothing; one that is not a boolean is ERR_INVALID_ARG_TYPE, as child_process has it [L2b.options]', async () => {
  for (const name of ['windowsHide', 'windowsVerbatimArguments']) {
    for (const value of ['yes', 1, {}]) {
      const opts = { [name]: value, stdio: /** @type {const} */ ('ignore') };
      assert.throws(() => cp.spawn('true', [], opts), { code: 'ERR_INVALID_ARG_TYPE' }, name);
      assert.throws(() => spawn('true', [], opts), { code: 'ERR_INVALID_ARG_TYPE' }, name);
    }
    for (const value of [true, false, undefined, null]) {
      assert.deepEqual(await closed(spawn('true', [], { [name]: value, stdio: 'ignore' })), [0, null]);
    }
  }
});

test('foreground: true on a terminal: a supervisor that ends (process.exit, an uncaught exception, SIGTERM, SIGHUP) while its child holds the terminal gives the terminal back to its own group, modes restored [L3a.foreground]', async (t) => {
  need(t, cp.spawnSync('sh', ['-c', 'command -v script']).status === 0, 'needs script(1)');
  const dir = tmpDirFor(t, 'procpin-fg-end-');
  const prog = join(dir.path, 'sup.cjs');
  // The child changes the terminal's modes and says so on fd 3; the supervisor then ends.
  writeFileSync(
    prog,
    `const { spawn } = require(${JSON.stringify(join(root, 'dist', 'child_process.js'))});
    const c = spawn('sh', ['-c', 'stty -echo; echo ready >&3; exec sleep 300.0417'], { stdio: ['inherit', 'inherit', 'inherit', 'pipe'], foreground: true });
    c.stdio[3].once('data', () => {
      const how = process.argv[2];
      if (how === 'exit') process.exit(3);
      if (how === 'throw') throw new Error('supervisor fails');
      process.kill(process.pid, how);
    });`,
  );
  // The shell after the supervisor (no job control, as in an npm script): is the terminal its
  // group's again, with the modes it had before?
  const script = (how) =>
    `before=$(stty -g); ${process.execPath} ${prog} ${how}; rc=$?; ` +
    `[ "$(stty -g)" = "$before" ] && m=modes-back || m=modes-changed; ` +
    `set -- $(ps -o tpgid=,pgid= -p $$); [ "$1" = "$2" ] && f=fg-back || f=fg-lost; ` +
    `echo "RESULT $rc $f $m"; pgrep -f '[s]leep 300.0417' >/dev/null && echo SURVIVOR || true`;
  for (const [how, rc] of /** @type {[string, number][]} */ ([
    ['exit', 3],
    ['throw', 1],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ])) {
    const r = await runCmd('script', ['-qec', script(how), '/dev/null'], { timeout: 60_000 });
    assert.match(r.stdout, new RegExp(`RESULT ${rc} fg-back modes-back`), `${how}: ${r.stdout}`);
    assert.doesNotMatch(r.stdout, /SURVIVOR/, how);
  }
});

test('keys polluted onto Object.prototype reach neither the options nor the errors: with get or set polluted, a refused option, a failed start and a held pidfile keep their codes [L2b.options]', async (t) => {
  const dir = tmpDirFor(t, 'procpin-pollute-err-');
  const held = await procpin.claimPidfile(join(dir.path, 'pid'));
  try {
    for (const key of ['get', 'set']) {
      proto[key] = 1;
      try {
        assert.throws(() => spawn('true', [], /** @type {any} */ ({ bogus: 1 })), {
          code: 'ERR_INVALID_ARG_VALUE',
        });
        assert.throws(() => procpin.spawn('procpin-no-such-command-xyz'), { code: 'ENOENT' });
        const c = spawn('procpin-no-such-command-xyz');
        const err = await new Promise((resolve) => c.once('error', resolve));
        assert.equal(/** @type {any} */ (err).code, 'ENOENT', key);
        await closed(c);
        await assert.rejects(procpin.claimPidfile(join(dir.path, 'pid')), {
          code: 'ERR_PROCPIN_LOCKED',
          pid: process.pid,
        });
      } finally {
        delete proto[key];
      }
    }
  } finally {
    await held.release();
  }
});
