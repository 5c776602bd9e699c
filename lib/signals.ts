/**
 * Signal names and numbers, in one place: the table every layer reads (the library's
 * validation, a wait's `signal` name, the group cleanup's phases, the command line's `TERM`).
 *
 * Names are `os.constants.signals`' for the classic signals; the real-time ones are
 * `SIGRTMIN+n` / `SIGRTMAX-n`, each by the nearer end (glibc's SIGRTMIN is 34: the two below it are
 * reserved by NPTL). The kernel takes those two, 32 and 33, as it takes any other (Node's
 * `process.kill` does too): they are named `SIG32` and `SIG33`.
 * @internal
 * @module
 */
import * as os from 'node:os';
import { codedError } from './errors';
import { invalidArgType } from './validate';

/** A signal by name (`'SIGTERM'`) or number. */
export type Signal = NodeJS.Signals | `SIGRTMIN+${number}` | `SIGRTMAX-${number}` | number;

type Caller = (...args: never[]) => unknown;

/** The classic signals' numbers, by name (`os.constants.signals`). */
export const SIGNALS: Readonly<Record<NodeJS.Signals, number>> = os.constants.signals;

const SIGRTMIN = 34;
const SIGRTMAX = 64;
const nameToNumber = new Map<string, number>();
const numberToName = new Map<number, string>();
for (const [name, num] of Object.entries(SIGNALS)) {
  nameToNumber.set(name, num);
  if (!numberToName.has(num)) numberToName.set(num, name); // SIGABRT before SIGIOT, SIGIO before SIGPOLL
}
for (let n = SIGRTMIN; n <= SIGRTMAX; n++) {
  const name =
    n - SIGRTMIN <= SIGRTMAX - n ? `SIGRTMIN+${n - SIGRTMIN}` : `SIGRTMAX-${SIGRTMAX - n}`;
  nameToNumber.set(name, n);
  numberToName.set(n, name);
}
for (const n of [32, 33]) {
  nameToNumber.set(`SIG${n}`, n);
  numberToName.set(n, `SIG${n}`);
}
nameToNumber.set('SIGRTMIN', SIGRTMIN);
nameToNumber.set('SIGRTMAX', SIGRTMAX);
numberToName.set(SIGRTMIN, 'SIGRTMIN');
numberToName.set(SIGRTMAX, 'SIGRTMAX');

/** The signal's name (`'SIGKILL'`), or null for 0 and unknown numbers. */
export function signalName(num: number): string | null {
  return numberToName.get(num) ?? null;
}

/** The number of a signal given by name or number, or null when there is no such signal (0 too). */
export function signalNumber(value: string | number): number | null {
  if (typeof value === 'string') return nameToNumber.get(value) ?? null;
  return Number.isInteger(value) && numberToName.has(value) ? value : null;
}

/**
 * A signal as people type it (`'TERM'`, `'sigterm'`, `'SIGTERM'`, `'15'`) as the value the
 * library takes: a name with the `SIG` prefix, or a number. Not validated: see {@link validateSignal}.
 */
export function normalizeSignal(text: string): string | number {
  if (/^\d+$/.test(text)) return Number(text);
  const upper = text.toUpperCase();
  return upper.startsWith('SIG') ? upper : `SIG${upper}`;
}

/** A signal given by name or number, as a number. 0 only where `allowZero`. */
export function validateSignal(
  value: unknown,
  name: string,
  caller?: Caller,
  allowZero = false,
): number {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw invalidArgType(name, 'of type string or number', value, caller);
  }
  if (allowZero && value === 0) return 0;
  const n = signalNumber(value);
  if (n === null) {
    throw codedError(TypeError, 'ERR_UNKNOWN_SIGNAL', `Unknown signal: ${String(value)}`, caller);
  }
  return n;
}

/**
 * A signal as child_process's `kill()` and `killSignal` take it (its `convertToValidSignal`): a
 * name in any case (`'sigterm'`), or a number; anything else, a wrong type included, is
 * `ERR_UNKNOWN_SIGNAL`. 0 only where `allowZero`.
 */
export function validateChildProcessSignal(
  value: unknown,
  name: string,
  caller?: Caller,
  allowZero = false,
): number {
  if (typeof value === 'string' && signalNumber(value.toUpperCase()) !== null) {
    return validateSignal(value.toUpperCase(), name, caller, allowZero);
  }
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw codedError(TypeError, 'ERR_UNKNOWN_SIGNAL', `Unknown signal: ${String(value)}`, caller);
  }
  return validateSignal(value, name, caller, allowZero);
}
