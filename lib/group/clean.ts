/**
 * The cleanup's run, once it has started: killSignal (and SIGCONT), the grace that a scan may
 * shorten, the final group SIGKILL, and a subreaper's reaping of the members it inherits. What it
 * needs of its {@link ./logic | GroupCleanup} (the looks, the signals, the clock) comes in as
 * {@link CleanupSteps}; it holds no state of its own and makes no syscall.
 * @internal
 * @module
 */
import { SIGNALS } from '../signals';
import {
  backoff,
  FIRST_SCAN_MS,
  MAX_SCAN_MS,
  NO_GRACE_SCAN_MS,
  nextDelay,
  ORPHAN_REAP_MS,
} from './scan';
import type { GroupOps, GroupPhase, GroupPolicy, ScanResult } from './types';

const { SIGKILL, SIGCONT } = SIGNALS;

/** What the run needs of the cleanup it belongs to. */
export interface CleanupSteps {
  readonly ops: GroupOps;
  /** The policy of this cleanup (a stop's choice of killSignal and grace included). */
  policy(): GroupPolicy;
  /** When the cleanup started, on `ops.now()`'s clock. */
  startedAt(): number;
  /** A WNOWAIT look: the leader has exited (a zombie), or was lost to a foreign reap. */
  leaderDone(): boolean;
  /** One scan for live members, answered within `ms` (0 once the number is forgotten). */
  scan(ms: number): Promise<ScanResult>;
  /** A pause of `ms`, ended early when the leader's exit is read. */
  pause(ms: number): Promise<void>;
  /** One group signal, published as `phase` when it was sent. */
  sendPhase(sig: number, name: string, phase: 'signal' | 'kill'): void;
  publish(phase: GroupPhase['phase'], extra?: Partial<GroupPhase>): void;
  /** Members were (or may have been) there to be killed: the result says `killed`. */
  markKilled(): void;
}

/** Runs the cleanup from its first signal to the final group SIGKILL. */
export async function runCleanup(s: CleanupSteps): Promise<void> {
  const { ops } = s;
  const { killSignal, killSignalName, grace } = s.policy();
  const t0 = s.startedAt();
  // With no grace the first signal is, in effect, the final one: whether live members were
  // there to be killed is read just before it (a leader that still runs is one of them).
  let before: ScanResult | null = null;
  if ((killSignal === SIGKILL || grace <= 0) && s.leaderDone()) {
    before = await s.scan(NO_GRACE_SCAN_MS);
  }
  s.sendPhase(killSignal, killSignalName, killSignal === SIGKILL ? 'kill' : 'signal');
  if (killSignal !== SIGKILL && killSignal !== SIGCONT) {
    // A stopped member would hold killSignal pending until the grace ran out.
    s.sendPhase(SIGCONT, 'SIGCONT', 'signal');
  }

  // Grace: ended early once the leader has exited and a scan finds no live member. The scan
  // is advisory (not an atomic snapshot): it may shorten the grace, never skip the SIGKILL.
  const deadline = t0 + (killSignal === SIGKILL ? 0 : grace);
  let delay = FIRST_SCAN_MS;
  let emptied = false;
  for (;;) {
    let left = deadline - ops.now();
    if (left <= 0) break;
    if (s.leaderDone() && (await s.scan(left)) === 0) {
      emptied = true;
      break;
    }
    left = deadline - ops.now();
    if (left <= 0) break;
    await s.pause(Math.min(delay, left));
    delay = nextDelay(delay, ops.now() - t0);
  }
  s.publish('grace-ended', { reason: emptied ? 'empty' : 'grace' });

  if (!s.leaderDone()) {
    // The leader outlived the grace. Alive, it pins the pgid as surely as a zombie does:
    // kill the group, then wait for the leader's exit to be read before the final kill.
    s.markKilled();
    if (killSignal !== SIGKILL) s.sendPhase(SIGKILL, 'SIGKILL', 'kill');
    delay = FIRST_SCAN_MS;
    while (!s.leaderDone()) {
      await s.pause(delay);
      delay = backoff(delay);
    }
  }
  // The grace did not empty the group: the last scan (at most MAX_SCAN_MS ago) saw a live
  // member or could not read /proc, or the leader itself outlived it. No fresh full scan
  // here: under a fork storm one costs more than the kill it would describe.
  if (before === 0) emptied = true;
  if (!emptied) s.markKilled();

  // The unreaped leader keeps the pgid ours: kill the group unconditionally, whatever the scan
  // said. The kernel delivers a group signal to every member, including ones forked meanwhile.
  s.sendPhase(SIGKILL, 'SIGKILL', 'kill');
  await reapOrphans(s);
}

// A subreaper or PID 1 inherits the members whose parents died: after the final SIGKILL, reap
// them (never the leader, whose zombie pins the pgid meanwhile) until none is left alive.
async function reapOrphans(s: CleanupSteps): Promise<void> {
  const { ops } = s;
  const reap = ops.reapOrphans;
  if (!reap) return;
  const end = ops.now() + ORPHAN_REAP_MS;
  let delay = FIRST_SCAN_MS;
  for (;;) {
    let alive: number;
    try {
      alive = reap.call(ops);
    } catch {
      return;
    }
    // Members that are not our children yet are re-parented to us as their parents die.
    const live = alive === 0 ? await s.scan(MAX_SCAN_MS) : 1;
    if ((alive <= 0 && live === 0) || ops.now() >= end) return;
    await s.pause(delay);
    delay = backoff(delay);
  }
}
