/**
 * The scan policy of a group's cleanup, in one place: when the grace looks at the group (every
 * millisecond at first, then at growing intervals), how long one look may take, and how a look
 * stays cheap (the witness: the live member found last; the zombie memory: what the previous
 * full scan saw). The kernel side is injected ({@link ScanKernel}), so this holds no syscall.
 * @internal
 * @module
 */
import type { ScanResult } from './types';

const INT32_MAX = 0x7fffffff; // the most a native scan counts

// The grace is watched by re-scanning /proc: every millisecond at first, to catch members that
// die at once on killSignal (while one lives a scan costs microseconds: it looks at the live
// member it found last), then at growing intervals that cost little while a member takes its
// time.
export const FIRST_SCAN_MS = 1;
const FAST_PERIOD_MS = 250;
const EARLY_SCAN_MS = 8;
const EARLY_PERIOD_MS = 1000;
export const MAX_SCAN_MS = 50;
/**
 * With no grace: how long the one scan before the kill may take before it counts as "members may
 * exist" (a busy threadpool must not hold the kill).
 */
export const NO_GRACE_SCAN_MS = 20;
/** A subreaper's wait for the members it inherits to die of the final SIGKILL and be reaped. */
export const ORPHAN_REAP_MS = 2000;

/** The pause before the next look of the grace, `elapsed` ms into the cleanup. */
export function nextDelay(delay: number, elapsed: number): number {
  if (elapsed < FAST_PERIOD_MS) return FIRST_SCAN_MS;
  return Math.min(delay * 2, elapsed < EARLY_PERIOD_MS ? EARLY_SCAN_MS : MAX_SCAN_MS);
}

/** The pause after `delay` while waiting on the leader or the orphans: doubled, at most MAX_SCAN_MS. */
export function backoff(delay: number): number {
  return Math.min(delay * 2, MAX_SCAN_MS);
}

/** A count limit as the native scan takes it: at least 1, at most an int32. */
export function toLimit(limit: number): number {
  return limit >= INT32_MAX ? INT32_MAX : Math.max(1, Math.floor(limit));
}

/** What a members scan needs of the kernel (native/scan.cc). */
export interface ScanKernel<Memory> {
  /** Whether `pid` is a live member of `pgid`: 1, 0, or -errno. Microseconds, on the loop. */
  memberLive(pgid: number, pid: number): number;
  /** A full scan, off the loop: `[count or -errno, first live member found or 0]`. */
  scan(pgid: number, limit: number, memory: Memory): Promise<[number, number]>;
  /** The zombie memory of one group's successive scans. */
  createMemory(): Memory;
}

/**
 * The members scan of one group. The last live member a scan found is a witness: while it lives
 * the group is not empty and no full scan is needed; once it is gone, a full scan looks for
 * another, without looking again at the zombies the previous one saw.
 */
export function memberScanner<M>(
  pgid: number,
  kernel: ScanKernel<M>,
): (limit: number) => ScanResult | Promise<ScanResult> {
  let witness = 0;
  const memory = kernel.createMemory();
  return (limit) => {
    if (witness > 0 && limit === 1) {
      const r = kernel.memberLive(pgid, witness);
      if (r === 1) return 1;
      if (r < 0) return 'unknown';
      witness = 0;
    }
    return kernel.scan(pgid, toLimit(limit), memory).then(([n, first]) => {
      witness = first;
      return n < 0 ? 'unknown' : n;
    });
  };
}

/**
 * One look for "is any member alive", answered within `ms` or counted as members seen
 * (`'unknown'`): a slow scan (a busy threadpool) must not hold the grace past its end.
 */
export async function scanWithin(
  scan: (limit: number) => ScanResult | Promise<ScanResult>,
  setTimer: (fn: () => void, ms: number, ref: boolean) => () => void,
  ms: number,
): Promise<ScanResult> {
  let r: ScanResult | Promise<ScanResult>;
  try {
    r = scan(1);
  } catch {
    return 'unknown';
  }
  if (typeof r !== 'object') return r;
  let cancel = (): void => {};
  const late = new Promise<ScanResult>((resolve) => {
    cancel = setTimer(() => resolve('unknown'), Math.max(0, ms), true);
  });
  try {
    return await Promise.race([r.catch((): ScanResult => 'unknown'), late]);
  } finally {
    cancel();
  }
}
