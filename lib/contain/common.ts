/**
 * What every containment shares: the modes, the {@link Holder} a group's cleanup goes through,
 * and the errors that say a containment is not available here.
 * @module
 */
import * as fs from 'node:fs';
import { codedError } from '../errors';
import type { ScanResult, SendResult } from '../group/logic';

/** What `contain` asks for. */
export type ContainMode = 'pidns' | 'cgroup' | 'auto';
/** What holds a group: a pid namespace, a cgroup, or only its process group. */
export type Containment = 'pidns' | 'cgroup' | 'group';

/** @internal What a containment changes in a group's cleanup (see ../group). */
export interface Holder {
  readonly kind: Containment;
  /** Why a stronger one was not used (auto), for `--verbose`. */
  readonly fallback: string[];
  /** Replaces the process group's signal; `base` is that signal. */
  signal(sig: number, base: (sig: number) => SendResult): SendResult;
  /** Replaces the members scan (called once the leader exited). */
  members(
    base: (limit: number) => ScanResult | Promise<ScanResult>,
  ): ScanResult | Promise<ScanResult>;
  /** After the leader was reaped; `closed` waits for it. Never rejects. */
  release(): Promise<void>;
}

/** @internal A containment this machine refuses; `message` is the reason. Nothing was started. */
export class ContainmentRefused extends Error {}

/** @internal ERR_PROCPIN_CONTAINMENT_UNAVAILABLE for `mode`, with `reason`. */
export function unavailable(
  mode: string,
  reason: string,
  caller: (...a: never[]) => unknown,
): Error {
  const err = codedError(
    Error,
    'ERR_PROCPIN_CONTAINMENT_UNAVAILABLE',
    `contain: '${mode}' is not available here: ${reason}`,
    caller,
  ) as Error & { reason?: string; containment?: string };
  err.reason = reason;
  err.containment = mode;
  return err;
}

/** @internal A file's text, or null when it cannot be read. */
export function readText(p: string): string | null {
  try {
    return fs.readFileSync(p, 'latin1');
  } catch {
    return null;
  }
}
