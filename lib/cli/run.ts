/**
 * `procpin run`: COMMAND as a process group that nothing it starts outlives, cleaned when it
 * exits, when the timeout fires, or when procpin gets SIGINT, SIGTERM or SIGHUP.
 * @internal
 * @module
 */
import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { ProcessGroup, Signal, SpawnGroupOptions } from '../index';
import { validateSignal } from '../signals';
import {
  parseDuration,
  parseSignal,
  splitAtCommand,
  strictParse,
  UsageError,
  type Options,
} from './args';
import { RUN_HELP } from './help';
import { err, firstLine, library, out, type Library } from './io';
import { EXIT, exitStatusOf, spawnFailureStatus } from './status';

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
const RUN_SPLIT_OPTIONS = {
  ...RUN_OPTIONS,
  contain: { type: 'boolean' },
} as const satisfies Options;

const FORWARDED: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export async function runCommand(args: string[]): Promise<number> {
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
    const m = message as {
      pid?: number;
      phase?: string;
      signal?: string | null;
      reason?: string;
      ms?: number;
    };
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
        status === EXIT.NOT_FOUND
          ? 'not found'
          : status === EXIT.CANNOT_RUN
            ? 'cannot run'
            : 'failed';
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
    return exitStatusOf(result, (name) => validateSignal(name, 'signal'));
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
