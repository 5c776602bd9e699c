/**
 * tree-kill's call shape, `kill(pid, signal?, callback?)`, for a supervisor that kills by pid:
 * the pid names a child that `procpin/child_process` started and whose group it still holds,
 * and the signal goes to that whole group, as tree-kill meant it to go to the whole tree. A pid
 * this module did not start is never signalled: procpin does not know what it is.
 * @module
 */
import type { ProcessGroup } from '../group/group';
import { validateSignal } from '../signals';
import { invalidArgType, validatePid } from '../validate';
import type { ChildProcess } from './process';

/** What {@link kill} calls back with: nothing, or the error that kept the signal from going out. */
export type KillCallback = (error?: Error) => void;

/** The children this module started, by pid, until their group is released. */
const live = new Map<number, ChildProcess>();

/** @internal Known by its pid until its group is released (the pid is free then). */
export function track(child: ChildProcess, group: ProcessGroup): void {
  const pid = group.pid;
  live.set(pid, child);
  const forget = () => {
    if (live.get(pid) === child) live.delete(pid);
  };
  group.closed.then(forget, forget);
}

/**
 * Signals the whole group of the child that `procpin/child_process` started as `pid`, as
 * `child.kill(signal)` does (default `'SIGTERM'`). Returns whether a signal went out: `false` for
 * a child whose leader already exited (its group is being cleaned) and for a pid this module did
 * not start or already released, which is never signalled. tree-kill's arguments: `(pid)`,
 * `(pid, signal)`, `(pid, callback)`, `(pid, signal, callback)`, with tree-kill's types (a signal is any
 * string there; one Node does not know is `ERR_UNKNOWN_SIGNAL`); the callback is called on a later
 * tick, with no argument, or with the error (a pid that is not one, an unknown signal) that it would otherwise throw.
 *
 * @example
 * // import treeKill from 'tree-kill';
 * import { kill as treeKill } from 'procpin/child_process';
 * treeKill(child.pid, 'SIGINT');
 */
export function kill(
  pid: number,
  signal?: string | number | KillCallback,
  callback?: KillCallback,
): boolean {
  if (typeof signal === 'function' && callback === undefined) {
    callback = signal;
    signal = undefined;
  }
  if (callback !== undefined && typeof callback !== 'function') {
    throw invalidArgType('callback', 'of type function', callback, kill);
  }
  let sent = false;
  let error: Error | undefined;
  try {
    // tree-kill hands a pid that is not one (NaN) to its callback: so does this, never a throw.
    const id = validatePid(pid, 'pid', kill);
    const sig = validateSignal(signal ?? 'SIGTERM', 'signal', kill, true);
    sent = live.get(id)?.kill(sig) ?? false;
  } catch (err) {
    if (callback === undefined) throw err;
    error = err as Error;
  }
  const cb = callback;
  if (cb !== undefined) process.nextTick(() => (error === undefined ? cb() : cb(error)));
  return sent;
}
