/**
 * SPEC Layer 3a: zombie-reserved process-group cleanup. A command starts as the leader of a new
 * process group; when the leader exits (or on stop, timeout, abort) every member of the group is
 * terminated, with a grace period, then killed, while the leader is still an unreaped zombie, so
 * the pgid cannot have been handed to anyone else. Only then is the leader reaped.
 * @module
 */
import * as diagnostics from 'node:diagnostics_channel';
import * as os from 'node:os';
import { isMainThread } from 'node:worker_threads';
import { binding } from '../binding';
import * as fs from 'node:fs';
import {
  Child,
  prepareSpawn,
  SPAWN_OPTIONS,
  spawnArguments,
  startChild,
  type SpawnOptions,
} from '../child/child';
import { endContainments, spawnContained, validateContain, type ContainMode, type Containment, type Holder } from '../contain/contain';
import { TerminalJob } from './jobcontrol';
import { codedError } from '../errors';
import {
  GroupCleanup,
  type GroupOps,
  type GroupPhase,
  type GroupResult,
  type GroupState,
  type SendResult,
} from './logic';
import type { Signal } from '../primitives';
import {
  INT32_MAX,
  invalidArgValue,
  readOptions,
  signalName,
  validateAbortSignal,
  validateBoolean,
  validateInteger,
  validateObject,
  validateSignal,
} from '../validate';
import type { WaitInfo } from '../child/waitinfo';

export type { GroupPhase, GroupResult, GroupState } from './logic';

const { ESRCH, EPERM } = os.constants.errno;
const kInternal = Symbol('procpin.group.internal');

// PIDFD_SIGNAL_PROCESS_GROUP (Linux 6.9) binds a group signal to the group the leader's pidfd
// names, never to a number. PROCPIN_NO_PIDFD_GROUP=1 (read once, at load) forces the kill(-pgid)
// path that older kernels take, so that it can be tested on a new one.
const pidfdGroupSignal =
  process.env['PROCPIN_NO_PIDFD_GROUP'] !== '1' && binding.hasPidfdGroupSignal();

/**
 * The `node:diagnostics_channel` name a group's cleanup phases are published on, as
 * {@link GroupPhase} messages (`{ pid, phase, signal?, reason?, ms }`).
 */
export const GROUP_CHANNEL = 'procpin:group';

const stopHooks = new WeakMap<ProcessGroup, GroupCleanup>();
/**
 * @internal For procpin/child_process: `fn` runs when the group's stop (timeout, abort,
 * `stop()`) reaches the leader while it still runs, before the first signal (its `killed`).
 */
export function onStopReached(group: ProcessGroup, fn: () => void): void {
  const cleanup = stopHooks.get(group);
  if (cleanup) cleanup.onStopReached = fn;
}
const channel = diagnostics.channel(GROUP_CHANNEL);

/**
 * Whether group signals go through the leader's pidfd (`PIDFD_SIGNAL_PROCESS_GROUP`, Linux 6.9+)
 * rather than `kill(-pgid)` while the leader is unreaped.
 */
export function groupSignalsUsePidfd(): boolean {
  return pidfdGroupSignal;
}

/** Options of {@link spawnGroup}: those of `spawn`, plus the cleanup's. */
export interface SpawnGroupOptions extends Omit<SpawnOptions, 'processGroup' | 'parentDeathSignal'> {
  /** The group is always new: `'new'` (the default) or `'session'` (a new session, which is a new group too). */
  processGroup?: 'new' | 'session' | undefined;
  /** Sent to the group first. Default `'SIGTERM'`. */
  killSignal?: Signal | undefined;
  /** Milliseconds between `killSignal` and SIGKILL. Default 5000. */
  grace?: number | undefined;
  /** Milliseconds the leader may run; then the group is stopped. 0 or absent: no limit. */
  timeout?: number | undefined;
  /** Aborting it stops the group. */
  signal?: AbortSignal | undefined;
  /** What the leader gets when the spawning thread exits. Default `'SIGKILL'`; `null` for none. */
  parentDeathSignal?: Signal | null | undefined;
  /**
   * On a controlling terminal, the group is the terminal's foreground process group while the
   * leader runs (it can read the terminal and set its modes; ^C and ^Z reach it), and the
   * terminal goes back to this process's group afterwards with its modes restored, as a shell
   * does with a job. Without a controlling terminal it does nothing. Default `false`.
   */
  foreground?: boolean | undefined;
  /**
   * Where nothing can leave the group and the kernel ends it: `'pidns'` (a pid namespace),
   * `'cgroup'` (a cgroup v2), `'auto'` (the strongest available). Absent: a process group.
   * See {@link ProcessGroup.containment}.
   */
  contain?: ContainMode | undefined;
}

/** What {@link ProcessGroup.stop} may choose at stop time. */
export interface StopOptions {
  /** Sent to the group first, instead of the group's `killSignal`. */
  signal?: Signal | undefined;
  /** Milliseconds before SIGKILL, instead of the group's `grace`. */
  grace?: number | undefined;
}

/** The names {@link spawnGroup} reads from its options. @internal */
export const GROUP_OPTIONS: readonly string[] = [...SPAWN_OPTIONS, 'grace', 'foreground', 'contain'];

/**
 * Live (non-zombie) processes whose pgid is `pgid`, counted up to `limit`; `'unknown'` when `/proc`
 * cannot be read. Natively, off the event loop: one getdents64 pass over `/proc`, `getpgid(2)`
 * per pid, and only where the pgid matches a look at whether the process has exited (a pidfd
 * poll, or its state in `/proc/<pid>/stat` without pidfd_open), to leave zombies out. Not an
 * atomic snapshot: a member may fork or exit while it runs.
 * @internal
 */
export async function scanGroup(pgid: number, limit = Infinity): Promise<number | 'unknown'> {
  const [n] = await binding.scanGroup(pgid, toLimit(limit));
  return n < 0 ? 'unknown' : n;
}

function toLimit(limit: number): number {
  return limit >= INT32_MAX ? INT32_MAX : Math.max(1, Math.floor(limit));
}

// The members scan of one group. The last live member a scan found is a witness: while it lives
// (one getpgid and one pidfd poll, microseconds, on the event loop) the group is not empty and no
// full scan is needed; once it is gone, a full scan (milliseconds, on the threadpool) looks for
// another, without looking again at the zombies the previous one saw.
function memberScanner(pgid: number): GroupOps['scanMembers'] {
  let witness = 0;
  const memory = binding.createScanMemory();
  return (limit) => {
    if (witness > 0 && limit === 1) {
      const r = binding.groupMemberLive(pgid, witness);
      if (r === 1) return 1;
      if (r < 0) return 'unknown';
      witness = 0;
    }
    return binding.scanGroup(pgid, toLimit(limit), memory).then(([n, first]) => {
      witness = first;
      return n < 0 ? 'unknown' : n;
    });
  };
}

function kernelOps(leader: Child, abort: AbortSignal | undefined, holder: Holder | null): GroupOps {
  const ops = processGroupOps(leader, abort);
  if (holder === null) return ops;
  const { signalGroup, scanMembers } = ops;
  return {
    ...ops,
    signalGroup: (sig) => holder.signal(sig, signalGroup),
    scanMembers: () => holder.members(scanMembers),
  };
}

function processGroupOps(leader: Child, abort: AbortSignal | undefined): GroupOps {
  const pgid = leader.pid;
  const scanMembers = memberScanner(pgid);
  return {
    signalGroup(sig: number): SendResult {
      // Through the leader's private pidfd where the kernel binds the signal to the group (it
      // stays bound after a reap, so this holds also for a lost leader).
      if (pidfdGroupSignal) {
        const r = Child.signalGroup(leader, sig);
        if (r === 0) return 'ok';
        if (r === -ESRCH) return 'ESRCH';
        if (r === -EPERM) return 'EPERM';
        // Refused otherwise: fall through to the number, which the unreaped leader still pins.
      }
      // Never after the reap: the number may then name a stranger's group.
      if (leader.reaped) return 'ESRCH';
      // By number only while a WNOWAIT look (through the pidfd) still finds the leader waitable:
      // one that something else reaped no longer pins the pgid.
      try {
        leader.poll();
      } catch {
        return 'ESRCH';
      }
      try {
        process.kill(-pgid, sig);
        return 'ok';
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === 'EPERM' ? 'EPERM' : 'ESRCH';
      }
    },
    leaderInGroup: () => Child.inGroup(leader) === 1,
    signalsSurviveLoss: () => pidfdGroupSignal,
    reapOrphans: reapsOrphans() ? () => binding.reapGroupOrphans(pgid, pgid) : undefined,
    signalLeader: (sig) => leader.kill(sig),
    scanMembers,
    lookLeader: () => leader.poll(),
    reapLeader() {
      Child.setGuard(leader, null); // the group's own reap, after the cleanup
      return leader.reap();
    },
    closeLeader() {
      Child.setGuard(leader, null);
      leader.close();
      // Every member is dead: nobody in the group can read the leader's stdin any more. Close our
      // end as child_process does at exit; stdout and stderr close themselves at EOF, once
      // their data has been read.
      leader.stdin?.destroy();
    },
    now: () => performance.now(),
    setTimer(fn, ms, ref) {
      const t = setTimeout(fn, ms);
      if (!ref) t.unref();
      return () => clearTimeout(t);
    },
    publish(phase: GroupPhase) {
      if (channel.hasSubscribers) channel.publish(phase);
    },
    onAbort: abort
      ? (fn) => {
          abort.addEventListener('abort', fn, { once: true });
          return () => abort.removeEventListener('abort', fn);
        }
      : undefined,
  };
}

/**
 * A command running as the leader of its own process group, and the cleanup of that group.
 *
 * Guarantees:
 * - (a) The group is cleaned exactly once: when the leader exits on its own, on {@link stop},
 *   on `timeout` or on abort, whichever comes first; later requests share the same result.
 * - (b) The cleanup runs while the leader is an unreaped zombie (or still running), so the pgid
 *   cannot name anyone else's group: killSignal (and SIGCONT), a grace that a `/proc` scan may
 *   only shorten, then always a group SIGKILL, which the kernel delivers to every member,
 *   including one forked a moment ago. Only then is the leader reaped.
 * - (c) No signal is ever sent to the group after the leader was reaped; a group signal that
 *   finds the group gone (ESRCH) makes the number forgotten at once.
 * - (d) Where the kernel has `PIDFD_SIGNAL_PROCESS_GROUP` (6.9+) group signals go through the
 *   leader's pidfd, bound to that very group; otherwise `kill(-pgid)`, only while reserved.
 * - (e) `timeout` and abort act only on a leader that still runs, as a WNOWAIT look shows: a
 *   leader that exited a moment before is cleaned as an exit.
 * - (f) A released group holds no descriptor and leaves no zombie of its leader.
 * - (g) Nothing outlives the supervisor, however it ends while it runs any code: every group not
 *   yet released gets a SIGKILL through its leader's pidfd (or by number while the leader is
 *   unreaped) on a normal exit, `process.exit()` from anywhere, `process.reallyExit`, an uncaught
 *   exception, SIGINT/SIGTERM/SIGHUP/SIGQUIT that the application does not listen for (the
 *   signal's default action follows), `abort()` and out-of-memory (SIGABRT), and the end of the
 *   Worker that spawned it. A supervisor killed outright runs no code: its leaders still die by
 *   `parentDeathSignal`, but their members then outlive it (see `contain`).
 * - (h) The leader is signalled through its own pidfd whenever a group signal cannot reach it
 *   (it left the group): `stop()` always settles. A leader lost to a foreign reap makes `closed`
 *   reject with `ERR_PROCPIN_CHILD_LOST`; its members are still killed through its pidfd where
 *   the kernel binds group signals to it.
 * - (i) A supervisor that is a subreaper or PID 1 reaps the members re-parented to it.
 *
 * Made by {@link spawnGroup}.
 */
export class ProcessGroup {
  /** The leader's pid. */
  readonly pid: number;
  /** The group's id: the leader's pid. */
  readonly pgid: number;
  /** The leader: its stdio and its own handle. Do not reap it yourself. */
  readonly leader: Child;
  /** Resolves when the leader has exited (it is still a zombie; the pgid is still ours). */
  readonly exited: Promise<WaitInfo>;
  /**
   * Resolves when the group was cleaned and the leader reaped. Rejects only with
   * `ERR_PROCPIN_CHILD_LOST` when the leader was reaped by someone else.
   */
  readonly closed: Promise<GroupResult>;
  /**
   * What holds the group's processes: `'pidns'` (a pid namespace: `pid` is then procpin-init's,
   * the command's parent's parent), `'cgroup'` (a cgroup v2), or `'group'` (the process group
   * alone: a member may leave it by setsid/setpgid, and a SIGKILLed supervisor leaves members).
   */
  readonly containment: Containment;
  /** @internal Why `contain: 'auto'` did not use a stronger one. */
  readonly containmentFallback: readonly string[];
  readonly #cleanup: GroupCleanup;

  /** @internal Use {@link spawnGroup}. */
  constructor(
    token: typeof kInternal,
    leader: Child,
    cleanup: GroupCleanup,
    holder: Holder | null = null,
  ) {
    if (token !== kInternal) throw new TypeError('Illegal constructor: use spawnGroup()');
    this.pid = leader.pid;
    this.pgid = leader.pid;
    this.leader = leader;
    this.#cleanup = cleanup;
    this.exited = cleanup.exited;
    this.containment = holder?.kind ?? 'group';
    this.containmentFallback = holder?.fallback ?? [];
    // A cgroup is removed (once empty) before the group counts as closed.
    this.closed = holder ? cleanup.closed.then(async (r) => (await holder.release(), r)) : cleanup.closed;
  }

  /**
   * `'running'`; `'reserved'` once the leader exited (a zombie that keeps the pgid ours);
   * `'cleaning'` while the group is being terminated; `'released'` once the leader was reaped.
   */
  get state(): GroupState {
    return this.#cleanup.state;
  }

  /**
   * Sends `sig` (default `'SIGTERM'`; 0 probes) to every member of the group, while the pgid is
   * ours. Returns `false`, and sends nothing, once the group was released or found gone.
   */
  signal(sig: Signal | 0 = 'SIGTERM'): boolean {
    const num = validateSignal(sig, 'sig', this.signal, true);
    return this.#cleanup.signal(num);
  }

  /**
   * Stops the group: killSignal (or `signal`) to every member, up to the group's `grace` (or
   * `grace`) ms for them to go, then SIGKILL, then the leader is reaped. Runs once; concurrent
   * and later calls return the same promise, which is {@link closed}, and a cleanup already
   * under way keeps the signal and grace it started with.
   */
  stop(options?: StopOptions): Promise<GroupResult> {
    if (options === undefined) {
      void this.#cleanup.stop();
      return this.closed;
    }
    let o: Partial<StopOptions>;
    try {
      o = readOptions<StopOptions>(options, 'options', ['signal', 'grace'], this.stop);
    } catch (err) {
      return Promise.reject(err);
    }
    const choice: { killSignal?: number; killSignalName?: string; grace?: number } = {};
    try {
      if (o.signal !== undefined) {
        choice.killSignal = validateSignal(o.signal, 'options.signal', this.stop);
        choice.killSignalName = signalName(choice.killSignal) ?? String(choice.killSignal);
      }
      if (o.grace !== undefined) {
        choice.grace = validateInteger(o.grace, 'options.grace', 0, INT32_MAX, this.stop);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    void this.#cleanup.stop(choice);
    return this.closed;
  }

  /** {@link stop}, as `await using` calls it. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/**
 * Starts `file` as the leader of a new process group and cleans the whole group when the leader
 * exits, on {@link ProcessGroup.stop}, on `timeout`, or when `signal` aborts. Arguments are
 * validated before anything starts; a failure to start throws as `spawn` does. A `signal` that
 * has already aborted starts the command and stops it at once, as `child_process` does.
 *
 * @example
 * await using group = spawnGroup('npm', ['run', 'dev'], { grace: 2000, timeout: 60_000 });
 * const { exitCode, signal } = await group.closed;
 */
export function spawnGroup(
  file: string,
  args?: readonly string[],
  options?: SpawnGroupOptions,
): ProcessGroup;
export function spawnGroup(file: string, options?: SpawnGroupOptions): ProcessGroup;
export function spawnGroup(
  file: string,
  argsOrOptions?: readonly string[] | SpawnGroupOptions,
  maybeOptions?: SpawnGroupOptions,
): ProcessGroup {
  const [args, options] = spawnArguments(file, argsOrOptions, maybeOptions, spawnGroup);
  // Read once: validation, the spawn and the cleanup all see the same values.
  const opts = readOptions<SpawnGroupOptions>(options, 'options', GROUP_OPTIONS, spawnGroup);
  const killSignal = validateSignal(opts.killSignal ?? 'SIGTERM', 'options.killSignal', spawnGroup);
  const grace = validateInteger(opts.grace ?? 5000, 'options.grace', 0, INT32_MAX, spawnGroup);
  const timeout = validateInteger(opts.timeout ?? 0, 'options.timeout', 0, INT32_MAX, spawnGroup);
  const abort = validateAbortSignal(opts.signal, 'options.signal', spawnGroup);
  const foreground =
    opts.foreground === undefined ? false : validateBoolean(opts.foreground, 'options.foreground', spawnGroup);
  const contain = validateContain(opts.contain, 'options.contain', spawnGroup);
  const pg = opts.processGroup ?? 'new';
  if (pg !== 'new' && pg !== 'session') {
    throw invalidArgValue('options.processGroup', pg, "must be 'new' or 'session'", spawnGroup);
  }
  const { killSignal: _k, grace: _g, timeout: _t, signal: _s, foreground: _f, contain: _c, ...spawnOptions } = opts;
  const leaderOptions = {
    ...spawnOptions,
    processGroup: pg,
    parentDeathSignal: opts.parentDeathSignal === undefined ? 'SIGKILL' : opts.parentDeathSignal,
  } as SpawnOptions;
  // Validated here, before anything starts, whichever way the leader is then spawned.
  const spec = prepareSpawn(file, args, leaderOptions, spawnGroup);
  // The abort listener goes on before anything starts: a look-alike signal whose
  // addEventListener throws leaves no leader running.
  let abortFn: (() => void) | null = null;
  const onAbort = () => abortFn?.();
  abort?.addEventListener('abort', onAbort, { once: true });
  let leader: Child;
  let holder: Holder | null = null;
  let tty: ForegroundTerminal | null = null;
  try {
    if (foreground) tty = ForegroundTerminal.open();
    if (contain === undefined) {
      leader = startChild(spec);
    } else {
      ({ child: leader, holder } = spawnContained(file, args, leaderOptions, contain, killSignal, grace, spawnGroup));
    }
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    tty?.close();
    throw err;
  }
  // The group reaps its leader, last: a reap (or close, which reaps at exit) by anyone else would
  // free the pgid while members may still run, and the group could no longer signal them.
  Child.setGuard(leader, (caller) => {
    throw codedError(
      Error,
      'ERR_PROCPIN_GROUP_LEADER',
      "A process group's leader is reaped by the group once it is clean: use group.stop() or await group.closed",
      caller,
    );
  });
  const ops = kernelOps(leader, abort, holder);
  ops.onAbort = abort
    ? (fn) => {
        abortFn = fn;
        return () => abort.removeEventListener('abort', onAbort);
      }
    : undefined;
  const cleanup = new GroupCleanup(
    ops,
    {
      pid: leader.pid,
      killSignal,
      killSignalName: signalName(killSignal) ?? String(killSignal),
      grace,
      timeout,
      abortedAtStart: abort?.aborted === true,
    },
    leader.exited,
  );
  // However this environment or the process ends (exit from anywhere, abort, a Worker's end),
  // the native end-kill table SIGKILLs the group through the leader's pidfd (or its number while
  // it is unreaped) until the group is released.
  Child.armEndKill(leader, pidfdGroupSignal);
  live.add(cleanup);
  cleanup.onReleased = () => {
    live.delete(cleanup);
    tty?.close();
  };
  hookEndingSignals();
  // Aborted before the spawn: the cleanup starts on its own, the listener will never fire.
  if (abort?.aborted) abort.removeEventListener('abort', onAbort);
  const group = new ProcessGroup(kInternal, leader, cleanup, holder);
  stopHooks.set(group, cleanup);
  tty?.start(group, cleanup.exited);
  return group;
}

// `foreground: true`: the job control of `procpin run` (lib/group/jobcontrol.ts) on this process's
// controlling terminal, opened as /dev/tty (whatever the stdio), for one group's lifetime.
class ForegroundTerminal {
  #fd: number;
  #job: TerminalJob | null;

  private constructor(fd: number, job: TerminalJob | null) {
    this.#fd = fd;
    this.#job = job;
  }

  /** The controlling terminal, or an inert object when there is none. */
  static open(): ForegroundTerminal {
    let fd = -1;
    try {
      fd = fs.openSync('/dev/tty', fs.constants.O_RDWR | fs.constants.O_NOCTTY);
    } catch {
      return new ForegroundTerminal(-1, null); // ENXIO: no controlling terminal
    }
    const job = TerminalJob.attach(fd, () => {});
    if (!job) {
      fs.closeSync(fd);
      return new ForegroundTerminal(-1, null);
    }
    return new ForegroundTerminal(fd, job);
  }

  start(group: ProcessGroup, exited: Promise<unknown>): void {
    const job = this.#job;
    if (!job) return;
    job.start({
      pid: group.pid,
      pgid: group.pgid,
      signal: (sig) => group.signal(sig),
    });
    exited.then(
      () => job.leaderExited(),
      () => job.leaderExited(),
    );
  }

  close(): void {
    const job = this.#job;
    this.#job = null;
    job?.end();
    if (this.#fd >= 0) fs.closeSync(this.#fd);
    this.#fd = -1;
  }
}

// Groups not yet released: on the 'exit' event each gets its group SIGKILL from the cleanup's
// own logic; the native table (armEndKill) covers every other way of ending.
const live = new Set<GroupCleanup>();
let hooked = false;

// SIGINT, SIGTERM, SIGHUP and SIGQUIT end a process by default. With a listener of ours alone
// (the application has none), the groups are killed and the signal raised again with its
// default action, so the process still ends by it (status 128+N), as the signal-exit package
// does. When the application listens, it decides; however it then ends, the groups still die.
// Only on the main thread: signals are the process's, and a Worker gets none.
const ENDING_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'] as const;
function hookEndingSignals(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killLiveGroups);
  if (!isMainThread) return;
  for (const sig of ENDING_SIGNALS) process.on(sig, onEndingSignal);
}

function onEndingSignal(sig: NodeJS.Signals): void {
  if (process.listenerCount(sig) > 1) return; // the application listens: it decides
  killLiveGroups();
  binding.endKillAll();
  endContainments();
  for (const s of ENDING_SIGNALS) process.removeListener(s, onEndingSignal);
  process.kill(process.pid, sig);
}

function killLiveGroups(): void {
  for (const cleanup of live) cleanup.killNow();
}

// A subreaper (or PID 1) inherits orphaned members: the group reaps them once it is clean.
function reapsOrphans(): boolean {
  return process.pid === 1 || binding.getChildSubreaper() === 1;
}
