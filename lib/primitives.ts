/**
 * SPEC Layer 1: the kernel's process-lifecycle primitives with their exact semantics. Each
 * function validates its arguments, makes one syscall, and throws a Node-shaped Error on failure.
 * @module
 */
import { binding } from './binding';
import { abortError, check, codedError, ERRNO, errnoException } from './errors';
import { validateSignal } from './signals';
import { toWaitInfo, type WaitInfo } from './waitinfo';
import {
  INT32_MAX,
  UINT32_MAX,
  invalidArgValue,
  validateAbortSignal,
  validateBoolean,
  validateFd,
  validateInteger,
  validateObject,
  validatePid,
} from './validate';

import type { Signal } from './signals';

/**
 * Kernel constants for the calls below: `P_*` (waitid id types), `W*` (waitid options),
 * `CLD_*` (how a child changed state), `PIDFD_*` (pidfd_open and pidfd_send_signal flags),
 * `CLOSE_RANGE_*` and `LOCK_*` (flock operations).
 */
export const constants = Object.freeze({ ...binding.constants });
const {
  LOCK_SH,
  LOCK_EX,
  LOCK_UN,
  LOCK_NB,
  P_ALL,
  P_PID,
  P_PGID,
  P_PIDFD,
  PIDFD_SELF_THREAD,
  PIDFD_SELF_THREAD_GROUP,
  CLOSE_RANGE_UNSHARE,
} = constants;
const INT32_MIN = -0x80000000;
const { ECANCELED, EWOULDBLOCK, EALREADY } = ERRNO;

/**
 * `waitid(2)`. Returns what it reported, or `null` when `WNOHANG` found no child to report.
 * With `WNOWAIT` the child is left waitable (a zombie stays a zombie). Without `WNOHANG` this
 * blocks the calling thread until a child changes state: the caller chose it.
 *
 * `options` takes every bit the kernel knows, `__WALL`, `__WCLONE` and `__WNOTHREAD` included;
 * `P_ALL` takes any id (the kernel ignores it). A wait that a signal handler without
 * `SA_RESTART` interrupts throws `EINTR`, as the syscall returns it.
 *
 * Beware `P_ALL` without `WNOWAIT`: it can reap a child that `child_process` started, whose
 * `'exit'` then never fires.
 *
 * @example
 * const info = waitid(constants.P_PIDFD, child.pidfd, constants.WEXITED | constants.WNOWAIT | constants.WNOHANG);
 */
export function waitid(idtype: number, id: number, options: number): WaitInfo | null {
  validateInteger(idtype, 'idtype', 0, INT32_MAX, waitid);
  if (idtype !== P_ALL && idtype !== P_PID && idtype !== P_PGID && idtype !== P_PIDFD) {
    throw invalidArgValue('idtype', idtype, 'must be P_ALL, P_PID, P_PGID or P_PIDFD', waitid);
  }
  validateInteger(id, 'id', idtype === P_ALL ? INT32_MIN : 0, UINT32_MAX, waitid);
  // As an int32 too: `C.WEXITED | C.__WCLONE` is negative in JavaScript.
  validateInteger(options, 'options', INT32_MIN, UINT32_MAX, waitid);
  const r = binding.waitid(idtype, id >>> 0, options >>> 0);
  if (typeof r === 'number') {
    throw errnoException(r, 'waitid', idtype === P_PIDFD ? { fd: id } : { pid: id }, waitid);
  }
  return r === null ? null : toWaitInfo(r);
}

/**
 * `pidfd_open(2)`: a descriptor that refers to process `pid` (O_CLOEXEC, as the kernel makes
 * it). `flags` may be `PIDFD_NONBLOCK`. Close it with `closeRange(fd, fd)`: `fs.closeSync` closes
 * it too, but in a Worker Node warns ("closed but not opened in unmanaged mode") for a descriptor
 * that `fs` did not open. `openProcess(pid)` gives a handle that closes its own.
 *
 * @example
 * const fd = pidfdOpen(pid);
 * pidfdSendSignal(fd, 'SIGTERM'); // reaches that process, never a later one with the same pid
 * closeRange(fd, fd);
 */
export function pidfdOpen(pid: number, flags = 0): number {
  validatePid(pid, 'pid', pidfdOpen);
  validateInteger(flags, 'flags', 0, UINT32_MAX, pidfdOpen);
  return check(binding.pidfdOpen(pid, flags), 'pidfd_open', { pid }, pidfdOpen);
}

/**
 * `pidfd_send_signal(2)`: sends `signal` (0 probes) to the process behind `pidfd`. `flags` may
 * be one of `PIDFD_SIGNAL_THREAD`, `PIDFD_SIGNAL_THREAD_GROUP`, `PIDFD_SIGNAL_PROCESS_GROUP`
 * (Linux 6.9+; the group the pidfd's process leads, never a reused number). `pidfd` may also be
 * `PIDFD_SELF_THREAD` or `PIDFD_SELF_THREAD_GROUP` (Linux 6.15+: the calling thread or process,
 * no descriptor needed).
 *
 * @example
 * pidfdSendSignal(fd, 0);                 // probe: throws ESRCH once the process is reaped
 * pidfdSendSignal(fd, 'SIGKILL', constants.PIDFD_SIGNAL_PROCESS_GROUP);
 */
export function pidfdSendSignal(pidfd: number, signal: Signal | 0, flags = 0): void {
  if (pidfd !== PIDFD_SELF_THREAD && pidfd !== PIDFD_SELF_THREAD_GROUP) {
    validateFd(pidfd, 'pidfd', pidfdSendSignal);
  }
  const sig = validateSignal(signal, 'signal', pidfdSendSignal, true);
  validateInteger(flags, 'flags', 0, UINT32_MAX, pidfdSendSignal);
  check(
    binding.pidfdSendSignal(pidfd, sig, flags),
    'pidfd_send_signal',
    { fd: pidfd },
    pidfdSendSignal,
  );
}

/**
 * `prctl(PR_SET_PDEATHSIG)`: the signal this process gets when the *thread* that created it
 * exits (0 clears it). It is cleared by fork and by exec of a set-user-ID program.
 *
 * @example
 * const parent = process.ppid;
 * setParentDeathSignal('SIGKILL');
 * if (process.ppid !== parent) process.exit(1); // the parent died before the call
 */
export function setParentDeathSignal(signal: Signal | 0): void {
  const sig = validateSignal(signal, 'signal', setParentDeathSignal, true);
  check(binding.setPdeathsig(sig), 'prctl', undefined, setParentDeathSignal);
}

/**
 * `prctl(PR_GET_PDEATHSIG)`: the parent-death signal's number, 0 for none.
 *
 * @example
 * if (getParentDeathSignal() === 0) setParentDeathSignal('SIGTERM');
 */
export function getParentDeathSignal(): number {
  return check(binding.getPdeathsig(), 'prctl', undefined, getParentDeathSignal);
}

/**
 * `prctl(PR_SET_CHILD_SUBREAPER)`: when on, orphaned descendants of this process are
 * re-parented to it instead of to init, so it can wait for them.
 *
 * @example
 * setChildSubreaper(true); // grandchildren whose parent exits become our children
 */
export function setChildSubreaper(on: boolean): void {
  validateBoolean(on, 'on', setChildSubreaper);
  check(binding.setChildSubreaper(on), 'prctl', undefined, setChildSubreaper);
}

/**
 * `prctl(PR_GET_CHILD_SUBREAPER)`: whether this process is a child subreaper.
 *
 * @example
 * if (!isChildSubreaper()) setChildSubreaper(true);
 */
export function isChildSubreaper(): boolean {
  return check(binding.getChildSubreaper(), 'prctl', undefined, isChildSubreaper) === 1;
}

/**
 * `close_range(2)`: closes (or with `CLOSE_RANGE_CLOEXEC` marks close-on-exec) every descriptor
 * from `first` to `last`. On a kernel without the syscall (< 5.9), or whose seccomp policy refuses
 * it, an equivalent loop does the same, the CLOEXEC flag included. `first > last` or an unknown
 * flag: `EINVAL`. `CLOSE_RANGE_UNSHARE` is refused (`ERR_INVALID_ARG_VALUE`): it would give the
 * calling JavaScript thread a descriptor table of its own, which libuv's threads do not share
 * (`fs` calls on the threadpool would then act on other files than the numbers name).
 *
 * @example
 * closeRange(3);                                            // close everything above stdio
 * closeRange(3, 0xffffffff, constants.CLOSE_RANGE_CLOEXEC); // or only mark it close-on-exec
 */
export function closeRange(first: number, last = UINT32_MAX, flags = 0): void {
  validateInteger(first, 'first', 0, UINT32_MAX, closeRange);
  validateInteger(last, 'last', 0, UINT32_MAX, closeRange);
  validateInteger(flags, 'flags', 0, UINT32_MAX, closeRange);
  if (flags & CLOSE_RANGE_UNSHARE) {
    throw invalidArgValue(
      'flags',
      flags,
      'must not hold CLOSE_RANGE_UNSHARE (a JavaScript thread cannot leave the descriptor table libuv shares)',
      closeRange,
    );
  }
  check(binding.closeRange(first, last, flags), 'close_range', undefined, closeRange);
}

function validateLockOperation(operation: unknown, caller: (...a: never[]) => unknown): number {
  const op = validateInteger(operation, 'operation', 0, INT32_MAX, caller);
  const base = op & ~LOCK_NB;
  if (base !== LOCK_SH && base !== LOCK_EX && base !== LOCK_UN) {
    throw invalidArgValue(
      'operation',
      operation,
      'must be LOCK_SH, LOCK_EX or LOCK_UN, optionally with LOCK_NB',
      caller,
    );
  }
  return op;
}

/**
 * `flock(2)`. Blocks the thread while another holder has the lock, unless `LOCK_NB` is given:
 * then contention throws `EWOULDBLOCK` (`code: 'EAGAIN'`, the same number on Linux). A wait that
 * a signal handler without `SA_RESTART` interrupts throws `EINTR`, as the syscall returns it.
 *
 * @example
 * flockSync(fd, constants.LOCK_EX); // blocks this thread until the lock is ours
 * flockSync(fd, constants.LOCK_UN);
 */
export function flockSync(fd: number, operation: number): void {
  validateFd(fd, 'fd', flockSync);
  const op = validateLockOperation(operation, flockSync);
  check(binding.flock(fd, op), 'flock', { fd }, flockSync);
}

/** Options of {@link flock}. */
export interface FlockOptions {
  /** Cancels the wait; the promise rejects with an `AbortError` and no lock is left taken. */
  signal?: AbortSignal;
}

/**
 * `flock(2)` that waits without blocking the event loop: the wait runs on a thread of its own
 * (never on libuv's shared threadpool, so waiters cannot starve `fs`). With `LOCK_NB` it tries
 * once, and `LOCK_UN` unlocks at once. An `AbortSignal` interrupts the wait: the promise then
 * rejects with an `AbortError`, only once the waiting thread has let go, and no lock is left
 * taken on this open file description (had the lock been granted just as the abort came, it is
 * given back; as with flock(2) itself, a conversion from a lock already held drops the old one).
 * A description that already holds the lock asked for gets it at once. A second wait on an open
 * file description (the same fd, a dup, or one inherited) while one is pending there rejects
 * with `ERR_PROCPIN_FLOCK_PENDING`: its abort could otherwise drop the lock the first was
 * granted. The wait never changes a signal disposition that the application set.
 * Bad arguments reject; nothing throws.
 *
 * @example
 * const fd = fs.openSync('/run/lock/app.lock', fs.constants.O_RDONLY | fs.constants.O_CREAT);
 * await flock(fd, constants.LOCK_EX, { signal: AbortSignal.timeout(5000) });
 */
export function flock(fd: number, operation: number, options: FlockOptions = {}): Promise<void> {
  let op: number;
  let signal: AbortSignal | undefined;
  try {
    validateFd(fd, 'fd', flock);
    op = validateLockOperation(operation, flock);
    validateObject(options, 'options', flock);
    signal = validateAbortSignal(options.signal, 'options.signal', flock);
    if (signal?.aborted) return Promise.reject(abortError(signal));
  } catch (err) {
    return Promise.reject(err);
  }
  if (op & LOCK_NB || (op & ~LOCK_NB) === LOCK_UN) {
    const r = binding.flock(fd, op);
    return r < 0 ? Promise.reject(errnoException(r, 'flock', { fd }, flock)) : Promise.resolve();
  }
  const trace = new Error(); // the caller's stack, for a failure reported later
  Error.captureStackTrace(trace, flock);
  return new Promise<void>((resolve, reject) => {
    let id = -1;
    const onAbort = () => {
      // The native side unlocks if the lock was taken meanwhile and reports ECANCELED.
      if (id > 0) binding.flockCancel(id);
    };
    // Listen first: a signal whose addEventListener throws must not leave a wait running.
    signal?.addEventListener('abort', onAbort, { once: true });
    id = binding.flockWait(fd, op, (r: number) => {
      signal?.removeEventListener('abort', onAbort);
      if (r === 0) {
        resolve();
      } else if (r === -ECANCELED) {
        reject(abortError(signal));
      } else {
        const e = errnoException(r, 'flock', { fd });
        e.stack = `${e.name}: ${e.message}${trace.stack?.slice(trace.stack.indexOf('\n')) ?? ''}`;
        reject(e);
      }
    });
    if (id === 0) {
      // Granted at once (the description may already hold it): nothing is waiting.
      signal?.removeEventListener('abort', onAbort);
      resolve();
    } else if (id < 0) {
      signal?.removeEventListener('abort', onAbort);
      reject(
        id === -EALREADY
          ? codedError(
              Error,
              'ERR_PROCPIN_FLOCK_PENDING',
              `A flock() wait on the open file description of fd ${fd} is already pending`,
              flock,
              { fd },
            )
          : errnoException(id, 'flock', { fd }, flock),
      );
    }
  });
}

/**
 * Tries to take a `flock(2)` lock without waiting: `true` when taken, `false` when another
 * open file description holds a conflicting lock. Other failures throw.
 *
 * @example
 * if (!tryLock(fd, 'exclusive')) throw new Error('another instance is running');
 */
export function tryLock(fd: number, mode: 'shared' | 'exclusive'): boolean {
  validateFd(fd, 'fd', tryLock);
  if (mode !== 'shared' && mode !== 'exclusive') {
    throw invalidArgValue('mode', mode, "must be 'shared' or 'exclusive'", tryLock);
  }
  const r = binding.flock(fd, (mode === 'shared' ? LOCK_SH : LOCK_EX) | LOCK_NB);
  if (r === -EWOULDBLOCK) return false;
  check(r, 'flock', { fd }, tryLock);
  return true;
}
