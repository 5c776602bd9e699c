/**
 * `WaitInfo`: `siginfo_t` from a wait, with Node's view added.
 * @module
 */
import type { RawWaitInfo } from './binding';
import { binding } from './binding';
import { signalName } from './signals';

/** How a child changed state (`siginfo_t.si_code`). */
export type WaitCode =
  'CLD_EXITED' | 'CLD_KILLED' | 'CLD_DUMPED' | 'CLD_STOPPED' | 'CLD_TRAPPED' | 'CLD_CONTINUED';

/** What a wait reported: `siginfo_t`, plus `exitCode`/`signal` as ChildProcess's `'exit'` has them. */
export interface WaitInfo {
  /** The child's pid. */
  pid: number;
  /** The child's real uid. */
  uid: number;
  /** What happened. */
  code: WaitCode;
  /** `si_status`: the exit code for CLD_EXITED, else the signal number. */
  status: number;
  /** The exit code when the child exited, else null. */
  exitCode: number | null;
  /** The signal's name when a signal ended, stopped or continued the child, else null. */
  signal: string | null;
}

const c = binding.constants;
const codeNames = new Map<number, WaitCode>([
  [c.CLD_EXITED, 'CLD_EXITED'],
  [c.CLD_KILLED, 'CLD_KILLED'],
  [c.CLD_DUMPED, 'CLD_DUMPED'],
  [c.CLD_STOPPED, 'CLD_STOPPED'],
  [c.CLD_TRAPPED, 'CLD_TRAPPED'],
  [c.CLD_CONTINUED, 'CLD_CONTINUED'],
]);

/** Converts the addon's raw siginfo. */
export function toWaitInfo(raw: RawWaitInfo): WaitInfo {
  return waitInfoOf(raw.pid, raw.uid, raw.code, raw.status);
}

/** The WaitInfo of a siginfo given field by field (a child's exit callback gets them so). */
export function waitInfoOf(pid: number, uid: number, rawCode: number, status: number): WaitInfo {
  const code = codeNames.get(rawCode) ?? 'CLD_EXITED';
  const exited = code === 'CLD_EXITED';
  return {
    pid,
    uid,
    code,
    status,
    exitCode: exited ? status : null,
    signal: exited ? null : signalName(status),
  };
}
