/**
 * Argument validation, before any syscall, with Node's error codes and messages.
 * @internal
 * @module
 */
import { inspect } from 'node:util';
import { codedError } from './errors';

type Caller = (...args: never[]) => unknown;

function received(value: unknown): string {
  if (value === null || value === undefined) return ` Received ${String(value)}`;
  if (typeof value === 'function') return ` Received function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    const ctor = value.constructor;
    if (ctor?.name) return ` Received an instance of ${ctor.name}`;
    return ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

export function invalidArgType(name: string, expected: string, value: unknown, caller?: Caller) {
  return codedError(
    TypeError,
    'ERR_INVALID_ARG_TYPE',
    `The "${name}" argument must be ${expected}.${received(value)}`,
    caller,
  );
}

export function invalidArgValue(name: string, value: unknown, reason: string, caller?: Caller) {
  let shown = inspect(value);
  if (shown.length > 128) shown = `${shown.slice(0, 128)}...`;
  return codedError(
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    `The argument '${name}' ${reason}. Received ${shown}`,
    caller,
  );
}

export function outOfRange(name: string, range: string, value: unknown, caller?: Caller) {
  return codedError(
    RangeError,
    'ERR_OUT_OF_RANGE',
    `The value of "${name}" is out of range. It must be ${range}. Received ${inspect(value)}`,
    caller,
  );
}

/** An integer in [min, max]. */
export function validateInteger(
  value: unknown,
  name: string,
  min: number,
  max: number,
  caller?: Caller,
): number {
  if (typeof value !== 'number') throw invalidArgType(name, 'of type number', value, caller);
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value, caller);
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value, caller);
  return value;
}

export const INT32_MAX = 0x7fffffff;
export const UINT32_MAX = 0xffffffff;

export function validatePid(value: unknown, name: string, caller?: Caller): number {
  return validateInteger(value, name, 1, INT32_MAX, caller);
}

export function validateFd(value: unknown, name: string, caller?: Caller): number {
  return validateInteger(value, name, 0, INT32_MAX, caller);
}

export function validateBoolean(value: unknown, name: string, caller?: Caller): boolean {
  if (typeof value !== 'boolean') throw invalidArgType(name, 'of type boolean', value, caller);
  return value;
}

export function validateString(value: unknown, name: string, caller?: Caller): string {
  if (typeof value !== 'string') throw invalidArgType(name, 'of type string', value, caller);
  return value;
}

/** A string that can cross into C: no NUL byte. */
export function validateCString(value: unknown, name: string, caller?: Caller): string {
  const s = validateString(value, name, caller);
  if (s.includes('\u0000')) {
    throw invalidArgValue(name, value, 'must be a string without null bytes', caller);
  }
  return s;
}

export function validateObject<T extends object>(value: unknown, name: string, caller?: Caller): T {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgType(name, 'of type object', value, caller);
  }
  return value as T;
}

export function validateAbortSignal(
  value: unknown,
  name: string,
  caller?: Caller,
): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (
    value === null ||
    typeof value !== 'object' ||
    !('aborted' in value) ||
    typeof (value as { addEventListener?: unknown }).addEventListener !== 'function'
  ) {
    throw invalidArgType(name, 'an instance of AbortSignal', value, caller);
  }
  return value as AbortSignal;
}

/**
 * Whether `key` is the object's own or comes from a prototype of its own making (a class
 * instance, `Object.create(defaults)`), as child_process reads it, but never from
 * `Object.prototype`: a key polluted onto every object (`shell`, `env`, `uid`) is no option.
 */
export function hasOption(obj: object, key: string): boolean {
  for (
    let o: object | null = obj;
    o !== null && o !== Object.prototype;
    o = Object.getPrototypeOf(o)
  ) {
    if (Object.prototype.hasOwnProperty.call(o, key)) return true;
  }
  return false;
}

/** The enumerable keys `for...in` gives (as child_process reads `env`), less Object.prototype's. */
export function inheritedKeys(obj: object): string[] {
  if (obj === process.env && onlyOwnKeys(obj)) {
    // Every own key of process.env is a string and enumerable (Node refuses a symbol and a
    // descriptor that is not enumerable): Reflect.ownKeys gives exactly what the loop below
    // gives, in the same order, without the enumerability look (Object.keys, for...in) and the
    // own-property look per key that each cost a trip through process.env's interceptor.
    const keys: string[] = [];
    for (const key of Reflect.ownKeys(obj)) if (typeof key === 'string') keys.push(key);
    return keys;
  }
  const keys: string[] = [];
  for (const key in obj) if (hasOption(obj, key)) keys.push(key);
  return keys;
}

// Whether for...in over `obj` gives only its own keys and Object.prototype's (left out): its
// prototype is Object.prototype, or (process.env's shape: an object of Node's own making between
// the two) a prototype with no enumerable key of its own whose prototype is Object.prototype.
function onlyOwnKeys(obj: object): boolean {
  const proto: object | null = Object.getPrototypeOf(obj);
  if (proto === Object.prototype) return true;
  if (proto === null || Object.getPrototypeOf(proto) !== Object.prototype) return false;
  for (const key in proto) if (Object.prototype.hasOwnProperty.call(proto, key)) return false;
  return true;
}

/**
 * Reads `options` once: every name in `known` is read exactly one time (a getter runs once, so
 * it cannot answer one thing to validation and another to the spawn), into a plain object. An
 * own enumerable name outside `known` whose value is not `undefined` throws
 * `ERR_INVALID_ARG_VALUE` naming it: an option that is silently ignored (a `uid`, a `detached`)
 * is a security or lifetime bug. `unsupported` names are known but refused, with `why`.
 */
export function readOptions<T extends object>(
  options: unknown,
  name: string,
  known: readonly string[],
  caller?: Caller,
  unsupported: Readonly<Record<string, string>> = {},
): Partial<T> {
  // Left out, the options still come back with every known key its own: a plain `{}` would read
  // whatever was polluted onto Object.prototype.
  const obj = options === undefined ? {} : validateObject<object>(options, name, caller);
  const out: Record<string, unknown> = Object.create(null);
  // Every known key is an own property of the result (undefined when left out), so that a copy
  // made by spreading it still never reads a key polluted onto Object.prototype.
  for (const key of known)
    out[key] = hasOption(obj, key) ? (obj as Record<string, unknown>)[key] : undefined;
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const v = (obj as Record<string, unknown>)[key];
    if (v === undefined) continue;
    const why = unsupported[key] ?? 'is not an option procpin knows or implements';
    throw invalidArgValue(`${name}.${key}`, v, why, caller);
  }
  return out as Partial<T>;
}
