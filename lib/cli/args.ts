/**
 * The command line's words: durations, signals and pids as typed, and option parsing with
 * node:util's parseArgs, strict. `run` stops at the first positional (as `env`, `timeout` and
 * `nice` do), so the command's own options are never taken for procpin's.
 * @internal
 * @module
 */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { normalizeSignal, validateSignal } from '../signals';

/** A command-line mistake: reported on stderr with exit status 2. */
export class UsageError extends Error {
  /** The command it concerns (`'run'`), for the "try --help" hint. */
  command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = 'UsageError';
    this.command = command;
  }
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const MAX_MS = 0x7fffffff; // setTimeout's limit (about 24.8 days)

/**
 * Parses a duration: `500ms`, `2s`, `1m`, `1h`, or plain milliseconds (`1500`); a decimal
 * fraction is allowed (`1.5s`) and the result is rounded up to whole milliseconds. Anything else
 * (empty, negative, `2x`, `1e3`, spaces, more than 2^31-1 ms) throws a {@link UsageError}.
 */
export function parseDuration(text: string, what = 'duration'): number {
  const m = /^(\d+)(\.\d+)?(ms|s|m|h)?$/.exec(text);
  if (!m) {
    throw new UsageError(`invalid ${what} '${text}' (expected e.g. 500ms, 2s, 1m or milliseconds)`);
  }
  const ms = Math.ceil(Number(`${m[1]}${m[2] ?? ''}`) * (UNIT_MS[m[3] ?? 'ms'] ?? 1));
  if (!Number.isSafeInteger(ms) || ms > MAX_MS) {
    throw new UsageError(`invalid ${what} '${text}' (at most ${MAX_MS} ms)`);
  }
  return ms;
}

/** `'TERM'`, `'sigterm'`, `'SIGTERM'` or `'15'` as the library's signal value; throws UsageError. */
export function parseSignal(text: string, what = 'signal'): string | number {
  const value = normalizeSignal(text);
  try {
    validateSignal(value, what);
  } catch {
    throw new UsageError(`invalid ${what} '${text}'`);
  }
  return value;
}

/** A pid as typed on the command line: decimal, no sign, no leading zero, at most 2^31-1. */
export function parsePid(text: string): number {
  if (!/^[1-9]\d*$/.test(text) || Number(text) > 0x7fffffff) {
    throw new UsageError(`invalid PID '${text}'`, 'wait');
  }
  return Number(text);
}

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Splits `args` before the first positional or `--` that parseArgs finds, given `options`. */
export function splitAtCommand(
  args: string[],
  options: Options,
): { own: string[]; rest: string[] } {
  const { tokens } = parseArgs({
    args,
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind === 'positional') return { own: args.slice(0, t.index), rest: args.slice(t.index) };
    if (t.kind === 'option-terminator') {
      return { own: args.slice(0, t.index), rest: args.slice(t.index + 1) };
    }
  }
  return { own: args, rest: [] };
}

type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: boolean }>
>;

/** parseArgs, strict: an unknown option or a missing value is a {@link UsageError} of `command`. */
export function strictParse<O extends Options>(
  args: string[],
  options: O,
  command: string,
  positionals: boolean,
): Parsed<O> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals });
  } catch (e) {
    throw new UsageError((e as Error).message, command);
  }
}
