/**
 * What {@link spawn} takes and what it hands the addon: the options, their validation (read
 * once), the `PATH` candidates and the stdio map. Starts nothing.
 * @module
 */
import { fileURLToPath } from 'node:url';
import type { Stream } from 'node:stream';
import { binding } from '../binding';
import { codedError } from '../errors';
import {
  INT32_MAX,
  invalidArgType,
  invalidArgValue,
  inheritedKeys,
  validateAbortSignal,
  validateBoolean,
  validateInteger,
  validateCString,
  validateFd,
} from '../validate';
import { validateSignal, type Signal } from '../signals';

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

const STDIO_PIPE = -1;
const STDIO_IGNORE = -2;
const GROUPS = { new: 0, session: 1, inherit: 2 } as const;

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
  /** Streams of stdio entries read through their handle here: see {@link handOverStreams}. */
  handedOver?: readonly object[];
}

/** @internal A rewrite of the spec just before the spawn (containment's hook). */
export type SpawnRewrite = (spec: SpawnSpec) => SpawnSpec;

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
  return [Array.from(args, (a, i) => validateCString(a, `args[${i}]`, caller)), options];
}

/**
 * The options that say how a child is ended, validated in this order (the first bad one is the
 * error): `killSignal` (default `'SIGTERM'`), `grace` (only where `defaultGrace` is given: a
 * group's), `timeout` (milliseconds, 0 for none) and `signal` (an AbortSignal). `opts` are the
 * options already read once (see readOptions). @internal
 */
export function readEnding(
  opts: { killSignal?: unknown; grace?: unknown; timeout?: unknown; signal?: unknown },
  caller: (...a: never[]) => unknown,
  defaultGrace?: number,
): { killSignal: number; grace: number; timeout: number; abort: AbortSignal | undefined } {
  const killSignal = validateSignal(opts.killSignal ?? 'SIGTERM', 'options.killSignal', caller);
  const grace =
    defaultGrace === undefined
      ? 0
      : validateInteger(opts.grace ?? defaultGrace, 'options.grace', 0, INT32_MAX, caller);
  const timeout = validateInteger(opts.timeout ?? 0, 'options.timeout', 0, INT32_MAX, caller);
  const abort = validateAbortSignal(opts.signal, 'options.signal', caller);
  return { killSignal, grace, timeout, abort };
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
    // A template literal, as child_process has it: a Symbol throws instead of becoming text.
    const text = `${value as string}`;
    // The option's name is made only for an error (two strings per variable otherwise).
    if (key.includes('\u0000') || text.includes('\u0000')) {
      validateCString(key, `options.env['${key}']`, caller);
      validateCString(text, `options.env['${key}']`, caller);
    }
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
    const shell =
      opts.shell === true ? '/bin/sh' : validateCString(opts.shell, 'options.shell', caller);
    argList = ['-c', [file, ...args].join(' ')];
    execFile = shell;
  }

  let argv0 = execFile;
  if (opts.argv0 !== undefined) argv0 = validateCString(opts.argv0, 'options.argv0', caller);

  const handedOver: object[] = [];
  const stdio = normalizeStdio(opts.stdio, handedOver, caller);

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
  if (opts.closeFds !== undefined)
    closeFds = validateBoolean(opts.closeFds, 'options.closeFds', caller);

  const uid =
    opts.uid === undefined ? -1 : validateInteger(opts.uid, 'options.uid', 0, UID_MAX, caller);
  const gid =
    opts.gid === undefined ? -1 : validateInteger(opts.gid, 'options.gid', 0, UID_MAX, caller);

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
    handedOver,
  };
}

/** The paths execvp would try, in order. */
function execCandidates(file: string, pathVar: string | undefined): string[] {
  if (file.includes('/')) return [file];
  // glibc's default when PATH is unset; an empty entry is the working directory.
  const dirs = (pathVar ?? '/bin:/usr/bin').split(':');
  return dirs.map((d) => (d === '' ? file : `${d}/${file}`));
}

function normalizeStdio(
  stdio: SpawnOptions['stdio'],
  handedOver: object[],
  caller: (...a: never[]) => unknown,
): number[] {
  let list: unknown[];
  if (stdio === undefined || stdio === null) {
    list = ['pipe', 'pipe', 'pipe'];
  } else if (typeof stdio === 'string') {
    if (stdio !== 'pipe' && stdio !== 'inherit' && stdio !== 'ignore') {
      throw invalidArgValue(
        'options.stdio',
        stdio,
        "must be 'pipe', 'inherit', 'ignore' or an array",
        caller,
      );
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
      throw invalidArgValue(
        `options.stdio[${i}]`,
        e,
        'is not supported: procpin has no IPC channel',
        caller,
      );
    }
    if (typeof e === 'object') {
      const fd = streamFd(e);
      if (fd !== null && directFd(e) === null && !handedOver.includes(e)) handedOver.push(e);
      if (fd !== null) return fd;
      throw invalidArgValue(
        `options.stdio[${i}]`,
        e,
        'must be a Stream that has a descriptor',
        caller,
      );
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
  const direct = directFd(e);
  if (direct !== null) return direct;
  const handle = (e as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  if (typeof fd === 'number' && Number.isInteger(fd) && fd >= 0) return fd;
  return null;
}

function directFd(e: object): number | null {
  const direct = (e as { fd?: unknown }).fd;
  return typeof direct === 'number' && Number.isInteger(direct) && direct >= 0 ? direct : null;
}

interface ReadingHandle {
  reading?: boolean;
  readStop?: () => number;
}

/**
 * After a successful start, as child_process does with a Stream given by its handle (a child's
 * stdout, a net.Socket): this process stops reading it, so that the bytes go to the child and
 * not to both. The handle stops reading and the stream is paused (not flowing, no read pending);
 * reading it again (`resume()`, `read()`) starts the handle again, the parent's choice. A stream given by its `fd` (process.stdout, an fs stream) is left as it is, as
 * child_process leaves it. A failed start leaves every stream untouched. @internal
 */
export function handOverStreams(streams: readonly object[] | undefined): void {
  for (const s of streams ?? []) {
    const stream = s as {
      _handle?: ReadingHandle | null;
      pause?: () => unknown;
      readableFlowing?: boolean | null;
      _readableState?: { reading?: boolean };
    };
    const handle = stream._handle;
    if (handle && typeof handle.readStop === 'function') {
      handle.reading = false;
      handle.readStop();
    }
    if (typeof stream.pause === 'function') stream.pause();
    if (stream._readableState) {
      stream.readableFlowing = false;
      stream._readableState.reading = false;
    }
  }
}
