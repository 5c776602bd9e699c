/**
 * The decisions of a process group's cleanup, kept apart from the kernel so that each rule can be
 * tested with a recorder in place of `kill` and `/proc`. {@link ./group} wires it to a real
 * leader. Nothing here makes a syscall: every effect goes through {@link GroupOps}.
 * @internal
 * @module
 */
import { SIGNALS } from '../signals';
import type { WaitInfo } from '../waitinfo';
import { runCleanup, type CleanupSteps } from './clean';
import { scanWithin } from './scan';
import type {
  GroupOps,
  GroupPhase,
  GroupPolicy,
  GroupResult,
  GroupState,
  ScanResult,
  SendResult,
} from './types';

// Its words, for those who import them with the cleanup.
export type * from './types';

const { SIGKILL } = SIGNALS;

type StopReason = 'exit' | 'stop' | 'timeout' | 'abort';

/**
 * One group's cleanup, decided in one place: the leader's exit (or a stop) starts it, it signals
 * only while the pgid is provably ours, and it ends with a group SIGKILL before the leader is
 * reaped.
 */
export class GroupCleanup {
  /** Where the group is; see {@link GroupState}. */
  state: GroupState = 'running';
  /** The leader exited (still a zombie). */
  readonly exited: Promise<WaitInfo>;
  /**
   * Cleaned and reaped. Rejects only with `ERR_PROCPIN_CHILD_LOST`, when the leader was lost to a
   * foreign reap: never a result that looks normal.
   */
  readonly closed: Promise<GroupResult>;

  private readonly ops: GroupOps;
  private policy: GroupPolicy;
  // True while the pgid is provably ours: the leader is unreaped and no signal said ESRCH.
  // Cleared before the reap, so nothing can be sent to the number once it may be reissued.
  private ours = true;
  private exitInfo: WaitInfo | null = null;
  private leaderLost = false;
  private lostError: unknown = null;
  private cleaning = false;
  private t0 = 0;
  private timedOut = false;
  private aborted = false;
  private stoppedWhileRunning = false;
  private killed = false;
  private leaderSignalled = false;
  private wake: (() => void) | null = null;
  private cancelTimeout: (() => void) | null = null;
  private removeAbort: (() => void) | null = null;
  private resolveExited!: (info: WaitInfo) => void;
  private rejectExited!: (err: unknown) => void;
  private resolveClosed!: (result: GroupResult) => void;
  private rejectClosed!: (err: unknown) => void;
  // What the cleanup's run (./clean) needs of this one.
  private readonly steps: CleanupSteps;

  constructor(ops: GroupOps, policy: GroupPolicy, leaderExited: Promise<WaitInfo>) {
    this.ops = ops;
    this.policy = policy;
    this.steps = {
      ops,
      policy: () => this.policy,
      startedAt: () => this.t0,
      leaderDone: () => this.look() !== null || this.leaderLost,
      scan: (ms) => this.scan(ms),
      pause: (ms) => this.pause(ms),
      sendPhase: (sig, name, phase) => this.sendPhase(sig, name, phase),
      publish: (phase, extra) => this.publish(phase, extra),
      markKilled: () => {
        this.killed = true;
      },
    };
    this.exited = new Promise((resolve, reject) => {
      this.resolveExited = resolve;
      this.rejectExited = reject;
    });
    this.closed = new Promise((resolve, reject) => {
      this.resolveClosed = resolve;
      this.rejectClosed = reject;
    });
    // Rejected only when the leader was lost: for those who await them, not an unhandled crash.
    this.exited.catch(() => {});
    this.closed.catch(() => {});
    leaderExited.then(
      (info) => this.leaderExit(info),
      (err: unknown) => this.leaderExit(null, err),
    );
    if (policy.timeout !== undefined && policy.timeout > 0) {
      // Unref'd: a timeout alone does not keep the process alive (the leader's watch decides).
      this.cancelTimeout = ops.setTimer(() => this.deadline('timeout'), policy.timeout, false);
    }
    if (policy.abortedAtStart) {
      queueMicrotask(() => this.deadline('abort'));
    } else if (ops.onAbort) {
      this.removeAbort = ops.onAbort(() => this.deadline('abort'));
    }
  }

  /** Called once, when the group is released. */
  onReleased: (() => void) | null = null;
  /** Called once, when our stop (timeout, abort, stop()) reaches the leader while it runs. */
  onStopReached: (() => void) | null = null;

  /** Whether the pgid is still ours to signal. */
  get holdsGroup(): boolean {
    return this.ours;
  }

  /**
   * Sends `sig` to the whole group while the pgid is ours. False, and nothing sent, once the
   * group was released or observed gone.
   */
  signal(sig: number): boolean {
    if (this.state === 'released') return false;
    const r = this.send(sig);
    if (r === 'ok') return true;
    return this.leaderSignalled;
  }

  /**
   * For a supervisor on its way out (process `'exit'`): no grace, no waiting, a group SIGKILL now
   * if the pgid is still ours. The leader is then reaped by whoever inherits it.
   */
  killNow(): void {
    if (this.state === 'released') return;
    this.send(SIGKILL);
  }

  /**
   * Starts the cleanup once; every call returns {@link closed}. `choice` (killSignal, grace)
   * replaces the policy's for this cleanup when it is the one that starts it; a cleanup already
   * under way keeps its own.
   */
  stop(
    choice?: Partial<Pick<GroupPolicy, 'killSignal' | 'killSignalName' | 'grace'>>,
  ): Promise<GroupResult> {
    if (!this.cleaning && choice) this.policy = { ...this.policy, ...choice };
    this.request('stop');
    return this.closed;
  }

  // One group signal. ESRCH: the group is gone, so the number is forgotten and never used again.
  // EPERM: a member exists that we may not signal. Whenever the group signal cannot have reached
  // the leader (it left the group, the group is gone or refused), the leader gets it through its
  // own pidfd: a stop always reaches it.
  private send(sig: number): SendResult | 'forgotten' {
    let r: SendResult | 'forgotten' = 'forgotten';
    if (this.ours) {
      try {
        r = this.ops.signalGroup(sig);
      } catch {
        r = 'ESRCH';
      }
      if (r === 'ESRCH') this.ours = false;
    }
    this.leaderSignalled = false;
    const running = this.exitInfo === null && !this.leaderLost;
    if (r === 'EPERM' || (running && (r !== 'ok' || !this.leaderInGroup()))) {
      try {
        this.leaderSignalled = this.ops.signalLeader(sig);
      } catch {
        this.leaderSignalled = false;
      }
    }
    return r;
  }

  private leaderInGroup(): boolean {
    try {
      return this.ops.leaderInGroup?.() ?? true;
    } catch {
      return false;
    }
  }

  private ms(): number {
    return this.cleaning ? Math.max(0, this.ops.now() - this.t0) : 0;
  }

  private publish(phase: GroupPhase['phase'], extra: Partial<GroupPhase> = {}): void {
    try {
      this.ops.publish({ pid: this.policy.pid, phase, ...extra, ms: this.ms() });
    } catch {
      // A subscriber's failure must not stop a cleanup.
    }
  }

  // The leader's exit was read (from its watch or a WNOWAIT look): it is a zombie, the pgid stays
  // reserved until we reap it.
  private noteExit(info: WaitInfo): void {
    if (this.exitInfo !== null) return;
    this.exitInfo = info;
    if (this.state === 'running') this.state = 'reserved';
    this.clearDeadlines();
    this.publish('exited');
    this.resolveExited(info);
    this.wake?.();
  }

  private leaderExit(info: WaitInfo | null, err?: unknown): void {
    if (info === null) {
      this.lostError ??= err;
      // The watch failed: look for ourselves. A leader whose status was lost (something else
      // reaped it) pins nothing any more: release without a signal.
      info = this.look();
      if (info === null && !this.leaderLost) return;
      if (info === null) this.rejectExited(err);
    }
    if (info !== null) this.noteExit(info);
    // Queued behind the reactions to `exited`, so that they see the group 'reserved'.
    queueMicrotask(() => this.request('exit'));
  }

  // A WNOHANG|WNOWAIT look. A leader that can no longer be waited for (someone else reaped it)
  // no longer pins the pgid: forget the number.
  private look(): WaitInfo | null {
    if (this.exitInfo !== null) return this.exitInfo;
    if (this.leaderLost) return null;
    try {
      const info = this.ops.lookLeader();
      if (info !== null) this.noteExit(info);
      return info;
    } catch (err) {
      this.leaderLost = true;
      this.lostError ??= err;
      // A group signal through the leader's pidfd stays bound to the group after the reap;
      // a number is never used again.
      let bound: boolean;
      try {
        bound = this.ops.signalsSurviveLoss?.() ?? false;
      } catch {
        bound = false;
      }
      if (!bound) this.ours = false;
      this.wake?.();
      return null;
    }
  }

  // The deadline and abort act only on a leader that still runs: its exit is read first, and a
  // leader that exited a moment before is cleaned as an exit.
  private deadline(reason: 'timeout' | 'abort'): void {
    if (this.cleaning || this.state === 'released') return;
    this.request(reason);
  }

  private clearDeadlines(): void {
    this.cancelTimeout?.();
    this.cancelTimeout = null;
  }

  private request(reason: StopReason): void {
    if (this.cleaning) return;
    if (reason !== 'exit') {
      // Decided by a WNOWAIT look before our first signal, not by a flag set afterwards.
      const look = this.look();
      if (look !== null) {
        this.noteExit(look);
      } else if (!this.leaderLost) {
        this.stoppedWhileRunning = true;
        this.timedOut = reason === 'timeout';
        this.aborted = reason === 'abort';
        this.onStopReached?.();
      }
    }
    this.cleaning = true;
    this.t0 = this.ops.now();
    this.clearDeadlines();
    this.state = 'cleaning';
    void this.clean();
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wake = null;
        cancel();
        resolve();
      };
      const cancel = this.ops.setTimer(done, ms, true);
      this.wake = done;
    });
  }

  // One scan for "is any member alive", answered within `ms` or counted as members seen.
  private scan(ms: number): Promise<ScanResult> {
    if (!this.ours) return Promise.resolve(0);
    return scanWithin((limit) => this.ops.scanMembers(limit), this.ops.setTimer.bind(this.ops), ms);
  }

  private sendPhase(sig: number, name: string, phase: 'signal' | 'kill'): void {
    const r = this.send(sig);
    if (r !== 'forgotten' || this.leaderSignalled) this.publish(phase, { signal: name });
  }

  private async clean(): Promise<void> {
    try {
      await runCleanup(this.steps);
    } finally {
      this.release();
    }
  }

  // Forget the number first, then reap: after the reap the pgid may be reissued to a stranger.
  private release(): void {
    this.ours = false;
    let info = this.exitInfo;
    let failed: unknown = null;
    if (!this.leaderLost) {
      try {
        info = this.ops.reapLeader();
        this.publish('reaped');
      } catch (err) {
        // Reaped by someone else after its exit was read (SIGCHLD ignored, a PID 1 that reaps
        // every zombie it finds): the exit read before stands. Any other failure (the leader not
        // exited, another errno, a loss before any exit was read) rejects closed; the group is
        // released all the same.
        const lostAfterExit =
          info !== null && (err as { code?: unknown })?.code === 'ERR_PROCPIN_CHILD_LOST';
        if (!lostAfterExit) failed = err;
      }
    }
    try {
      this.ops.closeLeader();
    } catch {
      // Closing is best effort; the handle closes once.
    }
    this.removeAbort?.();
    this.removeAbort = null;
    this.state = 'released';
    this.onReleased?.();
    this.publish('released');
    if (this.leaderLost) {
      this.rejectClosed(this.lostError ?? new Error('The group leader was lost to a foreign reap'));
      return;
    }
    if (failed !== null) {
      this.rejectClosed(failed);
      return;
    }
    this.resolveClosed({
      exitCode: info?.exitCode ?? null,
      signal: info?.signal ?? null,
      timedOut: this.timedOut,
      aborted: this.aborted,
      stoppedWhileRunning: this.stoppedWhileRunning,
      killed: this.killed,
    });
  }
}
