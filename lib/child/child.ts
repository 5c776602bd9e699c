/**
 * SPEC Layer 2: children the addon owns. `spawn` starts a program from the addon (clone with
 * CLONE_VM | CLONE_VFORK | CLONE_PIDFD, then execve), holds it through a pidfd, learns of its
 * exit without reaping it, and reaps only when told. `openProcess` holds any process by pidfd.
 * @module
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Duplex, Readable, Stream, Writable } from 'node:stream';
import { binding, type NativeChildHandle, type RawWaitInfo } from '../binding';
import { codedError, errnoException } from '../errors';
import type { Signal } from '../primitives';
import { toWaitInfo, type WaitInfo } from './waitinfo';
import {
  INT32_MAX,
  invalidArgType,
  invalidArgValue,
  inheritedKeys,
  readOptions,
  validateAbortSignal,
  validateBoolean,
  validateInteger,
  validateCString,
  validateFd,
  validateObject,
  validatePid,
  validateSignal,
} from '../validate';

/**
 * One entry of {@link SpawnOptions.stdio}, as `child_process` takes them: a kind, a descriptor
 * number, or a Stream that has a descriptor (`process.stdout`, a connected `net.Socket`).
 */
export type StdioEntry = 'pipe' | 'inherit' | 'ignore' | number | Stream | null | undefined;

/** Options of {@link spawn}. Each is read exactly once; an unknown one throws. */
export interface SpawnOptions {
  /** Working directory of the child. Relative `file` names and PATH entries resolve against it. */
  cwd?: string | URL | undefined;
  /** Environment of the child (default `process.env`). Its `PATH` is the one searched. */
  env?: Record<string, string | number | boolean | undefined> | NodeJS.ProcessEnv | undefined;
  /** `argv[0]` of the child (default `file`). */
  argv0?: string | undefined;
  /**
   * Per descriptor of the child, as `child_process`: `'pipe'` (a pipe for 0-2, a socket pair for
   * 3+; the parent's end is a Node stream), `'inherit'` (the parent's descriptor of the same
   * number), `'ignore'` (`/dev/null` for 0-2, closed for 3+), a descriptor number of the parent,
   * a Stream that has a descriptor, or `null`/`undefined` (`'pipe'` for 0-2, `'ignore'` for
   * 3+). A string applies to 0-2. Default `'pipe'`. A descriptor the child gets at 0-2 reaches it
   * in blocking mode (O_NONBLOCK cleared, as libuv does; the flag belongs to the open file
   * description, so the parent's copy is blocking afterwards too, exactly as after
   * `child_process.spawn`).
   */
  stdio?: 'pipe' | 'inherit' | 'ignore' | readonly StdioEntry[] | undefined;
  /**
   * `'new'` (default): the child leads a new process group (setpgid(0, 0)). `'session'`: a new
   * session (setsid). `'inherit'`: the parent's group.
   */
  processGroup?: 'new' | 'session' | 'inherit' | undefined;
  /**
   * A signal the child gets when the spawning **thread** exits (`PR_SET_PDEATHSIG`, set in the
   * child before exec, with a re-check so that a parent that died first is caught). Spawned from
   * a Worker, the child gets it when that Worker's thread ends, not when the process does.
   * Default `null`: none.
   */
  parentDeathSignal?: Signal | null | undefined;
  /** Close every descriptor but the mapped stdio ones in the child (default `true`). */
  closeFds?: boolean | undefined;
  /** The child's user id (setuid in the child; supplementary groups dropped, as libuv does). */
  uid?: number | undefined;
  /** The child's group id (setgid in the child; supplementary groups dropped). */
  gid?: number | undefined;
  /**
   * Runs `file` and `args`, joined by spaces, through a shell: `true` is `/bin/sh -c`, a string
   * names the shell. As child_process does it: the arguments are not quoted.
   */
  shell?: boolean | string | undefined;
  /** Aborting it sends `killSignal` to the child. */
  signal?: AbortSignal | undefined;
  /** Milliseconds the child may run; then it gets `killSignal`. 0 or absent: no limit. */
  timeout?: number | undefined;
  /** What `signal` and `timeout` send. Default `'SIGTERM'`. */
  killSignal?: Signal | undefined;
}

/** The names {@link spawn} reads from its options. @internal */
export const SPAWN_OPTIONS = [
  'cwd',
  'env',
  'argv0',
  'stdio',
  'processGroup',
  'parentDeathSignal',
  'closeFds',
  'uid',
  'gid',
  'shell',
  'signal',
  'timeout',
  'killSignal',
] as const;

const kInternal = Symbol('procpin.internal');

const STDIO_PIPE = -1;
const STDIO_IGNORE = -2;
const GROUPS = { new: 0, session: 1, inherit: 2 } as const;
const ECHILD = -10;
const ESRCH = -3;
const SIGKILL = 9;
const DISPOSE_WAIT_MS = 1000;

/**
 * `ERR_PROCPIN_CHILD_LOST`: someone else reaped the child (another library's `waitpid(-1)`,
 * SIGCHLD set to ignored after the spawn). Its exit status is gone, and so is any right to its
 * number: nothing is sent to it any more.
 */
function lostError(pid: number, caller?: (...a: never[]) => unknown) {
  return codedError(
    Error,
    'ERR_PROCPIN_CHILD_LOST',
    `The child ${pid} was reaped by someone else (a foreign wait, or SIGCHLD ignored): its exit status is lost`,
    caller,
    { pid, errno: ECHILD, syscall: 'waitid' },
  );
}

function notExited(caller: (...a: never[]) => unknown) {
  return codedError(
    Error,
    'ERR_PROCPIN_NOT_EXITED',
    'The child has not exited yet: await child.exited before reap()',
    caller,
  );
}

/**
 * A child started by {@link spawn}, held through its pidfd.
 *
 * Guarantees:
 * (a) the child's exit is learned without reaping it: after `exited` resolves it stays a zombie,
 *     so its pid, and the process group it leads, cannot be reissued until `reap()`;
 * (b) a signal is sent only while the child is unreaped: through the pidfd (which can never
 *     reach another process), or on kernels without pidfds by pid, which the unreaped child
 *     still owns; `kill()` returns `false` and sends nothing once the child has exited;
 * (c) the pidfd is closed exactly once: by `reap()`, `close()` or garbage collection;
 * (d) a Child that is closed or becomes unreachable never leaves a zombie behind: an exited
 *     child is reaped then, a running one as soon as it exits (without keeping the event loop
 *     alive);
 * (e) nothing here reaps another process: waits name this child's pid, never `-1`, and no
 *     SIGCHLD handler is installed, so `child_process` children are left alone.
 */
export class Child {
  /** The child's pid. Free for reuse by the kernel once {@link Child.reaped} is true. */
  readonly pid: number;
  /** The parent's end of the child's stdin when it is `'pipe'`, else null. */
  readonly stdin: Writable | null;
  /** The parent's end of the child's stdout when it is `'pipe'`, else null. */
  readonly stdout: Readable | null;
  /** The parent's end of the child's stderr when it is `'pipe'`, else null. */
  readonly stderr: Readable | null;
  /** Every descriptor's stream (`'pipe'` entries), else null, indexed by child descriptor. */
  readonly stdio: ReadonlyArray<Readable | Writable | Duplex | null>;
  /**
   * Resolves when the child exits (or is killed), **without reaping it**: the child stays a
   * zombie until {@link Child.reap}. Rejects with `ERR_PROCPIN_CHILD_LOST` if the exit status
   * was lost (something else in this process reaped the child, or SIGCHLD became ignored).
   */
  readonly exited: Promise<WaitInfo>;

  #handle: NativeChildHandle;
  #info: WaitInfo | null = null;
  #reaped = false;
  #closed = false;
  #lost: Error | null = null;
  #guard: ((caller: (...a: never[]) => unknown) => void) | null = null;
  #internalFds: number[] = [];
  #mapExit: ((info: WaitInfo) => WaitInfo) | null = null;
  #resolve!: (info: WaitInfo) => void;
  #reject!: (err: Error) => void;

  /** @internal Children are made by {@link spawn}. */
  constructor(token: typeof kInternal, spec: SpawnSpec) {
    if (token !== kInternal) throw new TypeError('Illegal constructor: use spawn()');
    this.exited = new Promise<WaitInfo>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.exited.catch(() => {}); // a lost status must not crash a process that never awaited
    const r = binding.spawn(
      spec.candidates,
      spec.argv,
      spec.env,
      spec.cwd,
      spec.stdio,
      spec.group,
      spec.pdeathsig,
      spec.closeFds,
      (result, reaped) => this.#onExit(result, reaped),
      spec.cgroupProcs ?? -1,
      [spec.uid, spec.gid],
    );
    if (typeof r === 'number') throw errnoException(r, 'spawn', { path: spec.file }, spawn);
    if ('errno' in r) {
      const syscall = ['chdir', 'execve', 'setuid', 'setgid'].includes(r.stage) ? r.stage : 'spawn';
      const path = r.stage === 'chdir' && spec.cwd !== null ? spec.cwd : spec.file;
      const err = errnoException(r.errno, syscall, { path, spawnargs: spec.args }, spawn);
      // Joining a cgroup (contain: 'cgroup') failed: containment tells that apart.
      if (r.stage === 'cgroup') Object.defineProperty(err, 'stage', { value: 'cgroup' });
      throw err;
    }
    this.pid = r.pid;
    this.#handle = r.handle;
    const streams: Array<Readable | Writable | Duplex | null> = [];
    const own = r.fds.length - (spec.internal ?? 0);
    this.#internalFds = r.fds.slice(own);
    try {
      for (let i = 0; i < own; i++) {
        const fd = r.fds[i] ?? -1;
        streams.push(fd < 0 ? null : openStream(fd, i));
      }
    } catch (err) {
      // The caller gets no Child, so none may be left behind: no descriptor, no process.
      for (const st of streams) st?.destroy();
      this.#internalFds = [];
      for (let i = streams.length; i < r.fds.length; i++) {
        const fd = r.fds[i] ?? -1;
        if (fd >= 0) fs.closeSync(fd);
      }
      this.#handle.kill(SIGKILL);
      this.#handle.close();
      throw err;
    }
    this.stdio = streams;
    this.stdin = (streams[0] as Writable | null) ?? null;
    this.stdout = (streams[1] as Readable | null) ?? null;
    this.stderr = (streams[2] as Readable | null) ?? null;
  }

  /** @internal The parent's ends of procpin's own stdio entries (SpawnSpec.internal); once. */
  static takeInternalFds(child: Child): number[] {
    const fds = child.#internalFds;
    child.#internalFds = [];
    return fds;
  }

  /** @internal How the first exit seen is reported (containment: the command's, for its init's). */
  static mapExit(child: Child, fn: (info: WaitInfo) => WaitInfo): void {
    child.#mapExit = fn;
  }

  /**
   * A pidfd of the child (O_CLOEXEC), or -1: on a kernel without pidfds, and after reap or close.
   * It is a duplicate of the one procpin watches and signals through, which stays private: closing
   * this one does not disturb procpin, and procpin never acts on a descriptor that got its number
   * later (it checks before it closes the duplicate, and makes a new one when it was closed).
   */
  get pidfd(): number {
    return this.#handle.pidfd();
  }

  /** True once the child was reaped: its pid is free and nothing more is sent to it. */
  get reaped(): boolean {
    return this.#reaped;
  }

  #onExit(result: RawWaitInfo | number, reaped: boolean): void {
    if (typeof result === 'number') {
      this.#reaped = true;
      this.#lost = result === ECHILD ? lostError(this.pid) : errnoException(result, 'waitid', { pid: this.pid });
      this.#reject(this.#lost);
      return;
    }
    this.#settle(toWaitInfo(result), reaped);
  }

  #settle(info: WaitInfo, reaped: boolean): WaitInfo {
    if (!this.#info) this.#info = this.#mapExit === null ? info : this.#mapExit(info);
    if (reaped) {
      this.#reaped = true;
      // Nobody can read the child's stdin any more: close our end once the child is reaped (not
      // at its exit, where a write still in flight is owed its EPIPE). The output streams stay,
      // to be read to their end.
      if (this.stdin && !this.stdin.destroyed) this.stdin.destroy();
    }
    this.#resolve(this.#info);
    return this.#info;
  }

  /**
   * A `waitid(WEXITED | WNOHANG | WNOWAIT)` look: how the child ended, or `null` while it runs.
   * Never reaps. After {@link Child.reap} it returns what the reap reported.
   */
  poll(): WaitInfo | null {
    if (this.#reaped) {
      if (this.#info) return this.#info;
      throw this.#lost ?? errnoException(ECHILD, 'waitid', { pid: this.pid }, this.poll);
    }
    const r = this.#handle.poll();
    if (r === null) return null;
    if (typeof r === 'number') {
      if (r === ECHILD) throw this.#markLost(this.poll);
      throw errnoException(r, 'waitid', { pid: this.pid }, this.poll);
    }
    return this.#settle(toWaitInfo(r), false);
  }

  #markLost(caller?: (...a: never[]) => unknown): Error {
    this.#reaped = true;
    this.#lost ??= lostError(this.pid, caller);
    this.#reject(this.#lost);
    return this.#lost;
  }

  /**
   * Sends `signal` (default `'SIGTERM'`; 0 probes) through the pidfd. Returns `true` when it
   * was sent to the running child; `false`, sending nothing, once the child has exited, was
   * reaped or this handle was closed. A zombie is never signalled, a reaped pid never touched.
   */
  kill(signal: Signal | 0 = 'SIGTERM'): boolean {
    const sig = validateSignal(signal, 'signal', this.kill, true);
    if (this.#reaped || this.#closed || this.#info) return false;
    const look = this.#handle.poll();
    if (look === ECHILD) {
      this.#markLost();
      return false;
    }
    if (look !== null && typeof look === 'object') {
      this.#settle(toWaitInfo(look), false);
      return false;
    }
    // Between the look and the signal the child can only become a zombie, which is still ours:
    // the signal then does nothing.
    const r = this.#handle.kill(sig);
    if (r === 0) return true;
    if (r === ESRCH) return false;
    throw errnoException(
      r,
      this.#handle.pidfd() >= 0 ? 'pidfd_send_signal' : 'kill',
      { pid: this.pid },
      this.kill,
    );
  }

  /**
   * Reaps the child (`waitid(WEXITED | WNOHANG)`): its pid is free afterwards, the pidfd is
   * closed, and `kill` sends nothing. Only once the child has exited (await {@link Child.exited});
   * throws `ERR_PROCPIN_NOT_EXITED` while it runs. Repeated calls return the same result.
   */
  reap(): WaitInfo {
    this.#guard?.(this.reap);
    return this.#reap(false, this.reap);
  }

  #reap(keepPidfd: boolean, caller: (...a: never[]) => unknown): WaitInfo {
    if (this.#reaped) {
      if (this.#info) return this.#info;
      throw this.#lost ?? errnoException(ECHILD, 'waitid', { pid: this.pid }, caller);
    }
    const r = this.#handle.reap(keepPidfd);
    if (r === null) throw notExited(caller);
    if (typeof r === 'number') {
      if (r === ECHILD) throw this.#markLost(caller);
      throw errnoException(r, 'waitid', { pid: this.pid }, caller);
    }
    return this.#settle(toWaitInfo(r), true);
  }

  /**
   * @internal Makes `reap()` and `close()` (and dispose) ask `guard` first, which throws to refuse:
   * a process group reaps its own leader, and only after the group is clean.
   */
  static setGuard(child: Child, guard: ((caller: (...a: never[]) => unknown) => void) | null): void {
    child.#guard = guard;
  }

  /** @internal Reaps but keeps the pidfd open until close() (a group leader's pidfd still
   * addresses its group with PIDFD_SIGNAL_PROCESS_GROUP after the reap). */
  static reapKeepingPidfd(child: Child): WaitInfo {
    return child.#reap(true, Child.reapKeepingPidfd);
  }

  /** Lets the event loop exit while the child runs. Stdio pipes keep their own references. */
  unref(): this {
    this.#handle.unref();
    return this;
  }

  /** Undoes {@link Child.unref}: a running child keeps the event loop alive (the default). */
  ref(): this {
    this.#handle.ref();
    return this;
  }

  /**
   * Lets go of the child. An exited child is reaped now; a running one is left running, no
   * longer keeps the event loop alive, and is reaped the moment it exits (`exited` still
   * resolves). `kill` returns false afterwards. Stdio streams are not touched. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    this.#guard?.(this.close);
    this.#closed = true;
    const r = this.#handle.close();
    if (r === null || r === undefined) return;
    if (typeof r === 'number') {
      this.#markLost();
      return;
    }
    this.#settle(toWaitInfo(r), true);
  }

  /**
   * Nothing outlives the `using` scope: a child that still runs is SIGKILLed, then reaped (a
   * wait of a few milliseconds at most: SIGKILL is not delayed but by the kernel; after a
   * second it is left to be reaped at its exit) and closed. An exited child is reaped and closed.
   */
  [Symbol.dispose](): void {
    if (this.#closed) return;
    this.#guard?.(this.close);
    if (!this.#reaped) {
      const r = this.#handle.killAndReap(DISPOSE_WAIT_MS);
      if (r === ECHILD) this.#markLost();
      else if (r !== null && typeof r === 'object') this.#settle(toWaitInfo(r), true);
    }
    this.close();
  }

  /** @internal A group signal through this leader's own pidfd (see NativeChildHandle.signalGroup). */
  static signalGroup(child: Child, sig: number): number {
    return child.#handle.signalGroup(sig);
  }

  /** @internal 1 while the leader is in the group it leads, 0 once it left it, or -errno. */
  static inGroup(child: Child): number {
    return child.#reaped ? ESRCH : child.#handle.inGroup();
  }

  /** @internal The leader's group dies with this environment and with the process. */
  static armEndKill(child: Child, pidfdGroup: boolean): number {
    return child.#handle.armEndKill(pidfdGroup);
  }
}

/** @internal */
/** @internal What is handed to the addon; containment rewrites it (see ./contain). */
export interface SpawnSpec {
  file: string;
  args: string[];
  candidates: string[];
  argv: string[];
  env: string[];
  cwd: string | null;
  stdio: number[];
  group: number;
  pdeathsig: number;
  closeFds: boolean;
  uid: number;
  gid: number;
  /** A cgroup's cgroup.procs open for writing: the child joins it first (-1 or absent: none). */
  cgroupProcs?: number;
  /** The last `internal` stdio entries are procpin's own: their descriptors get no stream. */
  internal?: number;
}

/** @internal A rewrite of the spec just before the spawn (containment's hook). */
export type SpawnRewrite = (spec: SpawnSpec) => SpawnSpec;

function openStream(fd: number, i: number): Readable | Writable | Duplex {
  // A pipe (0-2) is one-way, a socket pair (3+) both; net.Socket gives child_process's streams:
  // backpressure, 'end' at EOF, and it closes the descriptor when destroyed.
  return new net.Socket({ fd, readable: i !== 0, writable: i === 0 || i >= 3 });
}

/**
 * Starts `file` with `args`, from the addon, and returns the {@link Child} that holds it.
 *
 * `file` is looked up in `PATH` as `execvp` does (the `env` option's `PATH` when given, else
 * this process's): `ENOENT`/`ENOTDIR` entries are skipped, `EACCES` is remembered and reported
 * if nothing runs. A failure to start throws here, synchronously, with `code`, `syscall`
 * (`'spawn'`, `'chdir'` or `'execve'`), `path` and `spawnargs`, and leaves no zombie. The child
 * gets a fresh signal mask and default dispositions (Node ignores SIGPIPE; the child does not).
 *
 * Throws `ERR_PROCPIN_SIGCHLD_IGNORED` when SIGCHLD is ignored in this process (SIG_IGN or
 * SA_NOCLDWAIT): the kernel would then reap every child at once and none could be held.
 *
 * @example
 * const child = spawn('sleep', ['1'], { stdio: 'ignore' });
 * const info = await child.exited; // a zombie now: pid and pgid still reserved
 * child.reap();
 */
export function spawn(file: string, args?: readonly string[], options?: SpawnOptions): Child;
export function spawn(file: string, options?: SpawnOptions): Child;
export function spawn(
  file: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
): Child {
  const [args, options] = spawnArguments(file, argsOrOptions, maybeOptions, spawn);
  const opts = readOptions<SpawnOptions>(options, 'options', SPAWN_OPTIONS, spawn);
  const killSignal = validateSignal(opts.killSignal ?? 'SIGTERM', 'options.killSignal', spawn);
  const timeout = validateInteger(opts.timeout ?? 0, 'options.timeout', 0, INT32_MAX, spawn);
  const abort = validateAbortSignal(opts.signal, 'options.signal', spawn);
  const spec = prepareSpawn(file, args, opts, spawn);
  let child: Child | null = null;
  // The abort listener is added before anything starts: a look-alike signal whose
  // addEventListener throws leaves nothing running.
  const onAbort = () => child?.kill(killSignal);
  abort?.addEventListener('abort', onAbort, { once: true });
  try {
    child = startChild(spec);
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    throw err;
  }
  const c = child;
  let timer: NodeJS.Timeout | null = null;
  if (timeout > 0) {
    // Unref'd: the child's own watch decides whether the event loop stays alive.
    timer = setTimeout(() => c.kill(killSignal), timeout);
    timer.unref();
  }
  if (abort?.aborted) queueMicrotask(onAbort); // as child_process: started, then stopped at once
  if (abort || timer) {
    const done = () => {
      if (timer) clearTimeout(timer);
      abort?.removeEventListener('abort', onAbort);
    };
    c.exited.then(done, done);
  }
  return c;
}

/** `(file, args?, options?)` or `(file, options?)`, as child_process takes them. @internal */
export function spawnArguments<O>(
  file: unknown,
  argsOrOptions: readonly string[] | O | undefined,
  maybeOptions: O | undefined,
  caller: (...a: never[]) => unknown,
): [readonly string[], O | undefined] {
  validateCString(file, 'file', caller);
  if ((file as string).length === 0) throw invalidArgValue('file', file, 'cannot be empty', caller);
  let args: readonly string[] = [];
  let options: O | undefined = maybeOptions;
  if (Array.isArray(argsOrOptions)) {
    args = argsOrOptions;
  } else if (argsOrOptions !== undefined && argsOrOptions !== null) {
    if (typeof argsOrOptions !== 'object' || maybeOptions !== undefined) {
      throw invalidArgType('args', 'an instance of Array', argsOrOptions, caller);
    }
    options = argsOrOptions as O;
  }
  return [args.map((a, i) => validateCString(a, `args[${i}]`, caller)), options];
}

const UID_MAX = 0xfffffffe; // (uid_t)-1 means "unchanged" to the kernel

/**
 * Validates options already read once (see readOptions) into what the addon takes. Starts
 * nothing. `signal`, `timeout` and `killSignal` are the caller's to apply. @internal
 */
export function prepareSpawn(
  file: string,
  args: readonly string[],
  opts: Partial<SpawnOptions>,
  caller: (...a: never[]) => unknown,
): SpawnSpec {
  let cwd: string | null = null;
  if (opts.cwd !== undefined && opts.cwd !== null) {
    const c = opts.cwd instanceof URL ? fileURLToPath(opts.cwd) : opts.cwd;
    cwd = validateCString(c, 'options.cwd', caller);
  }

  const envOpt = opts.env;
  if (envOpt !== undefined && (envOpt === null || typeof envOpt !== 'object')) {
    throw invalidArgType('options.env', 'of type object', envOpt, caller);
  }
  const envSource = (envOpt ?? process.env) as Record<string, unknown>;
  // Always a copy, taken here: the child shares our memory (CLONE_VM) and must never read the
  // live `environ`, which a Worker with SHARE_ENV may be rewriting (setenv reallocates it) while
  // the child's execve reads it. Node reads each variable of process.env under its own lock.
  // for...in, as child_process reads env: Object.create(process.env) passes what it inherits.
  const env: string[] = [];
  let pathVar: string | undefined;
  for (const key of inheritedKeys(envSource)) {
    const value = envSource[key];
    if (value === undefined) continue;
    validateCString(key, `options.env['${key}']`, caller);
    // A template literal, as child_process has it: a Symbol throws instead of becoming text.
    const text = validateCString(`${value as string}`, `options.env['${key}']`, caller);
    env.push(`${key}=${text}`);
    if (key === 'PATH') pathVar = text; // the value read once, not a second look at the getter
  }

  let execFile = file;
  let argList: readonly string[] = args;
  if (opts.shell !== undefined && opts.shell !== false && opts.shell !== '') {
    if (opts.shell !== true && typeof opts.shell !== 'string') {
      throw invalidArgType('options.shell', 'of type boolean or string', opts.shell, caller);
    }
    // '' is no shell, as child_process has it.
    const shell = opts.shell === true ? '/bin/sh' : validateCString(opts.shell, 'options.shell', caller);
    argList = ['-c', [file, ...args].join(' ')];
    execFile = shell;
  }

  let argv0 = execFile;
  if (opts.argv0 !== undefined) argv0 = validateCString(opts.argv0, 'options.argv0', caller);

  const stdio = normalizeStdio(opts.stdio, caller);

  let group: number = GROUPS.new;
  if (opts.processGroup !== undefined) {
    const g = (GROUPS as Record<string, number>)[opts.processGroup as string];
    if (typeof opts.processGroup !== 'string' || g === undefined) {
      throw invalidArgValue(
        'options.processGroup',
        opts.processGroup,
        "must be 'new', 'session' or 'inherit'",
        caller,
      );
    }
    group = g;
  }

  let pdeathsig = 0;
  if (opts.parentDeathSignal !== undefined && opts.parentDeathSignal !== null) {
    pdeathsig = validateSignal(opts.parentDeathSignal, 'options.parentDeathSignal', caller);
  }

  let closeFds = true;
  if (opts.closeFds !== undefined) closeFds = validateBoolean(opts.closeFds, 'options.closeFds', caller);

  const uid = opts.uid === undefined ? -1 : validateInteger(opts.uid, 'options.uid', 0, UID_MAX, caller);
  const gid = opts.gid === undefined ? -1 : validateInteger(opts.gid, 'options.gid', 0, UID_MAX, caller);

  if (binding.sigchldIgnored() === 1) {
    throw codedError(
      Error,
      'ERR_PROCPIN_SIGCHLD_IGNORED',
      'SIGCHLD is ignored in this process (SIG_IGN or SA_NOCLDWAIT): the kernel would reap ' +
        'every child at once and no exit could be held',
      caller,
    );
  }

  return {
    file: execFile,
    args: [...argList],
    candidates: execCandidates(execFile, pathVar),
    argv: [argv0, ...argList],
    env,
    cwd,
    stdio,
    group,
    pdeathsig,
    closeFds,
    uid,
    gid,
  };
}

/** Starts what {@link prepareSpawn} validated. @internal */
export function startChild(spec: SpawnSpec): Child {
  return new Child(kInternal, spec);
}

/**
 * @internal A group leader's spawn with the spec rewritten just before the addon gets it
 * (containment's hook). Options are read once, as {@link spawn} reads them; the child's own
 * `signal`, `timeout` and `killSignal` are the group's business and are not taken here.
 */
export function spawnRewritten(
  file: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
  rewrite?: SpawnRewrite,
): Child {
  const [args, options] = spawnArguments(file, argsOrOptions, maybeOptions, spawn);
  const known = SPAWN_OPTIONS.filter((k) => k !== 'signal' && k !== 'timeout' && k !== 'killSignal');
  const opts = readOptions<SpawnOptions>(options, 'options', known, spawn);
  const spec = prepareSpawn(file, args, opts, spawn);
  return startChild(rewrite ? rewrite(spec) : spec);
}

/** The paths execvp would try, in order. */
function execCandidates(file: string, pathVar: string | undefined): string[] {
  if (file.includes('/')) return [file];
  // glibc's default when PATH is unset; an empty entry is the working directory.
  const dirs = (pathVar ?? '/bin:/usr/bin').split(':');
  return dirs.map((d) => (d === '' ? file : `${d}/${file}`));
}

function normalizeStdio(stdio: SpawnOptions['stdio'], caller: (...a: never[]) => unknown): number[] {
  let list: unknown[];
  if (stdio === undefined || stdio === null) {
    list = ['pipe', 'pipe', 'pipe'];
  } else if (typeof stdio === 'string') {
    if (stdio !== 'pipe' && stdio !== 'inherit' && stdio !== 'ignore') {
      throw invalidArgValue('options.stdio', stdio, "must be 'pipe', 'inherit', 'ignore' or an array", caller);
    }
    list = [stdio, stdio, stdio];
  } else if (Array.isArray(stdio)) {
    list = [...(stdio as unknown[])];
    while (list.length < 3) list.push(undefined);
  } else {
    throw invalidArgType('options.stdio', 'of type string or an instance of Array', stdio, caller);
  }
  return list.map((e, i) => {
    if (e === 'pipe' || ((e === null || e === undefined) && i < 3)) return STDIO_PIPE;
    if (e === 'ignore' || e === null || e === undefined) return STDIO_IGNORE;
    if (e === 'inherit') return i;
    if (typeof e === 'number') return validateFd(e, `options.stdio[${i}]`, caller);
    if (e === 'ipc') {
      throw invalidArgValue(`options.stdio[${i}]`, e, 'is not supported: procpin has no IPC channel', caller);
    }
    if (typeof e === 'object') {
      const fd = streamFd(e);
      if (fd !== null) return fd;
      throw invalidArgValue(`options.stdio[${i}]`, e, 'must be a Stream that has a descriptor', caller);
    }
    throw invalidArgValue(
      `options.stdio[${i}]`,
      e,
      "must be 'pipe', 'inherit', 'ignore', a descriptor, a Stream or null",
      caller,
    );
  });
}

// The descriptor under a Stream, as child_process finds it: `fd` (process.stdout, fs streams
// once open) or the handle's (a net.Socket, a pipe).
function streamFd(e: object): number | null {
  const direct = (e as { fd?: unknown }).fd;
  if (typeof direct === 'number' && Number.isInteger(direct) && direct >= 0) return direct;
  const handle = (e as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  if (typeof fd === 'number' && Number.isInteger(fd) && fd >= 0) return fd;
  return null;
}

/**
 * A pidfd on any process (not only our children), from {@link openProcess}: for supervisors
 * that watch pids they did not start. The pidfd refers to the process that had the pid when it
 * was opened and never to a later holder of the number.
 */
// ProcessHandles that keep the event loop alive are kept reachable here until their process exits
// or they are closed (the native exit callback deliberately does not hold them).
const refHeld = new Map<object, ProcessHandle>();

export class ProcessHandle {
  /** The pid it was opened on. */
  readonly pid: number;
  /** Resolves when the process exits (its pidfd polls readable). Never settles once closed first. */
  readonly exited: Promise<void>;
  #handle: NativeChildHandle;
  #closed = false;
  readonly #key = {};

  /** @internal Made by {@link openProcess}. */
  constructor(token: typeof kInternal, pid: number) {
    if (token !== kInternal) throw new TypeError('Illegal constructor: use openProcess()');
    let resolve!: () => void;
    this.exited = new Promise<void>((r) => (resolve = r));
    // The native side holds the exit callback strongly until it runs, so the callback must not
    // hold this handle: an unref'd handle that is dropped is then collected and its pidfd closed.
    // A ref'd one is kept reachable (refHeld) until the process exits or the handle is closed, so
    // that someone awaiting only `exited` still sees it settle.
    const key = this.#key;
    const h = binding.openProcess(pid, () => {
      refHeld.delete(key);
      resolve();
    });
    if (typeof h === 'number') throw errnoException(h, 'pidfd_open', { pid }, openProcess);
    this.pid = pid;
    this.#handle = h;
    refHeld.set(key, this);
  }

  /** The pidfd, or -1 once closed. */
  get pidfd(): number {
    return this.#handle.pidfd();
  }

  /**
   * Sends `signal` (default `'SIGTERM'`; 0 probes) through the pidfd. `false`, sending nothing,
   * once the process has exited or the handle is closed.
   */
  kill(signal: Signal | 0 = 'SIGTERM'): boolean {
    const sig = validateSignal(signal, 'signal', this.kill, true);
    if (this.#closed || this.#handle.hasExited()) return false;
    const r = this.#handle.kill(sig);
    if (r === 0) return true;
    if (r === ESRCH) return false;
    throw errnoException(r, 'pidfd_send_signal', { pid: this.pid }, this.kill);
  }

  /** Lets the event loop exit while the process runs. */
  unref(): this {
    this.#handle.unref();
    refHeld.delete(this.#key);
    return this;
  }

  /** Undoes {@link ProcessHandle.unref} (a handle keeps the event loop alive by default). */
  ref(): this {
    this.#handle.ref();
    if (!this.#closed && !this.#handle.hasExited()) refHeld.set(this.#key, this);
    return this;
  }

  /** Closes the pidfd. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    refHeld.delete(this.#key);
    this.#handle.close();
  }

  /** {@link ProcessHandle.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens a pidfd on process `pid` (`pidfd_open`). Throws `ESRCH` when there is none, and
 * `ENOSYS` on a kernel without pidfds (< 5.3): a bare pid is never watched, since it could be
 * reused.
 */
export function openProcess(pid: number): ProcessHandle {
  validatePid(pid, 'pid', openProcess);
  return new ProcessHandle(kInternal, pid);
}
