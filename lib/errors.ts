/**
 * Errors, made in one place. A syscall failure becomes an Error shaped like Node's own
 * (`code`, negative `errno`, `syscall`, and `pid`/`fd`/`path` where they apply, message
 * `"ESRCH: no such process, pidfd_open"`), with the stack starting at the public function the
 * caller called. Argument errors carry Node's codes (`ERR_INVALID_ARG_TYPE`, ...).
 * @module
 */
import * as os from 'node:os';
import * as util from 'node:util';

/** An Error from a failed syscall, as Node's `fs` and `child_process` make them. */
export interface ProcpinSystemError extends Error {
  code: string;
  errno: number;
  syscall: string;
  pid?: number;
  fd?: number;
  path?: string;
  spawnargs?: string[];
}

/**
 * The errno numbers, by name (`os.constants.errno`): the one table the library reads them from
 * (positive, as in C; the addon returns them negated).
 */
export const ERRNO: Readonly<typeof os.constants.errno> = os.constants.errno;

// errno number -> name. libuv's table (util.getSystemErrorName) lacks some (ECHILD among them),
// so the names come from os.constants.errno, with the usual name preferred where two share a
// number (EAGAIN over EWOULDBLOCK, EDEADLK over EDEADLOCK, ENOTSUP as libuv says it).
const errnoNames = new Map<number, string>();
const preferred = new Set(['EAGAIN', 'EDEADLK', 'ENOTSUP']);
for (const [name, value] of Object.entries(ERRNO)) {
  if (!errnoNames.has(value) || preferred.has(name)) errnoNames.set(value, name);
}

/** The symbolic name of an errno (positive or negative), e.g. `'ECHILD'`. */
export function errnoName(errno: number): string {
  const e = Math.abs(errno);
  return errnoNames.get(e) ?? `Unknown system error ${-e}`;
}

const messages = new Map<number, string>();
function describe(errno: number): string {
  const e = Math.abs(errno);
  let m = messages.get(e);
  if (m === undefined) {
    const fromUv = util.getSystemErrorMap().get(-e);
    if (fromUv) {
      m = fromUv[1];
    } else {
      // The addon is loaded only here: the tables above (and the validation and signal modules
      // that make their errors here) serve the command line where the addon cannot load.
      const { binding } = require('./binding') as typeof import('./binding');
      const s = binding.strerror(e);
      m = s.charAt(0).toLowerCase() + s.slice(1);
    }
    messages.set(e, m);
  }
  return m;
}

export interface ErrnoDetails {
  pid?: number;
  fd?: number;
  path?: string;
  spawnargs?: string[];
}

/**
 * Makes the Error for `-errno` from `syscall`. `caller` is the public function whose frame the
 * stack starts at (as Node's own uvException does).
 */
export function errnoException(
  errno: number,
  syscall: string,
  details: ErrnoDetails = {},
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  caller?: Function,
): ProcpinSystemError {
  const e = -Math.abs(errno);
  const code = errnoName(e);
  let message = `${code}: ${describe(e)}, ${syscall}`;
  if (details.path !== undefined) message += ` '${details.path}'`;
  const err = new Error(message) as ProcpinSystemError;
  err.errno = e;
  err.code = code;
  err.syscall = syscall;
  if (details.pid !== undefined) err.pid = details.pid;
  if (details.fd !== undefined) err.fd = details.fd;
  if (details.path !== undefined) err.path = details.path;
  if (details.spawnargs !== undefined) err.spawnargs = details.spawnargs;
  if (caller) Error.captureStackTrace(err, caller);
  return err;
}

/** Throws for a negative native result, or returns it. */
export function check(
  result: number,
  syscall: string,
  details: ErrnoDetails | undefined,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  caller: Function,
): number {
  if (result < 0) throw errnoException(result, syscall, details, caller);
  return result;
}

type ErrorCtor = ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor;

/** An Error with a Node-style `code`, its stack starting at `caller`. */
export function codedError<T extends Error = Error>(
  Ctor: ErrorCtor,
  code: string,
  message: string,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  caller?: Function,
  props: Record<string, unknown> = {},
): T & { code: string } {
  const err = new Ctor(message) as unknown as T & { code: string };
  // A descriptor of no prototype: a `get` or `set` polluted onto Object.prototype would make it
  // an accessor descriptor, and every error a TypeError of its own.
  Object.defineProperty(err, 'code', {
    __proto__: null,
    value: code,
    enumerable: true,
    writable: true,
    configurable: true,
  } as PropertyDescriptor);
  Object.assign(err, props);
  // Node shows `TypeError [ERR_X]: message` in the stack's first line.
  const name = err.name;
  err.name = `${name} [${code}]`;
  Error.captureStackTrace(err, caller ?? codedError);
  void err.stack;
  err.name = name;
  return err;
}

/** An `AbortError` like the ones `fs/promises` and `timers/promises` reject with. */
export function abortError(signal: AbortSignal | undefined): Error & { code: string } {
  const err = new Error('The operation was aborted', {
    cause: signal?.reason,
  }) as Error & { code: string };
  err.name = 'AbortError';
  err.code = 'ABORT_ERR';
  return err;
}

/** The rejection of `claimPidfile` when a live owner holds the pidfile's lock. */
export interface ProcpinLockedError extends Error {
  code: 'ERR_PROCPIN_LOCKED';
  /** The holder's pid, when the file or /proc/locks names it. */
  pid?: number;
  path: string;
}

/** Whether `err` is {@link ProcpinLockedError}: narrows `catch (err)` to read `err.pid`. */
export function isLockedError(err: unknown): err is ProcpinLockedError {
  return err instanceof Error && (err as { code?: unknown }).code === 'ERR_PROCPIN_LOCKED';
}
