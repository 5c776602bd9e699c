/**
 * The object `procpin/child_process`'s `spawn` returns: a `ChildProcess` look-alike over a
 * {@link ProcessGroup}, and the option and stdio types that shape it.
 * @module
 */
import { EventEmitter } from 'node:events';
import type { Readable, Writable, Duplex, Stream } from 'node:stream';
import type { ProcessGroup, SpawnGroupOptions } from '../group/group';
import { validateChildProcessSignal } from '../signals';

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
    const sig = validateChildProcessSignal(signal, 'signal', this.kill, true);
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
