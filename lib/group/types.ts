/**
 * The words of a process group's cleanup: its states, results and phases, and the effects it
 * needs ({@link GroupOps}), which the kernel side (./kernel) or a test's recorder provides.
 * @module
 */
import type { WaitInfo } from '../waitinfo';

/** A members scan's answer: a count, or `'unknown'` when `/proc` could not be read. */
export type ScanResult = number | 'unknown';

/** What a group signal did: delivered, the group is gone, or a member refused it. */
export type SendResult = 'ok' | 'ESRCH' | 'EPERM';

/** Where a {@link ProcessGroup} is in its life. */
export type GroupState = 'running' | 'reserved' | 'cleaning' | 'released';

/** How a group ended, once it was cleaned and its leader reaped. */
export interface GroupResult {
  /** The leader's exit code, or null when a signal ended it. */
  exitCode: number | null;
  /** The name of the signal that ended the leader, or null when it exited. */
  signal: string | null;
  /** The `timeout` fired while the leader still ran. */
  timedOut: boolean;
  /** The `AbortSignal` fired while the leader still ran. */
  aborted: boolean;
  /**
   * Our stop (timeout, abort, `stop()`) reached the leader while it still ran, as a WNOWAIT look
   * taken before the first signal saw it. False when the leader had already exited by itself.
   */
  stoppedWhileRunning: boolean;
  /**
   * The grace did not empty the group: live members (the leader included) were seen at its end,
   * just before the final SIGKILL. An unreadable `/proc` counts as members seen.
   */
  killed: boolean;
}

/** A phase of a cleanup, as published on the `procpin:group` diagnostics channel. */
export interface GroupPhase {
  /** The leader's pid, which is the pgid. */
  pid: number;
  /**
   * `'exited'` (the leader's exit was read, it is still a zombie), `'signal'` (killSignal, or
   * SIGCONT after it, sent to the group), `'grace-ended'` (`reason`: `'empty'` when the scan
   * found no live member, `'grace'` when the time ran out), `'kill'` (a group SIGKILL),
   * `'reaped'` (the leader was reaped) and `'released'` (nothing of the group is held any more).
   */
  phase: 'exited' | 'signal' | 'grace-ended' | 'kill' | 'reaped' | 'released';
  /** The signal sent, for `'signal'` and `'kill'`. */
  signal?: string;
  /** Why the grace ended, for `'grace-ended'`. */
  reason?: 'empty' | 'grace';
  /** Milliseconds since the cleanup began (0 before it began). */
  ms: number;
}

/** The effects a cleanup needs. The real ones act on a leader `Child` and `/proc`. */
export interface GroupOps {
  /**
   * Sends `sig` to every member of the group. Called only while the leader is unreaped and the
   * number has not been forgotten.
   */
  signalGroup(sig: number): SendResult;
  /** Sends `sig` to the leader alone, through its pidfd (a no-op once it has exited). */
  signalLeader(sig: number): boolean;
  /**
   * Whether the running leader is still in the group it leads (a group signal reaches it). One
   * that left it (`setpgid`) is signalled through its own pidfd as well. Absent: always.
   */
  leaderInGroup?(): boolean;
  /**
   * Whether group signals stay bound to the group after the leader was lost to a foreign reap
   * (the leader's pidfd with `PIDFD_SIGNAL_PROCESS_GROUP`). Absent or false: after a loss nothing
   * more is sent.
   */
  signalsSurviveLoss?(): boolean;
  /**
   * For a supervisor that is a subreaper or PID 1: reaps the group's members that were re-parented
   * to it and have exited (never the leader); the number of such members still alive. Absent:
   * not a reaper of orphans.
   */
  reapOrphans?(): number;
  /**
   * Counts live (non-zombie) processes whose pgid is the group's, stopping at `limit`; `'unknown'`
   * when `/proc` cannot be read. Not an atomic snapshot. May answer at once or, for a scan that
   * takes long, through a promise (never rejected on purpose; a rejection counts as `'unknown'`).
   */
  scanMembers(limit: number): ScanResult | Promise<ScanResult>;
  /** A WNOHANG|WNOWAIT look at the leader: its exit, or null while it runs. */
  lookLeader(): WaitInfo | null;
  /** The reaping wait, after the exit was read. */
  reapLeader(): WaitInfo;
  /** Closes the leader's descriptors. Called once, last. */
  closeLeader(): void;
  /** A monotonic clock in milliseconds. */
  now(): number;
  /** Runs `fn` after `ms`; returns a cancel function. `ref`: whether it keeps the loop alive. */
  setTimer(fn: () => void, ms: number, ref: boolean): () => void;
  /** Publishes a phase. */
  publish(phase: GroupPhase): void;
  /** Adds an abort listener; returns its remover. */
  onAbort?(fn: () => void): () => void;
}

/** The cleanup's knobs, already validated. */
export interface GroupPolicy {
  pid: number;
  killSignal: number;
  killSignalName: string;
  grace: number;
  /** 0 or absent: none. */
  timeout?: number;
  /** Whether the abort signal had already fired at spawn. */
  abortedAtStart?: boolean;
}
