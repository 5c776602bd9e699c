/**
 * SPEC Layer 3a: zombie-reserved process-group cleanup. A command starts as the leader of a new
 * process group; when the leader exits (or on stop, timeout, abort) every member of the group is
 * terminated, with a grace period, then killed, while the leader is still an unreaped zombie, so
 * the pgid cannot have been handed to anyone else. Only then is the leader reaped.
 * @module
 */
import { LeaderControl } from '../child/leader';
import {
  Child,
  prepareSpawn,
  readEnding,
  readSpawnCall,
  SPAWN_OPTIONS,
  startLeader,
  type SpawnOptions,
} from '../child/child';
import type { WaitInfo } from '../waitinfo';
import {
  spawnContained,
  validateContain,
  type ContainMode,
  type Containment,
  type Holder,
} from '../contain/contain';
import {
  INT32_MAX,
  invalidArgValue,
  readOptions,
  validateBoolean,
  validateInteger,
} from '../validate';
import { killAtEnd, released } from './ending';
import { ForegroundTerminal } from './foreground';
import { kernelOps, pidfdGroupSignal } from './kernel';
import { GroupCleanup, type GroupResult, type GroupState } from './logic';
import { signalName, validateSignal, type Signal } from '../signals';

export type { GroupPhase, GroupResult, GroupState } from './logic';
export { GROUP_CHANNEL, scanGroup } from './kernel';

const kInternal = Symbol('procpin.group.internal');

const stopHooks = new WeakMap<ProcessGroup, GroupCleanup>();
/**
 * @internal For procpin/child_process: `fn` runs when the group's stop (timeout, abort,
 * `stop()`) reaches the leader while it still runs, before the first signal (its `killed`).
 */
export function onStopReached(group: ProcessGroup, fn: () => void): void {
  const cleanup = stopHooks.get(group);
  if (cleanup) cleanup.onStopReached = fn;
}

/**
 * Whether group signals go through the leader's pidfd (`PIDFD_SIGNAL_PROCESS_GROUP`, Linux 6.9+)
 * rather than `kill(-pgid)` while the leader is unreaped.
 */
export function groupSignalsUsePidfd(): boolean {
  return pidfdGroupSignal;
}

/** Options of {@link spawnGroup}: those of `spawn`, plus the cleanup's. */
export interface SpawnGroupOptions extends Omit<
  SpawnOptions,
  'processGroup' | 'parentDeathSignal'
> {
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
export const GROUP_OPTIONS: readonly string[] = [
  ...SPAWN_OPTIONS,
  'grace',
  'foreground',
  'contain',
];

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
  /**
   * The leader: its stdio and its own handle. The group owns it: its `reap()`, `close()` and
   * dispose throw `ERR_PROCPIN_GROUP_LEADER` until the group has released it.
   */
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
    this.closed = holder
      ? cleanup.closed.then(async (r) => (await holder.release(), r))
      : cleanup.closed;
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
  // Read once: validation, the spawn and the cleanup all see the same values.
  const [args, opts] = readSpawnCall(file, argsOrOptions, maybeOptions, GROUP_OPTIONS, spawnGroup);
  const { killSignal, grace, timeout, abort } = readEnding(opts, spawnGroup, 5000);
  const foreground =
    opts.foreground === undefined
      ? false
      : validateBoolean(opts.foreground, 'options.foreground', spawnGroup);
  const contain = validateContain(opts.contain, 'options.contain', spawnGroup);
  const pg = opts.processGroup ?? 'new';
  if (pg !== 'new' && pg !== 'session') {
    throw invalidArgValue('options.processGroup', pg, "must be 'new' or 'session'", spawnGroup);
  }
  const {
    killSignal: _k,
    grace: _g,
    timeout: _t,
    signal: _s,
    foreground: _f,
    contain: _c,
    ...spawnOptions
  } = opts;
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
      leader = startLeader(spec);
    } else {
      ({ child: leader, holder } = spawnContained(
        file,
        args,
        leaderOptions,
        contain,
        killSignal,
        grace,
        spawnGroup,
      ));
    }
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    tty?.close();
    throw err;
  }
  // The group reaps its leader, last: a reap (or close, which reaps at exit) by anyone else would
  // free the pgid while members may still run, and the group could no longer signal them. From
  // here the group holds it; `group.leader` refuses reap() and close() until it is released.
  const control = LeaderControl.claim(leader);
  const ops = kernelOps(leader, control, abort, holder);
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
  // it is unreaped) until the group is released: the spawn armed it before it returned
  // (startLeader), so no JavaScript runs, nor can be terminated, while a group is unarmed.
  killAtEnd(cleanup);
  cleanup.onReleased = () => {
    released(cleanup);
    tty?.close();
  };
  // Aborted before the spawn: the cleanup starts on its own, the listener will never fire.
  if (abort?.aborted) abort.removeEventListener('abort', onAbort);
  const group = new ProcessGroup(kInternal, leader, cleanup, holder);
  stopHooks.set(group, cleanup);
  tty?.start(group, cleanup.exited);
  return group;
}
