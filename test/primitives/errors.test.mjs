// Errors are made in one place and look like Node's own: code, negative errno, syscall, the
// message format, a stack that starts at the caller's frame; argument errors carry Node's codes
// and are raised before any syscall; a Promise-returning function rejects instead of throwing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as os from 'node:os';
import * as util from 'node:util';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as procpin from '../../dist/index.js';
import { errnoException, errnoName } from '../../dist/errors.js';
import { tmpDir } from '../helpers.mjs';

const { constants: C } = procpin;
const here = fileURLToPath(import.meta.url);
const aliases = { EWOULDBLOCK: 'EAGAIN', EDEADLOCK: 'EDEADLK', EOPNOTSUPP: 'ENOTSUP' };

test('every errno is named by its usual name, ECHILD and the others libuv lacks included [C.error.shape]', () => {
  const lacking = [];
  for (const [name, value] of Object.entries(os.constants.errno)) {
    const expected = aliases[name] ?? name;
    assert.equal(errnoName(-value), expected, `errno ${value}`);
    assert.equal(errnoName(value), expected, 'positive numbers too');
    const e = errnoException(-value, 'somecall');
    assert.equal(e.code, expected);
    assert.equal(e.errno, -value);
    assert.equal(e.syscall, 'somecall');
    assert.match(e.message, new RegExp(`^${expected}: [a-z].*, somecall$`));
    const uv = util.getSystemErrorMap().get(-value);
    if (uv) {
      assert.equal(e.message, `${uv[0]}: ${uv[1]}, somecall`, 'as libuv says it where libuv knows it');
    } else {
      lacking.push(expected);
    }
  }
  assert.ok(lacking.includes('ECHILD'), 'libuv indeed lacks ECHILD');
  assert.equal(errnoException(-10, 'waitid').message, 'ECHILD: no child processes, waitid');
  assert.equal(errnoName(-4095), 'Unknown system error -4095');
  console.log(`# ${lacking.length} names libuv lacks, all named: ${lacking.join(' ')}`);
});

test('a syscall error carries code, negative errno, syscall and pid/fd, with a Node-shaped message [C.error.shape]', () => {
  assert.throws(() => procpin.pidfdOpen(0x3fffffff), {
    name: 'Error',
    code: 'ESRCH',
    errno: -3,
    syscall: 'pidfd_open',
    pid: 0x3fffffff,
    message: 'ESRCH: no such process, pidfd_open',
  });
  assert.throws(() => procpin.pidfdSendSignal(999999, 'SIGTERM'), {
    code: 'EBADF',
    errno: -9,
    syscall: 'pidfd_send_signal',
    fd: 999999,
    message: 'EBADF: bad file descriptor, pidfd_send_signal',
  });
  assert.throws(() => procpin.waitid(C.P_PID, 1, C.WEXITED | C.WNOHANG), {
    code: 'ECHILD',
    errno: -10,
    syscall: 'waitid',
    pid: 1,
    message: 'ECHILD: no child processes, waitid',
  });
  assert.throws(() => procpin.flockSync(999999, C.LOCK_EX), { code: 'EBADF', syscall: 'flock', fd: 999999 });
  assert.throws(() => procpin.tryLock(999999, 'shared'), { code: 'EBADF', syscall: 'flock', fd: 999999 });
  assert.throws(() => procpin.closeRange(5, 4), { code: 'EINVAL', errno: -22, syscall: 'close_range' });
  assert.throws(() => procpin.setParentDeathSignal(0.5), { code: 'ERR_UNKNOWN_SIGNAL' });
});

/** The first stack frame below the message line. */
function firstFrame(err) {
  return err.stack.split('\n').find((l) => l.trimStart().startsWith('at '));
}

test('stacks start at the caller: the first frame is this test file, not the library [C.error.shape]', async () => {
  const cases = [
    () => procpin.pidfdOpen(0x3fffffff),
    () => procpin.waitid(C.P_PID, 1, C.WEXITED | C.WNOHANG),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => procpin.pidfdOpen('1'),
    () => procpin.closeRange(-1),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => procpin.tryLock(0, 'both'),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => procpin.pidfdSendSignal(0, 'SIGNOPE'),
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    () => procpin.setChildSubreaper('yes'),
    () => procpin.flockSync(999999, C.LOCK_EX),
  ];
  for (const f of cases) {
    let err;
    try {
      f();
    } catch (e) {
      err = e;
    }
    assert.ok(err, String(f));
    assert.ok(firstFrame(err).includes(here), `${err.code}: ${firstFrame(err)}`);
    assert.ok(!err.stack.includes('/dist/'), `${err.code}: library frames in\n${err.stack}`);
  }
  // Argument errors show their code in the stack's first line, as Node's do.
  let e;
  try {
    // @ts-expect-error a value of the wrong type, on purpose: it must be refused
    procpin.pidfdOpen('1');
  } catch (x) {
    e = x;
  }
  assert.equal(e.name, 'TypeError');
  assert.match(e.stack, /^TypeError \[ERR_INVALID_ARG_TYPE\]: The "pid" argument/);
  // An async failure reported later still points at the call.
  const rej = await procpin.flock(999999, C.LOCK_EX).catch((x) => x);
  assert.equal(rej.code, 'EBADF');
  assert.ok(firstFrame(rej).includes(here), firstFrame(rej));
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  const bad = await procpin.flock('x', C.LOCK_EX).catch((x) => x);
  assert.ok(firstFrame(bad).includes(here), firstFrame(bad));
});

test("argument errors carry Node's codes and classes [C.args.refused-first]", () => {
  const type = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' };
  const range = { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' };
  const value = { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' };
  const signal = { name: 'TypeError', code: 'ERR_UNKNOWN_SIGNAL' };
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdOpen('1'), {
    ...type,
    message: 'The "pid" argument must be of type number. Received type string (\'1\')',
  });
  // @ts-expect-error too few arguments, on purpose: the call must be refused
  assert.throws(() => procpin.pidfdOpen(), {
    ...type,
    message: 'The "pid" argument must be of type number. Received undefined',
  });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdOpen(10n), type);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdOpen({}), {
    ...type,
    message: 'The "pid" argument must be of type number. Received an instance of Object',
  });
  assert.throws(() => procpin.pidfdOpen(0), {
    ...range,
    message: 'The value of "pid" is out of range. It must be >= 1 && <= 2147483647. Received 0',
  });
  assert.throws(() => procpin.pidfdOpen(1.5), {
    ...range,
    message: 'The value of "pid" is out of range. It must be an integer. Received 1.5',
  });
  assert.throws(() => procpin.pidfdOpen(NaN), range);
  assert.throws(() => procpin.pidfdOpen(Infinity), range);
  assert.throws(() => procpin.pidfdOpen(2 ** 31), range);
  assert.throws(() => procpin.pidfdOpen(1, -1), range);
  assert.throws(() => procpin.closeRange(0, 2 ** 32), range);
  assert.throws(() => procpin.waitid(9, 1, 0), {
    ...value,
    message: "The argument 'idtype' must be P_ALL, P_PID, P_PGID or P_PIDFD. Received 9",
  });
  assert.throws(() => procpin.waitid(C.P_PID, -1, 0), range);
  assert.throws(() => procpin.flockSync(0, 3), value);
  assert.throws(() => procpin.flockSync(0, C.LOCK_EX | 16), value);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.tryLock(0, 'both'), {
    ...value,
    message: "The argument 'mode' must be 'shared' or 'exclusive'. Received 'both'",
  });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.setChildSubreaper(1), {
    ...type,
    message: 'The "on" argument must be of type boolean. Received type number (1)',
  });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdSendSignal(0, 'SIGNOPE'), { ...signal, message: 'Unknown signal: SIGNOPE' });
  assert.throws(() => procpin.pidfdSendSignal(0, 65), { ...signal, message: 'Unknown signal: 65' });
  assert.throws(() => procpin.pidfdSendSignal(0, -1), signal);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdSendSignal(0, 'sigterm'), signal);
  assert.throws(() => procpin.pidfdSendSignal(0, null), {
    ...type,
    message: 'The "signal" argument must be of type string or number. Received null',
  });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.setParentDeathSignal('SIGWHAT'), signal);
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.setParentDeathSignal(true), type);
});

test('arguments are refused before any syscall: a bad argument wins over a bad descriptor [C.args.refused-first]', () => {
  // Were the syscall made first, these would be EBADF.
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.pidfdSendSignal(999999, 'SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
  assert.throws(() => procpin.pidfdSendSignal(999999, 'SIGTERM', -1), { code: 'ERR_OUT_OF_RANGE' });
  assert.throws(() => procpin.flockSync(999999, 3), { code: 'ERR_INVALID_ARG_VALUE' });
  // @ts-expect-error a value of the wrong type, on purpose: it must be refused
  assert.throws(() => procpin.tryLock(999999, 'x'), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => procpin.waitid(C.P_PIDFD, 999999, 1.5), { code: 'ERR_OUT_OF_RANGE' });
  // And one that would have an effect: a signal to ourselves with a bad flag value sends nothing.
  const fd = procpin.pidfdOpen(process.pid);
  try {
    assert.throws(() => procpin.pidfdSendSignal(fd, 'SIGKILL', 1.5), { code: 'ERR_OUT_OF_RANGE' });
  } finally {
    closeSync(fd);
  }
});

test('signals are accepted by name or by number [C.signal.validate]', () => {
  const fd = procpin.pidfdOpen(process.pid);
  try {
    procpin.pidfdSendSignal(fd, 0);
    // SIGURG and SIGWINCH are ignored by default: harmless to send to ourselves.
    procpin.pidfdSendSignal(fd, 'SIGURG');
    procpin.pidfdSendSignal(fd, os.constants.signals.SIGWINCH);
  } finally {
    closeSync(fd);
  }
});

test('flock rejects rather than throws on bad arguments, as fs/promises does [C.args.reject]', async () => {
  const dir = tmpDir('procpin-err-');
  const fd = openSync(`${dir.path}/f`, 'w');
  try {
    const throwing = {
      get signal() {
        throw new Error('getter');
      },
    };
    /** @type {Array<[() => Promise<unknown>, string | undefined]>} */
    const cases = [
      // @ts-expect-error a value of the wrong type, on purpose: it must be refused
      [() => procpin.flock('1', C.LOCK_EX), 'ERR_INVALID_ARG_TYPE'],
      [() => procpin.flock(-1, C.LOCK_EX), 'ERR_OUT_OF_RANGE'],
      [() => procpin.flock(fd, 3), 'ERR_INVALID_ARG_VALUE'],
      [() => procpin.flock(fd, C.LOCK_EX, null), 'ERR_INVALID_ARG_TYPE'],
      // @ts-expect-error a value of the wrong type, on purpose: it must be refused
      [() => procpin.flock(fd, C.LOCK_EX, 'x'), 'ERR_INVALID_ARG_TYPE'],
      // @ts-expect-error a value of the wrong type, on purpose: it must be refused
      [() => procpin.flock(fd, C.LOCK_EX, { signal: {} }), 'ERR_INVALID_ARG_TYPE'],
      [() => procpin.flock(fd, C.LOCK_EX, { signal: null }), 'ERR_INVALID_ARG_TYPE'],
      // @ts-expect-error a value of the wrong type, on purpose: it must be refused
      [() => procpin.flock(fd, C.LOCK_EX, throwing), undefined],
    ];
    for (const [call, code] of cases) {
      /** @type {Promise<unknown> | undefined} */
      let p;
      assert.doesNotThrow(() => (p = call()));
      assert.ok(p instanceof Promise);
      const err = await p.then(
        () => null,
        (e) => e,
      );
      assert.ok(err, `${call} rejected`);
      if (code) assert.equal(err.code, code);
      else assert.equal(err.message, 'getter');
    }
    assert.equal(procpin.tryLock(fd, 'exclusive'), true, 'none of them took the lock');
  } finally {
    closeSync(fd);
    dir[Symbol.dispose]();
  }
});
