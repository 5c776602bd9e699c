// The procpin command's parsing and decisions: durations, signals, pids, the exit-status rules as
// pure functions, --help on every command, usage errors (stderr, status 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, parsePid, parseSignal, UsageError } from '../../dist/cli/args.js';
import { EXIT, exitStatusOf, spawnFailureStatus } from '../../dist/cli/status.js';
import { procpin } from './cli-helpers.mjs';

test('durations are milliseconds, or a number with ms, s, m or h [CLI.usage]', () => {
  const cases = {
    0: 0,
    1500: 1500,
    '500ms': 500,
    '2s': 2000,
    '1m': 60000,
    '1h': 3600000,
    '1.5s': 1500,
    '0.25m': 15000,
    '1.2ms': 2, // rounded up to whole milliseconds
    2147483647: 2147483647,
  };
  for (const [text, ms] of Object.entries(cases)) assert.equal(parseDuration(String(text)), ms, text);
});

test('a duration that is not one is a usage error [CLI.usage]', () => {
  for (const junk of [
    '',
    'abc',
    '2x',
    '-1',
    '+1',
    '1e3',
    ' 2s',
    '2s ',
    '2 s',
    'Infinity',
    'NaN',
    '0x10',
    '1.',
    '.5s',
    '1.5.2',
    's',
    'ms',
    '2S',
    '1d',
    '2147483648',
    '25d',
  ]) {
    assert.throws(
      () => parseDuration(junk, 'grace'),
      (e) => e instanceof UsageError && /invalid grace/.test(e.message),
      junk,
    );
  }
});

test('a signal may be named with or without SIG, in any case, or by number [CLI.usage]', () => {
  assert.equal(parseSignal('TERM'), 'SIGTERM');
  assert.equal(parseSignal('sigint'), 'SIGINT');
  assert.equal(parseSignal('SIGKILL'), 'SIGKILL');
  assert.equal(parseSignal('9'), 9);
  assert.equal(parseSignal('SIGRTMIN+1'), 'SIGRTMIN+1');
  for (const junk of ['', 'FOO', 'SIG', '0', '-9', '9x', '99', 'SIGTERM ']) {
    assert.throws(() => parseSignal(junk), UsageError, junk);
  }
});

test('a pid is decimal, positive, without sign or leading zero [CLI.usage]', () => {
  assert.equal(parsePid('1'), 1);
  assert.equal(parsePid('4194304'), 4194304);
  for (const junk of ['', '0', '-1', '+1', '01', '1.0', 'abc', '0x10', '2147483648', ' 1']) {
    assert.throws(() => parsePid(junk), UsageError, junk);
  }
});

test('a command that did not start gives 127 when not found, 126 when not runnable, else 125 [CLI.run.status]', () => {
  const err = (code, syscall) => Object.assign(new Error(code), { code, syscall });
  assert.equal(spawnFailureStatus(err('ENOENT', 'execve')), EXIT.NOT_FOUND);
  assert.equal(spawnFailureStatus(err('ENOENT', 'spawn')), EXIT.NOT_FOUND);
  for (const code of ['EACCES', 'ENOEXEC', 'EPERM', 'EISDIR', 'ENOTDIR', 'ELOOP', 'ETXTBSY', 'E2BIG']) {
    assert.equal(spawnFailureStatus(err(code, 'execve')), EXIT.CANNOT_RUN, code);
  }
  // Failures of procpin itself, before the exec: 125.
  assert.equal(spawnFailureStatus(err('ENOENT', 'chdir')), EXIT.PROCPIN_FAILED);
  assert.equal(spawnFailureStatus(err('EMFILE', 'spawn')), EXIT.PROCPIN_FAILED);
  assert.equal(spawnFailureStatus(err('EAGAIN', 'clone3')), EXIT.PROCPIN_FAILED);
  assert.equal(spawnFailureStatus(err('EPERM', 'prctl')), EXIT.PROCPIN_FAILED);
  assert.equal(
    spawnFailureStatus(Object.assign(new Error('x'), { code: 'ERR_PROCPIN_SIGCHLD_IGNORED' })),
    EXIT.PROCPIN_FAILED,
  );
  assert.equal(spawnFailureStatus(new TypeError('bug')), EXIT.PROCPIN_FAILED);
  assert.equal(spawnFailureStatus(undefined), EXIT.PROCPIN_FAILED);
});

test('the exit status is the code, 128+N for signal N, 124 only when the timeout stopped a running leader [CLI.run.status]', () => {
  const num = (name) => ({ SIGKILL: 9, SIGINT: 2, SIGTERM: 15, SIGUSR1: 10 })[name];
  const r = (o) => ({ exitCode: null, signal: null, timedOut: false, stoppedWhileRunning: false, ...o });
  assert.equal(exitStatusOf(r({ exitCode: 0 }), num), 0);
  assert.equal(exitStatusOf(r({ exitCode: 42 }), num), 42);
  assert.equal(exitStatusOf(r({ signal: 'SIGKILL' }), num), 137);
  assert.equal(exitStatusOf(r({ signal: 'SIGINT' }), num), 130);
  assert.equal(exitStatusOf(r({ signal: 'SIGTERM', stoppedWhileRunning: true }), num), 143);
  assert.equal(exitStatusOf(r({ signal: 'SIGTERM', timedOut: true, stoppedWhileRunning: true }), num), 124);
  assert.equal(exitStatusOf(r({ exitCode: 0, timedOut: true, stoppedWhileRunning: true }), num), 124);
  // The leader had exited by itself when the deadline came: its own status.
  assert.equal(exitStatusOf(r({ exitCode: 3, timedOut: true, stoppedWhileRunning: false }), num), 3);
});

test('--help and -h on every command print its usage on stdout and exit 0 [CLI.usage]', async () => {
  /** @type {Array<[string[], string]>} */
  const cases = [
    [['--help'], 'Usage: procpin <command>'],
    [['-h'], 'Usage: procpin <command>'],
    [['help'], 'Usage: procpin <command>'],
    [['run', '--help'], 'Usage: procpin run '],
    [['run', '-h'], 'Usage: procpin run '],
    [['help', 'run'], 'Usage: procpin run '],
    [['sweep', '--help'], 'Usage: procpin sweep '],
    [['sweep', '-h'], 'Usage: procpin sweep '],
    [['wait', '--help'], 'Usage: procpin wait '],
    [['wait', '-h'], 'Usage: procpin wait '],
  ];
  await Promise.all(
    cases.map(async ([args, head]) => {
      const r = await procpin(args);
      assert.equal(r.code, 0, args.join(' '));
      assert.ok(r.stdout.startsWith(head), `${args.join(' ')}: ${r.stdout.slice(0, 40)}`);
      assert.equal(r.stderr, '');
    }),
  );
});

test('--version prints the package version [CLI.usage]', async () => {
  const r = await procpin(['--version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^procpin \d+\.\d+\.\d+/);
});

test('usage errors are reported on stderr with a hint and exit 2, and nothing runs [CLI.usage]', async () => {
  /** @type {Array<[string[], RegExp]>} */
  const cases = [
    [[], /missing command/],
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['--bogus'], /Unknown option '--bogus'/],
    [['help', 'nope'], /unknown command 'nope'/],
    [['run'], /procpin run: missing COMMAND/],
    [['run', '--'], /missing COMMAND/],
    [['run', '--bogus', '--', 'true'], /procpin run: Unknown option '--bogus'/],
    [['run', '--grace', '2x', '--', 'true'], /procpin run: invalid grace '2x'/],
    [['run', '--grace', '--', 'true'], /procpin run: .*--grace/],
    [['run', '--timeout', '-1', 'true'], /procpin run: Option '--timeout' argument is ambiguous/],
    [['run', '--timeout=-1', 'true'], /invalid timeout '-1'/],
    [['run', '--kill-signal', 'FOO', 'true'], /invalid kill signal 'FOO'/],
    [['run', '--kill-signal', '0', 'true'], /invalid kill signal '0'/],
    [['run', '--verbose=yes', 'true'], /procpin run: /],
    [['sweep'], /procpin sweep: missing DIR/],
    [['sweep', '/tmp'], /missing --prefix/],
    [['sweep', '/tmp', 'extra', '--prefix', 'p'], /unexpected argument 'extra'/],
    [['sweep', '/tmp', '--prefix'], /procpin sweep: .*--prefix/],
    [['sweep', '/tmp', '--prefix', 'p', '--bogus'], /Unknown option '--bogus'/],
    [['wait'], /procpin wait: no PIDs specified/],
    [['wait', 'abc'], /invalid PID 'abc'/],
    [['wait', '0'], /invalid PID '0'/],
    [['wait', '--timeout', 'soon', '1'], /procpin wait: invalid timeout 'soon'/],
    [['wait', '--bogus', '1'], /Unknown option '--bogus'/],
  ];
  await Promise.all(
    cases.map(async ([args, message]) => {
      const r = await procpin(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message, args.join(' '));
      assert.match(r.stderr, /Try 'procpin( \w+)? --help'\.\n$/, args.join(' '));
      assert.equal(r.stdout, '', args.join(' '));
    }),
  );
});

test('a command that cannot be parsed is refused before anything runs (exit 2, not 127) [CLI.usage]', async () => {
  // The command would not be found; the usage error is seen first.
  const r = await procpin(['run', '--grace', 'x', '--', 'procpin-no-such-command']);
  assert.equal(r.code, 2);
});
