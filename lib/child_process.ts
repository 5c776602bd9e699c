/**
 * SPEC Layer 2b: `procpin/child_process`, a drop-in for supervisors. `spawn` takes
 * `child_process.spawn`'s arguments and returns an object that behaves as a `ChildProcess` does
 * (its events, their order and arguments, its properties, its errors), with a
 * {@link ProcessGroup} underneath: `kill()` signals the whole group while it is ours, and the
 * leader's exit cleans the group before the leader is reaped. A supervisor that uses
 * `child_process.spawn` and tree-kill switches by changing its import.
 * @module procpin/child_process
 */
import { EventEmitter } from 'node:events';
import { PassThrough, type Readable, type Writable, type Duplex, type Stream } from 'node:stream';
import { spawnArguments } from './child/child';
import { abortError, errnoException } from './errors';
import {
  GROUP_OPTIONS,
  onStopReached,
  ProcessGroup,
  spawnGroup,
  type SpawnGroupOptions,
  type StopOptions,
} from './group/group';
import type { GroupResult } from './group/logic';
import { streamsClosed } from './group/output';
import { validateSignal } from './signals';
import { invalidArgType, outOfRange, readOptions, validateAbortSignal } from './validate';

export { collectOutput, stdioEnded } from './group/output';
export type { CollectOptions, GroupOutput, MaxBufferError } from './group/output';

export type { GroupResult, StopOptions };
export { ProcessGroup };

/** An entry of {@link SpawnOptions.stdio}: child_process's (`'ipc'` is refused). */
export type StdioEntry =
  'pipe' | 'overlapped' | 'inherit' | 'ignore' | number | Stream | null | undefined;
/** What {@link SpawnOptions.stdio} takes. */
export type StdioOptions = 'pipe' | 'overlapped' | 'inherit' | 'ignore' | readonly StdioEntry[];

/**
 * child_process's spawn options, plus the group's (`grace`, `foreground`, `parentDeathSignal`,
 * `closeFds`). Every option is read once; one procpin does not know or implement throws
 * `ERR_INVALID_ARG_VALUE` naming it, and nothing starts.
 */
export interface SpawnOptions extends Omit<SpawnGroupOptions, 'stdio' | 'processGroup'> {
  stdio?: StdioOptions | undefined;
  /** `true`: the group is a new session (setsid). It is always a new process group. */
  detached?: boolean | undefined;
  /** Windows only: accepted, means nothing on Linux. */
  windowsHide?: boolean | undefined;
  /** Windows only: accepted, means nothing on Linux. */
  windowsVerbatimArguments?: boolean | undefined;
}

type PipeLike = 'pipe' | 'overlapped' | null | undefined;
type InOf<T> = T extends PipeLike ? Writable : null;
type OutOf<T> = T extends PipeLike ? Readable : null;
/** The stdin a `stdio` option gives, as `@types/node` narrows it. */
export type StdinOf<S> = S extends 'inherit' | 'ignore'
  ? null
  : S extends readonly [infer I, ...unknown[]]
    ? InOf<I>
    : S extends readonly unknown[]
      ? Writable | null
      : Writable;
/** The stdout (`N` = 1) or stderr (`N` = 2) a `stdio` option gives. */
export type OutputOf<S, N extends 1 | 2> = S extends 'inherit' | 'ignore'
  ? null
  : S extends readonly [unknown, infer O, infer E, ...unknown[]]
    ? OutOf<N extends 1 ? O : E>
    : S extends readonly [unknown, infer O]
      ? N extends 1
        ? OutOf<O>
        : Readable
      : S extends readonly [unknown]
        ? Readable
        : S extends readonly unknown[]
          ? Readable | null
          : Readable;

const ADAPTER_OPTIONS: readonly string[] = [
  ...GROUP_OPTIONS,
  'detached',
  'windowsHide',
  'windowsVerbatimArguments',
];
const UNSUPPORTED: Record<string, string> = {
  serialization: 'is not supported: procpin has no IPC channel',
};

/** The error a failed start emits: child_process's shape. */
export interface SpawnError extends Error {
  errno: number;
  code: string;
  syscall: string;
  path: string;
  spawnargs: string[];
}

/**
 * What {@link spawn} returns: a `ChildProcess` look-alike over a {@link ProcessGroup}.
 *
 * Events, in child_process's order: `'spawn'` (next tick after a successful start), `'exit'`
 * (code, signal) when the leader exits, `'close'` (code, signal) once the group was cleaned, the
 * leader reaped and the stdio streams closed; a failed start emits `'error'` and then `'close'`
 * (negative errno, null), asynchronously, and throws nothing. An `AbortSignal` that aborts stops
 * the group and emits `'error'` with an `AbortError`, as child_process does.
 */
export class ChildProcess<
  I extends Writable | null = Writable | null,
  O extends Readable | null = Readable | null,
  E extends Readable | null = Readable | null,
> extends EventEmitter {
  /** The leader's pid; `undefined` when the start failed. */
  pid: number | undefined = undefined;
  stdin: I;
  stdout: O;
  stderr: E;
  readonly stdio: [I, O, E, ...Array<Readable | Writable | Duplex | null>];
  /** The leader's exit code, once it exited (a negative errno after a failed start). */
  exitCode: number | null = null;
  /** The signal that ended the leader, once it exited. */
  signalCode: NodeJS.Signals | null = null;
  /** `true` once {@link kill} delivered a signal. */
  killed = false;
  readonly spawnfile: string;
  readonly spawnargs: string[];
  /** Always `false`: there is no IPC channel. */
  readonly connected = false;
  /** The process group underneath; `null` when the start failed. */
  readonly group: ProcessGroup | null;

  /** @internal Made by {@link spawn}. */
  constructor(
    spawnfile: string,
    spawnargs: string[],
    group: ProcessGroup | null,
    stdio: Array<Readable | Writable | Duplex | null>,
  ) {
    super();
    this.spawnfile = spawnfile;
    this.spawnargs = spawnargs;
    this.group = group;
    this.pid = group?.pid;
    this.stdio = stdio as ChildProcess<I, O, E>['stdio'];
    this.stdin = (stdio[0] ?? null) as I;
    this.stdout = (stdio[1] ?? null) as O;
    this.stderr = (stdio[2] ?? null) as E;
  }

  /**
   * Sends `signal` (default `'SIGTERM'`; 0 probes) to every member of the group, while the
   * leader has not exited. Returns whether it was sent; `false` once the leader exited (the group
   * is being cleaned then) or the start failed.
   */
  kill(signal: NodeJS.Signals | number = 'SIGTERM'): boolean {
    const sig = validateSignal(signal, 'signal', this.kill, true);
    const g = this.group;
    if (!g || this.exitCode !== null || this.signalCode !== null) return false;
    const sent = g.signal(sig);
    if (sent) this.killed = true;
    return sent;
  }

  /** The event loop waits for the leader (the default). */
  ref(): void {
    this.group?.leader.ref();
  }

  /**
   * The event loop no longer waits for the leader. procpin's promise still holds: a group that
   * is running when this process exits is SIGKILLed.
   */
  unref(): void {
    this.group?.leader.unref();
  }

  /** There is no IPC channel: always `false`, as child_process's without one. */
  send(): false {
    return false;
  }

  /** As child_process's: `kill()` unless already killed (the group is cleaned as on any exit). */
  [Symbol.dispose](): void {
    if (!this.killed) this.kill();
  }

  /** Stops the group (killSignal, grace, SIGKILL) and waits for `'close'`. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.group) return;
    const closed = new Promise<void>((resolve) => {
      if (this.#closed) resolve();
      else this.once('close', () => resolve());
    });
    await this.group.stop();
    await closed;
  }

  #closed = false;

  /** @internal */
  markClosed(): void {
    this.#closed = true;
  }
}

// Typed listeners, as @types/node has them for ChildProcess.
export interface ChildProcess {
  on(event: 'spawn', listener: () => void): this;
  on(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- EventEmitter's own signature: a listener of any other event takes what its emit passes (unknown[] would reject `(x: string) => void`).
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once(event: 'spawn', listener: () => void): this;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  once(
    event: 'close',
    listener: (code: number | null, signal: NodeJS.Signals | null) => void,
  ): this;
  once(event: 'error', listener: (err: Error) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as for on() above.
  once(event: string | symbol, listener: (...args: any[]) => void): this;
}

/**
 * `child_process.spawn` over a {@link ProcessGroup}: the same arguments, the same events and
 * properties, with the group's cleanup underneath. Bad arguments and unknown options throw (as
 * child_process's validation does); a failure to start is reported by `'error'`.
 *
 * @example
 * import { spawn } from 'procpin/child_process';
 * const child = spawn('npm', ['run', 'dev'], { stdio: 'inherit', grace: 2000 });
 * child.on('close', (code, signal) => console.log('dev server ended', code, signal));
 */
export function spawn<const S extends StdioOptions = 'pipe'>(
  command: string,
  args?: readonly string[],
  options?: SpawnOptions & { stdio?: S | undefined },
): ChildProcess<StdinOf<S>, OutputOf<S, 1>, OutputOf<S, 2>>;
export function spawn<const S extends StdioOptions = 'pipe'>(
  command: string,
  options?: SpawnOptions & { stdio?: S | undefined },
): ChildProcess<StdinOf<S>, OutputOf<S, 1>, OutputOf<S, 2>>;
export function spawn(
  command: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
): ChildProcess {
  const [args, options] = spawnArguments(command, argsOrOptions, maybeOptions, spawn);
  if (options === null) throw invalidArgType('options', 'of type object', options, spawn);
  const opts = readOptions<SpawnOptions>(options, 'options', ADAPTER_OPTIONS, spawn, UNSUPPORTED);
  // child_process's own error codes for these (procpin's spawn says ERR_OUT_OF_RANGE for both).
  for (const id of ['uid', 'gid'] as const) {
    const v = opts[id];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0 && v <= 0xfffffffe)) {
      throw invalidArgType(`options.${id}`, 'int32', v, spawn);
    }
  }
  if (opts.timeout !== undefined && !(Number.isInteger(opts.timeout) && opts.timeout >= 0)) {
    throw outOfRange('options.timeout', '>= 0 and <= 2147483647', opts.timeout, spawn);
  }
  if (opts.cwd === '') opts.cwd = undefined; // child_process does not chdir to ''
  const {
    detached,
    windowsHide: _wh,
    windowsVerbatimArguments: _wv,
    stdio,
    signal: abort,
    ...rest
  } = opts;
  const groupOptions: SpawnGroupOptions = { ...rest };
  if (detached !== undefined && detached !== false && detached !== true) {
    throw invalidArgType('options.detached', 'of type boolean', detached, spawn);
  }
  if (detached) groupOptions.processGroup = 'session';
  const stdioList = stdioEntries(stdio);
  groupOptions.stdio = stdioList;

  const shell = opts.shell;
  const spawnfile =
    shell === true ? '/bin/sh' : typeof shell === 'string' && shell !== '' ? shell : command;
  const rest0 =
    shell === true || (typeof shell === 'string' && shell !== '')
      ? ['-c', [command, ...args].join(' ')]
      : [...args];
  const spawnargs = [typeof opts.argv0 === 'string' ? opts.argv0 : spawnfile, ...rest0];

  // child_process emits 'error' with an AbortError when its signal aborts; the listener goes on
  // first, so that a signal whose addEventListener throws starts nothing.
  // One listener, as child_process has: abort stops the group and emits 'error'.
  validateAbortSignal(abort, 'options.signal', spawn);
  let child: ChildProcess | null = null;
  const onAbort = () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    void child.group?.stop();
    child.emit('error', abortError(abort));
  };
  abort?.addEventListener('abort', onAbort, { once: true });
  let group: ProcessGroup;
  try {
    group = spawnGroup(command, args, groupOptions);
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    const e = err as Partial<SpawnError>;
    if (typeof e.errno !== 'number' || typeof e.syscall !== 'string') throw err;
    return failedStart(spawnfile, spawnargs, stdioList, e.errno);
  }
  const c = new ChildProcess(spawnfile, spawnargs, group, [...group.leader.stdio]);
  child = c;
  // Our stop (timeout, abort, group.stop()) reaching the running leader is a kill, as
  // child_process's timeout and abort are: `killed` says so.
  onStopReached(group, () => (c.killed = true));
  process.nextTick(() => c.emit('spawn'));
  if (abort?.aborted) process.nextTick(onAbort); // after 'spawn', as child_process has it
  watch(c, group, () => abort?.removeEventListener('abort', onAbort));
  return c;
}

// 'overlapped' is 'pipe' off Windows (as child_process has it); a string applies to 0-2.
function stdioEntries(stdio: StdioOptions | undefined): SpawnGroupOptions['stdio'] {
  if (stdio === 'overlapped') return 'pipe';
  if (!Array.isArray(stdio)) return stdio as SpawnGroupOptions['stdio'];
  return (stdio as StdioEntry[]).map((e) => (e === 'overlapped' ? 'pipe' : e));
}

function failedStart(
  spawnfile: string,
  spawnargs: string[],
  stdio: SpawnGroupOptions['stdio'],
  errno: number,
): ChildProcess {
  // child_process hands out stream objects even when the start fails (a supervisor may attach
  // listeners right after spawn): ended ones here, for each 'pipe' entry.
  const list =
    stdio === undefined || typeof stdio === 'string' ? [stdio, stdio, stdio] : [...stdio];
  while (list.length < 3) list.push(undefined);
  const streams = list.map((e, i) => {
    if (!(e === 'pipe' || ((e === null || e === undefined) && i < 3))) return null;
    const s = new PassThrough();
    if (i === 0) s.destroy();
    else s.end().resume();
    return s;
  });
  const c = new ChildProcess(spawnfile, spawnargs, null, streams);
  c.exitCode = errno;
  process.nextTick(() => {
    const err = errnoException(errno, `spawn ${spawnfile}`) as unknown as SpawnError;
    err.message = `spawn ${spawnfile} ${err.code}`;
    err.path = spawnfile;
    err.spawnargs = spawnargs.slice(1);
    c.emit('error', err);
    const closing = streamsClosed(streams).then(() => {
      c.markClosed();
      c.emit('close', errno, null);
    });
    closing.catch(uncaught);
  });
  return c;
}

/** Rethrows a listener's throw outside the promise chain: an uncaught exception, as child_process has it. */
function uncaught(err: unknown): void {
  process.nextTick(() => {
    throw err;
  });
}

function watch(c: ChildProcess, group: ProcessGroup, done: () => void): void {
  const exiting = group.exited.then(
    (info) => {
      if (info.signal !== null) c.signalCode = info.signal as NodeJS.Signals;
      else c.exitCode = info.exitCode;
      done();
      // As child_process does at exit: stdin is destroyed, so a late write is no EPIPE 'error'.
      c.stdin?.destroy();
      c.emit('exit', c.exitCode, c.signalCode);
      // As child_process does at exit: output nobody reads is drained, so that 'close' comes.
      for (let i = 1; i < c.stdio.length; i++) {
        const s = c.stdio[i] as Readable | null;
        if (s && s.readable && s.readableFlowing === null && s.listenerCount('readable') === 0)
          s.resume();
      }
    },
    () => done(),
  );
  exiting.catch(uncaught);
  const streams = c.stdio.slice(1);
  const closing = group.closed.then(
    (result) =>
      streamsClosed(streams).then(() => {
        // A leader whose status was lost still closes; its code and signal are what the group says.
        if (c.exitCode === null && c.signalCode === null) {
          if (result.signal !== null) c.signalCode = result.signal as NodeJS.Signals;
          else c.exitCode = result.exitCode;
        }
        c.markClosed();
        c.emit('close', c.exitCode, c.signalCode);
      }),
    (err: unknown) => {
      // The leader was lost to a foreign reaper (ERR_PROCPIN_CHILD_LOST): said to whoever
      // listens, never an uncaught 'error' that child_process would not have thrown either.
      c.markClosed();
      if (c.listenerCount('error') > 0) c.emit('error', err);
      c.emit('close', c.exitCode, c.signalCode);
    },
  );
  closing.catch(uncaught);
}
