/**
 * The `procpin` command: `run`, `sweep` and `wait`. `bin/procpin` calls {@link main}.
 *
 * Exit statuses follow coreutils `timeout` and `env`: the command's own code, 128+N when signal N
 * ended it, 124 when the timeout fired, 125 when procpin itself failed, 126 when the command was
 * found but could not be run, 127 when it was not found, and 2 for a usage error.
 * @module
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

import type {
  GroupResult,
  ProcessGroup,
  ProcessHandle,
  Signal,
  SpawnGroupOptions,
  SweepEntry,
  SweepReport,
} from '../index';

// The library is loaded only when a command runs, so that `--help` and usage errors work (and
// procpin's own failure is reported as 125) even where the addon cannot be loaded.
type Library = typeof import('../index');

function library(): Library {
  return require('../index') as Library;
}

/** The library, or null after saying on stderr why it cannot load (the caller exits 125). */
function loadLibrary(): Library | null {
  try {
    return library();
  } catch (e) {
    err(`procpin: cannot load procpin: ${firstLine(e)}\n`);
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Exit statuses and errors

/** Exit statuses of the `procpin` command. */
export const EXIT = Object.freeze({
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  TIMEOUT: 124,
  PROCPIN_FAILED: 125,
  CANNOT_RUN: 126,
  NOT_FOUND: 127,
});

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

// errno codes with which execve refuses a file that exists (the `env`/`timeout` 126 cases).
const CANNOT_EXEC = new Set([
  'EACCES',
  'ENOEXEC',
  'EPERM',
  'EISDIR',
  'ENOTDIR',
  'ELOOP',
  'ETXTBSY',
  'ENAMETOOLONG',
  'E2BIG',
  'ELIBBAD',
  'EINVAL',
]);

/**
 * The exit status for a command that did not start: 127 when it was not found (`ENOENT` from the
 * exec or the PATH search), 126 when it was found but the kernel would not run it, 125 for any
 * other failure (procpin's own: out of descriptors or processes, SIGCHLD ignored, ...).
 */
export function spawnFailureStatus(err: unknown): number {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const syscall = typeof e?.syscall === 'string' ? e.syscall : '';
  if (!code || code.startsWith('ERR_')) return EXIT.PROCPIN_FAILED;
  const exec = syscall === 'execve' || syscall === 'execvp' || syscall === 'spawn';
  if (!exec) return EXIT.PROCPIN_FAILED;
  if (code === 'ENOENT') return EXIT.NOT_FOUND;
  return CANNOT_EXEC.has(code) ? EXIT.CANNOT_RUN : EXIT.PROCPIN_FAILED;
}

/**
 * The exit status that tells how the leader ended: 124 when the timeout stopped it while it ran,
 * else 128+N when signal N ended it, else its exit code.
 */
export function exitStatusOf(
  result: Pick<GroupResult, 'exitCode' | 'signal' | 'timedOut' | 'stoppedWhileRunning'>,
  signalNumber: (name: string) => number,
): number {
  if (result.timedOut && result.stoppedWhileRunning) return EXIT.TIMEOUT;
  if (result.signal !== null) return 128 + signalNumber(result.signal);
  if (result.exitCode !== null) return result.exitCode;
  return EXIT.PROCPIN_FAILED;
}

// ---------------------------------------------------------------------------------------------
// Durations, signals, pids

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
  let value: string | number;
  if (/^\d+$/.test(text)) value = Number(text);
  else {
    const upper = text.toUpperCase();
    value = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  }
  const { validateSignal } = require('../validate') as typeof import('../validate');
  try {
    validateSignal(value, what);
  } catch {
    throw new UsageError(`invalid ${what} '${text}'`);
  }
  return value;
}

function signalNumber(name: string): number {
  const { validateSignal } = require('../validate') as typeof import('../validate');
  return validateSignal(name, 'signal');
}

/** A pid as typed on the command line: decimal, no sign, no leading zero, at most 2^31-1. */
export function parsePid(text: string): number {
  if (!/^[1-9]\d*$/.test(text) || Number(text) > 0x7fffffff) {
    throw new UsageError(`invalid PID '${text}'`, 'wait');
  }
  return Number(text);
}

// ---------------------------------------------------------------------------------------------
// Output. Direct writes to the descriptors: procpin never touches process.stdout/stderr, whose
// creation on a terminal reopens it (and makes descriptor 1 or 2 close-on-exec) before the child
// inherits it.

function write(fd: number, text: string): void {
  const buf = Buffer.from(text);
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EAGAIN') continue; // a non-blocking pipe we inherited: try again
      if (code === 'EPIPE') return;
      throw err;
    }
  }
}

function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0] ?? '';
}

const out = (text: string) => write(1, text);
const err = (text: string) => write(2, text);

// ---------------------------------------------------------------------------------------------
// Argument parsing: node:util parseArgs, strict. `run` stops at the first positional (as `env`,
// `timeout` and `nice` do), so the command's own options are never taken for procpin's.

type Options = NonNullable<ParseArgsConfig['options']>;

/** Splits `args` before the first positional or `--` that parseArgs finds, given `options`. */
function splitAtCommand(args: string[], options: Options): { own: string[]; rest: string[] } {
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind === 'positional') return { own: args.slice(0, t.index), rest: args.slice(t.index) };
    if (t.kind === 'option-terminator') {
      return { own: args.slice(0, t.index), rest: args.slice(t.index + 1) };
    }
  }
  return { own: args, rest: [] };
}

function strictParse<O extends Options>(args: string[], options: O, command: string, positionals: boolean) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: positionals });
  } catch (e) {
    throw new UsageError((e as Error).message, command);
  }
}

const HELP = `Usage: procpin <command> [options]

Commands:
  run [options] [--] COMMAND [ARG...]   run COMMAND as a process group; nothing it starts
                                        outlives it
  sweep DIR --prefix P [options]        remove entries named P<pid> whose owner is dead
  wait [options] PID...                 wait until the processes exit (any process)
  help [COMMAND]                        show help for a command

Options:
  -h, --help      show this help ('procpin COMMAND --help' for a command's)
  -V, --version   show procpin's version

Exit status: see 'procpin run --help'.
`;

const RUN_HELP = `Usage: procpin run [options] [--] COMMAND [ARG...]

Runs COMMAND in a new process group with procpin's standard input, output and error, and cleans
the whole group (the kill signal, the grace period, then SIGKILL) when COMMAND exits, when the
timeout fires, or when procpin gets SIGINT, SIGTERM or SIGHUP (forwarded to the group first).
On a terminal the group gets the foreground: ^C and ^Z reach it, and the terminal is restored.

Options:
      --grace D          time between the kill signal and SIGKILL (default 5s)
      --timeout D        stop the command after D (0: no timeout)
      --kill-signal SIG  the signal that starts a cleanup (default SIGTERM)
      --no-parent-death  let the command survive procpin's death (default: SIGKILL on it)
      --contain[=MODE]   hold the group where nothing leaves it and the kernel ends it:
                         pidns (a pid namespace: nothing outlives procpin, even SIGKILLed),
                         cgroup (a cgroup v2: 'procpin sweep --cgroups' ends a dead procpin's),
                         auto (the default MODE: the strongest available)
  -v, --verbose          print the cleanup phases (and the containment used) on stderr
  -h, --help             show this help

Durations: 500ms, 2s, 1m, 1h, or plain milliseconds.

Exit status:
  N        COMMAND exited with status N
  128+N    signal N ended COMMAND (137: it was killed after the grace period)
  124      the timeout fired
  125      procpin itself failed
  126      COMMAND was found but could not be run
  127      COMMAND was not found
  2        usage error
`;

const SWEEP_HELP = `Usage: procpin sweep DIR --prefix P [--dry-run] [--json]
       procpin sweep --cgroups [--dry-run] [--json]

Removes the entries of DIR named P<pid> (then the end of the name, '-' or '.') that a dead owner
left behind: only when the pid names no live process, nobody holds a lock on the entry, a socket
does not listen, and the entry is this user's. Prints what was removed and what was kept, and why.

Options:
  -p, --prefix P   the name prefix (required)
      --cgroups    instead: kill and remove the cgroups of 'procpin run --contain=cgroup'
                   (and spawnGroup's contain: 'cgroup') whose procpin is dead; one of
                   another pid namespace that cannot be proven dead is kept ('namespace')
  -n, --dry-run    decide, but remove nothing
      --json       print the report as JSON: { "removed": [...], "kept": [...] }
  -h, --help       show this help

Exit status: 0, 1 when DIR cannot be read, 2 usage error.
`;

const WAIT_HELP = `Usage: procpin wait [options] PID...

Waits until every PID has exited. Any process, not only procpin's children: each is watched
through a pidfd, so a pid reused meanwhile is not mistaken for the one named. A zombie counts as
exited.

Options:
  -t, --timeout D   give up after D (0: no timeout)
  -e, --exited      a PID that does not exist counts as exited (default: an error)
  -v, --verbose     say on stderr when each PID exits
  -h, --help        show this help

Exit status: 0 all exited, 124 timeout, 1 a PID could not be watched (no such process without
--exited), 2 usage error.
`;

const HELPS: Record<string, string> = { run: RUN_HELP, sweep: SWEEP_HELP, wait: WAIT_HELP };

// ---------------------------------------------------------------------------------------------
// procpin run

const RUN_OPTIONS = {
  grace: { type: 'string' },
  timeout: { type: 'string' },
  'kill-signal': { type: 'string' },
  'no-parent-death': { type: 'boolean' },
  contain: { type: 'string' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;
// --contain takes its value only after '=': for finding the command, it is a flag.
const RUN_SPLIT_OPTIONS = { ...RUN_OPTIONS, contain: { type: 'boolean' } } as const satisfies Options;

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

async function runCommand(args: string[]): Promise<number> {
  const { own, rest: command } = splitAtCommand(args, RUN_SPLIT_OPTIONS);
  const { values } = strictParse(
    own.map((a) => (a === '--contain' ? '--contain=auto' : a)),
    RUN_OPTIONS,
    'run',
    false,
  );
  if (values.help) {
    out(RUN_HELP);
    return EXIT.OK;
  }
  const file = command[0];
  if (file === undefined) throw new UsageError('missing COMMAND', 'run');
  const grace = values.grace === undefined ? undefined : parseDuration(values.grace, 'grace');
  const timeoutMs = values.timeout === undefined ? 0 : parseDuration(values.timeout, 'timeout');
  const contain = values.contain;
  if (contain !== undefined && contain !== 'auto' && contain !== 'pidns' && contain !== 'cgroup') {
    throw new UsageError(`--contain must be auto, pidns or cgroup, not '${contain}'`, 'run');
  }
  const verbose = values.verbose === true;
  const log = verbose ? (line: string) => err(`procpin: ${line}\n`) : () => {};

  let lib: Library;
  let killSignal: string | number | undefined;
  let TerminalJob: typeof import('../group/jobcontrol').TerminalJob;
  try {
    lib = library();
    ({ TerminalJob } = require('../group/jobcontrol') as typeof import('../group/jobcontrol'));
  } catch (e) {
    err(`procpin: cannot load procpin: ${firstLine(e)}\n`);
    return EXIT.PROCPIN_FAILED;
  }
  if (values['kill-signal'] !== undefined) {
    killSignal = parseSignal(values['kill-signal'], 'kill signal');
  }

  const onPhase = (message: unknown) => {
    const m = message as { pid?: number; phase?: string; signal?: unknown; reason?: unknown; ms?: number };
    const sig = m.signal === undefined || m.signal === null ? '' : ` ${String(m.signal)}`;
    const reason = m.reason === undefined ? '' : ` (${String(m.reason)})`;
    const ms = typeof m.ms === 'number' ? ` at ${Math.round(m.ms)} ms` : '';
    log(`group ${m.pid}: ${m.phase}${sig}${reason}${ms}`);
  };
  if (verbose) diagnosticsChannel.subscribe('procpin:group', onPhase);

  // The handlers are installed, and the group is spawned, in one synchronous stretch: a handler
  // runs from the event loop, so it always finds the group (or the spawn's failure).
  let group: ProcessGroup | undefined;
  const forward = (sig: NodeJS.Signals) => {
    if (!group) return;
    log(`received ${sig}: forwarding it to group ${group.pgid}, then cleaning the group`);
    try {
      group.signal(sig);
    } catch (e) {
      log(`cannot signal group ${group.pgid}: ${(e as Error).message}`);
    }
    // The cleanup follows at once: killSignal and SIGCONT (so that a stopped member acts on
    // both), the grace, SIGKILL. A leader that ends on the forwarded signal decides the status.
    void group.stop();
  };
  const handlers = FORWARDED.map((sig) => {
    const h = () => forward(sig);
    process.on(sig, h);
    return [sig, h] as const;
  });
  const job = TerminalJob.attach(0, log);
  // A bug in procpin must not leave the group behind: clean it, then fail with 125.
  const onCrash = (e: unknown) => {
    err(`procpin: ${(e as Error)?.stack ?? String(e)}\n`);
    const done = () => {
      try {
        job?.end();
      } finally {
        process.exit(EXIT.PROCPIN_FAILED);
      }
    };
    if (group) group.stop().then(done, done);
    else done();
  };
  process.on('uncaughtException', onCrash);

  try {
    try {
      const options: SpawnGroupOptions = {
        stdio: 'inherit',
        parentDeathSignal: values['no-parent-death'] ? null : 'SIGKILL',
      };
      if (killSignal !== undefined) options.killSignal = killSignal as Signal;
      if (grace !== undefined) options.grace = grace;
      if (timeoutMs > 0) options.timeout = timeoutMs;
      if (contain !== undefined) options.contain = contain;
      group = lib.spawnGroup(file, command.slice(1), options);
    } catch (e) {
      const status = spawnFailureStatus(e);
      const what =
        status === EXIT.NOT_FOUND ? 'not found' : status === EXIT.CANNOT_RUN ? 'cannot run' : 'failed';
      err(`procpin: ${file}: ${what}: ${(e as Error).message}\n`);
      return status;
    }
    log(`group ${group.pgid} started: ${command.join(' ')}`);
    if (contain !== undefined) {
      log(`containment: ${group.containment}`);
      for (const why of group.containmentFallback) log(`not ${why}`);
    }
    const g = group;
    job?.start(g);
    void g.exited.then(
      () => job?.leaderExited(),
      () => {},
    );
    const result = await g.closed;
    job?.end();
    if (result.timedOut && result.stoppedWhileRunning) log(`timed out after ${timeoutMs} ms`);
    return exitStatusOf(result, signalNumber);
  } catch (e) {
    // procpin's own failure: the group still does not outlive it.
    err(`procpin: ${(e as Error).stack ?? String(e)}\n`);
    job?.end();
    if (group) await group.stop().catch(() => {});
    return EXIT.PROCPIN_FAILED;
  } finally {
    for (const [sig, h] of handlers) process.off(sig, h);
    process.off('uncaughtException', onCrash);
    if (verbose) diagnosticsChannel.unsubscribe('procpin:group', onPhase);
  }
}

// ---------------------------------------------------------------------------------------------
// procpin sweep

const SWEEP_OPTIONS = {
  prefix: { type: 'string', short: 'p' },
  cgroups: { type: 'boolean' },
  'dry-run': { type: 'boolean', short: 'n' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

function errorJson(e: Error): Record<string, unknown> {
  const o: Record<string, unknown> = { message: e.message };
  for (const k of ['code', 'errno', 'syscall', 'path'] as const) {
    const v = (e as unknown as Record<string, unknown>)[k];
    if (v !== undefined) o[k] = v;
  }
  return o;
}

async function sweepCommand(args: string[]): Promise<number> {
  const { values, positionals } = strictParse(args, SWEEP_OPTIONS, 'sweep', true);
  if (values.help) {
    out(SWEEP_HELP);
    return EXIT.OK;
  }
  if (values.cgroups) return sweepCgroupsCommand(positionals, values);
  const dir = positionals[0];
  if (dir === undefined) throw new UsageError('missing DIR', 'sweep');
  if (positionals.length > 1) throw new UsageError(`unexpected argument '${positionals[1]}'`, 'sweep');
  if (values.prefix === undefined) throw new UsageError('missing --prefix', 'sweep');
  const dryRun = values['dry-run'] === true;

  const lib = loadLibrary();
  if (lib === null) return EXIT.PROCPIN_FAILED;
  let report: SweepReport;
  try {
    report = await lib.sweep(dir, { prefix: values.prefix, dryRun });
  } catch (e) {
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('ERR_INVALID_ARG') || code === 'ERR_OUT_OF_RANGE') {
      throw new UsageError((e as Error).message, 'sweep');
    }
    throw e;
  }

  if (values.json) {
    // Errors become plain objects: JSON.stringify would drop an Error's message.
    // A name that is not UTF-8 goes out as its bytes escaped (`\\xff`): JSON holds only text.
    const entry = (e: SweepEntry) => ({
      ...e,
      name: shownName(e.name),
      ...(e.error ? { error: errorJson(e.error) } : {}),
    });
    const json: Record<string, unknown> = {
      removed: report.removed.map(entry),
      kept: report.kept.map(entry),
    };
    if (report.error) json['error'] = errorJson(report.error);
    out(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    const removed = dryRun ? 'would remove' : 'removed';
    const width = Math.max(removed.length, 'kept'.length);
    for (const e of report.removed) out(`${removed.padEnd(width)}  ${path.join(dir, shownName(e.name))}  (pid ${e.pid} is dead)\n`);
    for (const e of report.kept) {
      const why = e.error ? `${e.reason ?? 'error'}: ${e.error.message}` : (e.reason ?? 'kept');
      out(`${'kept'.padEnd(width)}  ${path.join(dir, shownName(e.name))}  (pid ${e.pid}: ${why})\n`);
    }
  }
  if (report.error) {
    err(`procpin sweep: ${dir}: ${report.error.message}\n`);
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}

async function sweepCgroupsCommand(
  positionals: string[],
  values: { prefix?: string; 'dry-run'?: boolean; json?: boolean },
): Promise<number> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`, 'sweep');
  if (values.prefix !== undefined) throw new UsageError('--prefix does not go with --cgroups', 'sweep');
  const dryRun = values['dry-run'] === true;
  const lib = loadLibrary();
  if (lib === null) return EXIT.PROCPIN_FAILED;
  const report = await lib.sweepCgroups({ dryRun });
  if (values.json) {
    const json: Record<string, unknown> = { removed: report.removed, kept: report.kept };
    if (report.error) json['error'] = errorJson(report.error);
    out(`${JSON.stringify(json, null, 2)}\n`);
  } else {
    const removed = dryRun ? 'would remove' : 'removed';
    const width = Math.max(removed.length, 'kept'.length);
    for (const e of report.removed) out(`${removed.padEnd(width)}  cgroup ${e.name}  (procpin ${e.pid} is dead)\n`);
    for (const e of report.kept) {
      const why = e.reason === 'namespace' ? 'in another pid namespace, not provably dead' : (e.reason ?? 'kept');
      out(`${'kept'.padEnd(width)}  cgroup ${e.name}  (procpin ${e.pid}: ${why})\n`);
    }
  }
  if (report.error) {
    err(`procpin sweep --cgroups: ${report.error.message}\n`);
    return EXIT.FAILURE;
  }
  return EXIT.OK;
}

// ---------------------------------------------------------------------------------------------
// procpin wait (util-linux waitpid(1) is the model: a PID that does not exist is an error unless
// --exited says it counts as exited; --timeout 0 means none)

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

/** `/proc/PID/stat`'s state and start time (clock ticks after boot), or null when it is gone. */
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
    throw Object.assign(new Error(`ESRCH: no such process, open '/proc/${pid}/stat'`), { code: 'ESRCH' });
  }
  let timer: NodeJS.Timeout | undefined;
  const exited = new Promise<void>((resolve) => {
    const look = () => {
      const now = procStart(pid);
      if (now === null || now.start !== first.start || now.state === 'Z' || now.state === 'X') resolve();
      else timer = setTimeout(look, POLL_MS);
    };
    timer = setTimeout(look, POLL_MS);
  });
  return { exited, close: () => clearTimeout(timer) };
}

async function waitCommand(args: string[]): Promise<number> {
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

// ---------------------------------------------------------------------------------------------
// Entry

const TOP_OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const satisfies Options;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  run: runCommand,
  sweep: sweepCommand,
  wait: waitCommand,
};

async function dispatch(argv: string[]): Promise<number> {
  const { own, rest } = splitAtCommand(argv, TOP_OPTIONS);
  const { values } = strictParse(own, TOP_OPTIONS, '', false);
  if (values.help) {
    out(HELP);
    return EXIT.OK;
  }
  if (values.version) {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    out(`procpin ${String(pkg.version)}\n`);
    return EXIT.OK;
  }
  const [name, ...args] = rest;
  if (name === undefined) throw new UsageError('missing command');
  if (name === 'help') {
    const topic = args[0];
    if (topic === undefined) out(HELP);
    else if (HELPS[topic]) out(HELPS[topic]);
    else throw new UsageError(`unknown command '${topic}'`);
    return EXIT.OK;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command '${name}'`);
  try {
    return await command(args);
  } catch (e) {
    if (e instanceof UsageError && e.command === undefined) e.command = name;
    throw e;
  }
}

/**
 * Runs the `procpin` command with `argv` (the arguments after the program name) and resolves
 * with the exit status. Usage errors are reported on stderr and give 2.
 */
export async function main(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      const cmd = e.command ? ` ${e.command}` : '';
      err(`procpin${cmd}: ${e.message}\nTry 'procpin${cmd} --help'.\n`);
      return EXIT.USAGE;
    }
    err(`procpin: ${(e as Error)?.stack ?? String(e)}\n`);
    return EXIT.PROCPIN_FAILED;
  }
}

/** A sweep entry's name for a terminal or JSON: a Buffer (not UTF-8) with every byte above 0x7f as `\\xNN`. */
function shownName(name: string | Buffer): string {
  if (typeof name === 'string') return name;
  let s = '';
  for (const b of name) s += b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return s;
}
