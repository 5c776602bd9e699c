/**
 * SPEC Layer 3a "Containment: contain" and Layer 3b `sweepCgroups`: groups the kernel holds.
 * The entry the rest of procpin uses; the containments themselves are in ./pidns and ./cgroup,
 * the successor's sweep in ./sweep-cgroups.
 * @module
 */
import { type Child, spawnRewritten, type SpawnOptions } from '../child/child';
import { SIGNALS } from '../signals';
import { invalidArgValue } from '../validate';
import { spawnCgroup } from './cgroup';
import { cgroupPlace, resetCgroupPlace } from './cgroup-place';
import { ContainmentRefused, unavailable, type ContainMode, type Holder } from './common';
import { pidnsHolder, pidnsPrecheck, spawnPidns } from './pidns';

export type { ContainMode, Containment, Holder } from './common';
export { cgroupPlace };
export { cgroupPopulated } from './cgroup';
/** @internal The supervisor ends now (a signal with no listener of its own): kill and remove its cgroups. */
export { endCgroups as endContainments } from './cgroup';
export { sweepCgroups, type SweepCgroupsOptions } from './sweep-cgroups';

const { SIGKILL } = SIGNALS;

/** @internal */
export function validateContain(
  value: unknown,
  name: string,
  caller: (...a: never[]) => unknown,
): ContainMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'pidns' || value === 'cgroup' || value === 'auto') return value;
  throw invalidArgValue(name, value, "must be 'pidns', 'cgroup' or 'auto'", caller);
}

// What was learned about availability: a refusal is remembered, and not tried again.
let pidnsRefused: string | null = null;
let cgroupRefused: string | null = null;

/**
 * @internal Starts the leader of a contained group: the strongest available for `'auto'`, the
 * one asked for otherwise (ERR_PROCPIN_CONTAINMENT_UNAVAILABLE, nothing started, when it is not
 * available).
 */
export function spawnContained(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  mode: ContainMode,
  killSignal: number,
  grace: number,
  caller: (...a: never[]) => unknown,
): { child: Child; holder: Holder } {
  const fallback: string[] = [];
  if (mode === 'pidns' || mode === 'auto') {
    let reason = pidnsRefused ?? pidnsPrecheck();
    if (
      reason === null &&
      options.parentDeathSignal !== 'SIGKILL' &&
      options.parentDeathSignal !== SIGKILL
    ) {
      reason =
        'the group has no parentDeathSignal SIGKILL, which ends the namespace with its supervisor';
    }
    if (reason === null) {
      const r = refusedOr(() => spawnPidns(file, args, options, killSignal, grace, caller));
      if (r.refused === undefined)
        return { child: r.value, holder: pidnsHolder(r.value, fallback) };
      reason = r.refused;
      pidnsRefused = reason;
    }
    if (mode === 'pidns') throw unavailable('pidns', reason, caller);
    fallback.push(`pidns: ${reason}`);
  }
  let reason = cgroupRefused;
  if (reason === null) {
    const r = refusedOr(() => spawnCgroup(file, args, options));
    if (r.refused === undefined) {
      r.value.holder.fallback.push(...fallback);
      return r.value;
    }
    reason = r.refused;
    cgroupRefused = reason;
  }
  if (mode === 'cgroup') throw unavailable('cgroup', reason, caller);
  fallback.push(`cgroup: ${reason}`);
  const child = spawnRewritten(file, [...args], options);
  return {
    child,
    holder: {
      kind: 'group',
      fallback,
      signal: (sig, base) => base(sig),
      members: (base) => base(1),
      release: () => Promise.resolve(),
    },
  };
}

/** Runs `start`: its value, or the reason a ContainmentRefused gave (anything else is thrown). */
function refusedOr<T>(start: () => T): { value: T; refused?: undefined } | { refused: string } {
  try {
    return { value: start() };
  } catch (err) {
    if (!(err instanceof ContainmentRefused)) throw err;
    return { refused: err.message };
  }
}

/** @internal Test hook: forget what was learned about availability. */
export function resetContainment(): void {
  pidnsRefused = null;
  cgroupRefused = null;
  resetCgroupPlace();
}
