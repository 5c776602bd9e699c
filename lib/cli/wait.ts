/**
 * `procpin wait` (util-linux waitpid(1) is the model: a PID that does not exist is an error unless
 * --exited says it counts as exited; --timeout 0 means none).
 * @internal
 * @module
 */
import * as fs from 'node:fs';
import type { ProcessHandle } from '../index';
import { parseDuration, parsePid, strictParse, UsageError, type Options } from './args';
import { WAIT_HELP } from './help';
import { err, loadLibrary, out, type Library } from './io';
import { EXIT } from './status';

const WAIT_OPTIONS = {
  timeout: { type: 'string', short: 't' },
  exited: { type: 'boolean', short: 'e' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

/** What `wait` needs of a watched process. */
type Watch = Pick<ProcessHandle, 'exited' | 'close'>;

/** A pidfd on `pid`, or on a kernel without pidfd_open (before 5.3) a {@link pollProcess}. */
function watch(lib: Library, pid: number): Watch {
  try {
    return lib.openProcess(pid);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ENOSYS') throw e;
    return pollProcess(pid);
  }
}

const POLL_MS = 50;

/**
 * `/proc/PID/stat`'s state and start time (clock ticks after boot), or null when it is gone.
 *
 * PROC-READER: the command line's only read of `/proc/PID/stat`, kept to this one function so
 * that it becomes a call of the library's `/proc` reader (`lib/proc.ts`) once that exists.
 */
function procStart(pid: number): { state: string; start: string } | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name may hold spaces and parentheses: the fields start after the last ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const state = rest[0];
  const start = rest[19];
  return state === undefined || start === undefined ? null : { state, start };
}

/**
 * Watches `pid` without a pidfd: `/proc/PID/stat` is read every 50 ms. The process is known by its
 * pid *and* its start time, so a pid reused meanwhile reads as the exit it is; a zombie counts as
 * exited. Throws ESRCH when there is no such process now.
 */
function pollProcess(pid: number): Watch {
  const first = procStart(pid);
  if (first === null || first.state === 'Z' || first.state === 'X') {
    throw Object.assign(new Error(`ESRCH: no such process, open '/proc/${pid}/stat'`), {
      code: 'ESRCH',
    });
  }
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<void>((resolve) => {
    const look = () => {
      const now = procStart(pid);
      if (now === null || now.start !== first.start || now.state === 'Z' || now.state === 'X')
        resolve();
      else timer = setTimeout(look, POLL_MS);
    };
    timer = setTimeout(look, POLL_MS);
  });
  return { exited, close: () => clearTimeout(timer) };
}

export async function waitCommand(args: string[]): Promise<number> {
  const { values, positionals } = strictParse(args, WAIT_OPTIONS, 'wait', true);
  if (values.help) {
    out(WAIT_HELP);
    return EXIT.OK;
  }
  if (positionals.length === 0) throw new UsageError('no PIDs specified', 'wait');
  const pids = positionals.map(parsePid);
  const timeoutMs = values.timeout === undefined ? 0 : parseDuration(values.timeout, 'timeout');
  const verbose = values.verbose === true;

  const lib = loadLibrary();
  if (lib === null) return EXIT.PROCPIN_FAILED;
  // Every pidfd is opened before any wait starts: a pid named on the command line is pinned to
  // the process it names now, and a reuse later cannot be mistaken for it.
  const handles: { pid: number; handle: Watch }[] = [];
  try {
    for (const pid of pids) {
      try {
        handles.push({ pid, handle: watch(lib, pid) });
      } catch (e) {
        if (values.exited && (e as { code?: string }).code === 'ESRCH') {
          if (verbose) err(`procpin wait: PID ${pid} has exited, skipping\n`);
          continue;
        }
        err(`procpin wait: could not open PID ${pid}: ${(e as Error).message}\n`);
        return EXIT.FAILURE;
      }
    }
    const all = Promise.all(
      handles.map(({ pid, handle }) =>
        handle.exited.then(() => {
          handle.close();
          if (verbose) err(`procpin wait: PID ${pid} finished\n`);
        }),
      ),
    );
    if (timeoutMs === 0) {
      await all;
      return EXIT.OK;
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([all.then(() => 'done' as const), expired]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      if (verbose) err('procpin wait: timeout expired\n');
      return EXIT.TIMEOUT;
    }
    return EXIT.OK;
  } finally {
    for (const { handle } of handles) handle.close();
  }
}
