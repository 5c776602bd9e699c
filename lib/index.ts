/**
 * procpin: Linux process lifecycle for Node. Nothing you start outlives you, you never signal a
 * stranger, and a dead owner's leftovers get swept.
 * @module procpin
 */
export {
  constants,
  waitid,
  pidfdOpen,
  pidfdSendSignal,
  setParentDeathSignal,
  getParentDeathSignal,
  setChildSubreaper,
  isChildSubreaper,
  closeRange,
  flockSync,
  flock,
  tryLock,
} from './primitives';
export type { Signal, FlockOptions } from './primitives';
export type { WaitInfo, WaitCode } from './waitinfo';
export type { ProcpinSystemError, ProcpinLockedError } from './errors';
export { isLockedError } from './errors';

// Layer 2: children the addon owns (lib/child.ts).
export { spawn, Child, openProcess, ProcessHandle } from './child';
export type { SpawnOptions, StdioEntry } from './child';

// Layer 3a: zombie-reserved group cleanup (lib/group.ts).
export { spawnGroup, ProcessGroup, groupSignalsUsePidfd, GROUP_CHANNEL } from './group';
export type { SpawnGroupOptions, StopOptions, GroupResult, GroupState, GroupPhase } from './group';

// Collecting a child's or a group's output (lib/output.ts).
export { collectOutput, stdioEnded } from './output';
export type { CollectOptions, GroupOutput, ChildOutput, MaxBufferError } from './output';

// Layer 3b: dead-pid sweeping (lib/sweep.ts).
export { sweep, claim, claimPidfile, Claim, Pidfile, SWEEP_CHANNEL } from './sweep';
export type {
  SweepReport,
  SweepEntry,
  SweepReason,
  SweepOptions,
  SweepAuthority,
  SweepMessage,
  ClaimOptions,
  ClaimPidfileOptions,
} from './sweep';

// Containment (lib/contain.ts): groups the kernel holds, and the successor's sweep of cgroups.
export { sweepCgroups } from './contain';
export type { ContainMode, Containment, SweepCgroupsOptions } from './contain';
