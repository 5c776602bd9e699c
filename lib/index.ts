/**
 * procpin: Linux process lifecycle for Node. Nothing you start outlives you, you never signal a
 * stranger, and a dead owner's leftovers get swept.
 * @module procpin
 */
// Layer 1: the kernel primitives, every export of lib/primitives.ts (it exports nothing else).
export * from './primitives';
export type { Signal } from './signals';
export type { WaitInfo, WaitCode } from './waitinfo';
export type { ProcpinSystemError, ProcpinLockedError } from './errors';
export { isLockedError } from './errors';

// Layer 2: children the addon owns (lib/child/).
export { spawn, Child, openProcess, ProcessHandle } from './child/child';
export type { SpawnOptions, StdioEntry } from './child/child';

// Layer 3a: zombie-reserved group cleanup (lib/group/).
export { spawnGroup, ProcessGroup, groupSignalsUsePidfd, GROUP_CHANNEL } from './group/group';
export type {
  SpawnGroupOptions,
  StopOptions,
  GroupResult,
  GroupState,
  GroupPhase,
} from './group/group';

// Collecting a child's or a group's output (lib/group/output.ts).
export { collectOutput, stdioEnded } from './group/output';
export type { CollectOptions, GroupOutput, ChildOutput, MaxBufferError } from './group/output';

// Layer 3b: dead-pid sweeping (lib/sweep/).
export { sweep, SWEEP_CHANNEL } from './sweep/sweep';
export type {
  SweepReport,
  SweepEntry,
  SweepReason,
  SweepOptions,
  SweepAuthority,
  SweepMessage,
} from './sweep/sweep';
export { claim, Claim } from './sweep/claim';
export type { ClaimOptions } from './sweep/claim';
export { claimPidfile, Pidfile } from './sweep/pidfile';
export type { ClaimPidfileOptions } from './sweep/pidfile';

// Containment (lib/contain/): groups the kernel holds, and the successor's sweep of cgroups.
export { sweepCgroups } from './contain/contain';
export type { ContainMode, Containment, SweepCgroupsOptions } from './contain/contain';
