/**
 * How `procpin/child_process`'s `spawn` reads its arguments: as `child_process.spawn` reads them
 * (Node 20), in its order, with its error codes, into what `spawnGroup` takes. procpin's own
 * `spawn` and `spawnGroup` stay strict (SPEC Layer 2); this reading is the drop-in's alone. The
 * differences docs/child_process.md lists are kept on purpose.
 * @module
 */
import { inspect } from 'node:util';
import { fileURLToPath } from 'node:url';
import { codedError, errnoException } from '../errors';
import {
  hasOption,
  invalidArgType,
  invalidArgValue,
  outOfRange,
  readOptions,
  validateAbortSignal,
  validateBoolean,
  validateCString,
  validateObject,
} from '../validate';
import { validateChildProcessSignal } from '../signals';
import type { SpawnOptions, StdioEntry } from './process';

type Caller = (...a: never[]) => unknown;

/** A spawn call as child_process reads it. @internal */
export interface NodeSpawnCall {
  /** What is executed: the command, or the shell. */
  file: string;
  /** Its arguments as the child gets them (text). */
  args: string[];
  /** As child_process has them: argv0 (or file) and the arguments as given, not made text. */
  spawnargs: unknown[];
  /** The options read once, null ones left out; `cwd`, `env`, `uid`, `gid`, `stdio` as read. */
  options: Partial<SpawnOptions>;
  stdio: StdioEntry[];
}

const NUL = 'must be a string without null bytes';

// child_process's options that are left out when null (`signal: null` it refuses; procpin's own
// options keep their meaning of null, as `parentDeathSignal: null`, no signal).
const AS_IF_ABSENT = [
  'cwd',
  'env',
  'argv0',
  'stdio',
  'uid',
  'gid',
  'shell',
  'detached',
  'timeout',
  'killSignal',
  'windowsHide',
  'windowsVerbatimArguments',
] as const;

/**
 * Reads `spawn(command, args?, options?)` as child_process does: an object in the place of
 * `args` is the options (the third argument is then ignored), the options are their own
 * enumerable keys read once (a spread, as child_process makes), `null` is a left-out option,
 * and what child_process turns into text (arguments, env values) is turned into text as it does.
 * Names outside `known` throw, as procpin's spawn has it. @internal
 */
export function readNodeSpawnCall(
  command: unknown,
  argsOrOptions: unknown,
  maybeOptions: unknown,
  known: readonly string[],
  unsupported: Readonly<Record<string, string>>,
  caller: Caller,
): NodeSpawnCall {
  validateCString(command, 'file', caller);
  const file0 = command as string;
  if (file0.length === 0) throw invalidArgValue('file', file0, 'cannot be empty', caller);
  let raw: unknown[] = [];
  let given = maybeOptions;
  if (Array.isArray(argsOrOptions)) {
    // Array.prototype's slice, as child_process calls it (not one the array answers for `slice`):
    // holes stay holes, as in child_process's spawnargs.
    raw = Array.prototype.slice.call(argsOrOptions) as unknown[];
  } else if (argsOrOptions !== undefined && argsOrOptions !== null) {
    if (typeof argsOrOptions !== 'object') {
      throw invalidArgType('args', 'of type object', argsOrOptions, caller);
    }
    given = argsOrOptions;
  }
  for (let i = 0; i < raw.length; i++) {
    const a = raw[i];
    if (typeof a === 'string' && a.includes('\u0000')) {
      throw invalidArgValue(`args[${i}]`, a, NUL, caller);
    }
  }
  const own = given === undefined ? {} : ownOptions(validateObject(given, 'options', caller));
  const opts = readOptions<SpawnOptions>(own, 'options', known, caller, unsupported);
  for (const key of AS_IF_ABSENT) if (opts[key] === null) opts[key] = undefined;

  if (opts.cwd !== undefined) opts.cwd = readCwd(opts.cwd, caller);
  if (opts.detached !== undefined) validateBoolean(opts.detached, 'options.detached', caller);
  let einval = false;
  for (const id of ['uid', 'gid'] as const) {
    const v: unknown = opts[id];
    if (v === undefined) continue;
    // child_process's int32 test, as it makes it: a Symbol or a BigInt throws the TypeError
    // that `|` throws for it.
    if (v !== ((v as number) | 0)) {
      throw invalidArgType(`options.${id}`, 'int32', v, caller);
    }
    // libuv hands the id to setuid/setgid: -1 is EINVAL there, another negative one the id it
    // wraps to as a uid_t.
    if (v === -1) einval = true;
    else opts[id] = v >>> 0;
  }
  const shell: unknown = opts.shell;
  if (shell !== undefined && typeof shell !== 'boolean' && typeof shell !== 'string') {
    throw invalidArgType('options.shell', 'one of type boolean or string', shell, caller);
  }
  if (opts.argv0 !== undefined) validateCString(opts.argv0, 'options.argv0', caller);
  for (const name of ['windowsHide', 'windowsVerbatimArguments'] as const) {
    if (opts[name] !== undefined) validateBoolean(opts[name], `options.${name}`, caller);
  }

  let file = file0;
  let shellCommand: string | null = null;
  if (shell) {
    if (typeof shell === 'string' && shell.includes('\u0000')) {
      throw invalidArgValue('options.shell', shell, NUL, caller);
    }
    // Joined as child_process joins it: null, undefined and holes are empty.
    shellCommand = [file0, ...raw].join(' ');
    file = typeof shell === 'string' ? shell : '/bin/sh';
  }
  opts.shell = undefined;
  const spawnargs = shellCommand === null ? raw.slice() : ['-c', shellCommand];
  spawnargs.unshift(typeof opts.argv0 === 'string' ? opts.argv0 : file);

  opts.env = readEnv(opts.env, caller);

  const timeout: unknown = opts.timeout;
  if (timeout !== undefined && !(Number.isInteger(timeout) && (timeout as number) >= 0)) {
    throw outOfRange('timeout', 'an unsigned integer', timeout, caller);
  }
  validateAbortSignal(opts.signal, 'options.signal', caller);
  // A signal name in any case ('sigkill'), as child_process's kill() takes it.
  const kill: unknown = opts.killSignal;
  if (typeof kill === 'string' || typeof kill === 'number') {
    opts.killSignal = validateChildProcessSignal(kill, 'options.killSignal', caller);
  } else if (kill !== undefined) {
    throw invalidArgType('options.killSignal', 'of type string or number', kill, caller);
  }

  const stdio = readStdio(opts.stdio, caller);
  if (stdio.includes(EINVAL)) einval = true;
  opts.stdio = undefined;

  // Made text where child_process's binding makes it: a Symbol throws, a NUL ends the C string.
  const args =
    shellCommand === null
      ? Array.from(raw, (a) => (typeof a === 'string' ? a : cString(`${a as string}`)))
      : ['-c', cString(shellCommand)];
  if (einval) {
    const err = errnoException(-22, 'spawn', {}, caller);
    err.message = 'spawn EINVAL';
    throw err;
  }
  return {
    file,
    args,
    spawnargs,
    options: opts,
    stdio: stdio.map((e) => (e === EINVAL ? 'ignore' : e)),
  };
}

// child_process's spread: own enumerable keys, each read once. The elements of an array-like (a
// TypedArray, a String object, an arguments object) are keys there too, and no option names:
// they are left out, as child_process ignores them.
function ownOptions(given: object): object {
  const own: Record<string, unknown> = { __proto__: null, ...given };
  const indexKeys = Object.keys(own).filter((key) => /^(?:0|[1-9]\d*)$/.test(key));
  // Looked at only when there are elements: the looks (a Proxy's traps) child_process does not make.
  if (indexKeys.length > 0 && isArrayLike(given)) for (const key of indexKeys) delete own[key];
  return own;
}

function isArrayLike(given: object): boolean {
  return (
    ArrayBuffer.isView(given) ||
    given instanceof String ||
    Object.prototype.toString.call(given) === '[object Arguments]'
  );
}

const CWD_TYPES = 'of type string or an instance of Buffer or URL';

// A string, a Buffer or Uint8Array (its bytes, UTF-8), or a file: URL (or an object that looks
// like one to child_process); '' is no chdir.
function readCwd(cwd: unknown, caller: Caller): string | undefined {
  let path = cwd;
  if (isUrlLike(cwd)) path = fileURLToPath(cwd as URL);
  if (typeof path === 'string') {
    if (path.includes('\u0000')) throw invalidArgValue('options.cwd', cwd, CWD_NUL, caller);
    return path === '' ? undefined : path;
  }
  if (path instanceof Uint8Array) {
    if (path.includes(0)) throw invalidArgValue('options.cwd', cwd, CWD_NUL, caller);
    const text = Buffer.from(path.buffer, path.byteOffset, path.byteLength).toString();
    return text === '' ? undefined : text;
  }
  throw invalidArgType('options.cwd', CWD_TYPES, cwd, caller);
}

const CWD_NUL = 'must be a string, Uint8Array, or URL without null bytes';

function isUrlLike(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return false;
  const u = v as { href?: unknown; protocol?: unknown; auth?: unknown; path?: unknown };
  return Boolean(u.href && u.protocol && u.auth === undefined && u.path === undefined);
}

// child_process's `env || process.env`, read by for...in (Object.prototype's keys left out, a
// documented difference): a string gives its characters, a number, boolean or Symbol nothing.
// Each value is read once and made text here; procpin's reading then sees only strings.
function readEnv(env: unknown, caller: Caller): SpawnOptions['env'] {
  if (!env || env === process.env) return undefined;
  const source = Object(env) as Record<string, unknown>;
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  // As child_process (and before it reads the env): this process's NODE_V8_COVERAGE reaches a
  // child whose env has none of its own, so that coverage tools see the children too.
  let coverage = process.env.NODE_V8_COVERAGE;
  if (coverage && Object.prototype.hasOwnProperty.call(source, 'NODE_V8_COVERAGE')) {
    coverage = undefined;
  }
  // The keys first, then the values, as child_process reads them. A key polluted onto
  // Object.prototype is left out (a documented difference); any other is read exactly as
  // child_process's for...in reads it, with no look of ours in between.
  const keys: string[] = [];
  for (const key in source) {
    const polluted = Object.prototype.propertyIsEnumerable.call(Object.prototype, key);
    if (!polluted || hasOption(source, key)) keys.push(key);
  }
  for (const key of keys) {
    const value = source[key];
    if (value === undefined) continue;
    if (key.includes('\u0000')) throw invalidArgValue(`options.env['${key}']`, key, NUL, caller);
    if (typeof value === 'string' && value.includes('\u0000')) {
      throw invalidArgValue(`options.env['${key}']`, value, NUL, caller);
    }
    out[key] = cString(`${value as string}`);
  }
  if (coverage) out.NODE_V8_COVERAGE = coverage;
  return out;
}

/** A stdio entry that libuv refuses with EINVAL (a descriptor of -1). */
const EINVAL = Symbol('EINVAL');

// child_process's reading of stdio: a falsy one is 'pipe'; a string is one of the shorthands; an
// array pads to 3 and maps each entry. A hole is undefined here (a documented difference).
function readStdio(stdio: unknown, caller: Caller): Array<StdioEntry | typeof EINVAL> {
  const s = stdio || 'pipe';
  let list: unknown[];
  if (typeof s === 'string') {
    if (s === 'inherit') return [0, 1, 2];
    if (s !== 'pipe' && s !== 'ignore' && s !== 'overlapped') {
      throw invalidArgValue('stdio', s, 'is invalid', caller);
    }
    list = [s, s, s];
  } else if (Array.isArray(s)) {
    list = [...(s as unknown[])];
  } else {
    throw invalidArgValue('stdio', s, 'is invalid', caller);
  }
  while (list.length < 3) list.push(undefined);
  return list.map((e, i) => {
    if (e === null || e === undefined) return i < 3 ? 'pipe' : 'ignore';
    if (e === 'ignore' || e === 'inherit' || e === 'ipc') return e as StdioEntry;
    if (e === 'pipe' || e === 'overlapped' || (typeof e === 'number' && e < 0)) return 'pipe';
    if (typeof e === 'number') return descriptor(e);
    const fd = (e as { fd?: unknown }).fd;
    if (typeof fd === 'number') return descriptor(fd);
    if (typeof e === 'string' || ArrayBuffer.isView(e)) {
      throw codedError(
        TypeError,
        'ERR_INVALID_SYNC_FORK_INPUT',
        `Asynchronous forks do not support Buffer, TypedArray, DataView or string input: ${inspect(e)}`,
        caller,
      );
    }
    if (typeof e !== 'object') throw invalidArgValue('stdio', e, 'is invalid', caller);
    return e as StdioEntry; // a Stream: procpin takes its descriptor, or refuses it
  });
}

// The descriptor libuv gets: the number as an int32; -1 is EINVAL, another negative one is
// /dev/null at 0-2 and closed above, as 'ignore' is.
function descriptor(n: number): number | 'ignore' | typeof EINVAL {
  const fd = n | 0;
  if (fd === -1) return EINVAL;
  return fd < 0 ? 'ignore' : fd;
}

// A C string ends at its first NUL: what the child gets of a text that holds one.
function cString(text: string): string {
  const nul = text.indexOf('\u0000');
  return nul === -1 ? text : text.slice(0, nul);
}
