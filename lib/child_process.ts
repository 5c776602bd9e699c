/**
 * SPEC Layer 2b: `procpin/child_process`, a drop-in for supervisors. `spawn` takes
 * `child_process.spawn`'s arguments and returns an object that behaves as a `ChildProcess` does
 * (its events, their order and arguments, its properties, its errors), with a
 * {@link ProcessGroup} underneath: `kill()` signals the whole group while it is ours, and the
 * leader's exit cleans the group before the leader is reaped. A supervisor that uses
 * `child_process.spawn` and tree-kill switches by changing its import.
 * @module procpin/child_process
 */
import { abortError } from './errors';
import {
  GROUP_OPTIONS,
  onStopReached,
  ProcessGroup,
  spawnGroup,
  type SpawnGroupOptions,
  type StopOptions,
} from './group/group';
import type { GroupResult } from './group/logic';
import {
  ChildProcess,
  type OutputOf,
  type SpawnError,
  type SpawnOptions,
  type StdinOf,
  type StdioEntry,
  type StdioOptions,
} from './child_process/process';
import { readNodeSpawnCall } from './child_process/arguments';
import { failedStart, watch } from './child_process/events';
import { kill, track } from './child_process/kill';
import { validateAbortSignal } from './validate';

export { collectOutput, stdioEnded } from './group/output';
export type { CollectOptions, GroupOutput, MaxBufferError } from './group/output';

export type { GroupResult, StopOptions };
export { ChildProcess, kill };
export type { OutputOf, SpawnError, SpawnOptions, StdinOf, StdioEntry, StdioOptions };
export type { KillCallback } from './child_process/kill';
export { ProcessGroup };

const ADAPTER_OPTIONS: readonly string[] = [
  ...GROUP_OPTIONS,
  'detached',
  'windowsHide',
  'windowsVerbatimArguments',
];
const UNSUPPORTED: Record<string, string> = {
  serialization: 'is not supported: procpin has no IPC channel',
};

/**
 * `child_process.spawn` over a {@link ProcessGroup}: the same arguments, the same events and
 * properties, with the group's cleanup underneath. Bad arguments and unknown options throw (as
 * child_process's validation does); a failure to start is reported by `'error'`.
 *
 * @example
 * import { spawn } from 'procpin/child_process';
 * const child = spawn('npm', ['run', 'dev'], { stdio: 'inherit', grace: 2000 });
 * child.on('close', (code, signal) => console.log('dev server ended', code, signal));
 */
export function spawn<const S extends StdioOptions = 'pipe'>(
  command: string,
  args?: readonly string[],
  options?: SpawnOptions & { stdio?: S | undefined },
): ChildProcess<StdinOf<S>, OutputOf<S, 1>, OutputOf<S, 2>>;
export function spawn<const S extends StdioOptions = 'pipe'>(
  command: string,
  options?: SpawnOptions & { stdio?: S | undefined },
): ChildProcess<StdinOf<S>, OutputOf<S, 1>, OutputOf<S, 2>>;
export function spawn(
  command: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
): ChildProcess {
  const call = readNodeSpawnCall(
    command,
    argsOrOptions,
    maybeOptions,
    ADAPTER_OPTIONS,
    UNSUPPORTED,
    spawn,
  );
  const opts = call.options;
  const {
    detached,
    windowsHide: _h,
    windowsVerbatimArguments: _v,
    stdio: _s,
    shell: _sh,
    signal: abort,
    ...rest
  } = opts;
  const groupOptions: SpawnGroupOptions = { ...rest };
  if (detached) groupOptions.processGroup = 'session';
  const stdioList = call.stdio as SpawnGroupOptions['stdio'];
  groupOptions.stdio = stdioList;
  const { file: spawnfile, args } = call;
  const spawnargs = call.spawnargs as string[];

  // child_process emits 'error' with an AbortError when its signal aborts; the listener goes on
  // first, so that a signal whose addEventListener throws starts nothing.
  // One listener, as child_process has: abort stops the group and emits 'error'.
  validateAbortSignal(abort, 'options.signal', spawn);
  let child: ChildProcess | null = null;
  const onAbort = () => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    void child.group?.stop();
    child.emit('error', abortError(abort));
  };
  abort?.addEventListener('abort', onAbort, { once: true });
  let group: ProcessGroup;
  try {
    group = spawnGroup(spawnfile, args, groupOptions);
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    const e = err as Partial<SpawnError>;
    if (typeof e.errno !== 'number' || typeof e.syscall !== 'string') throw err;
    return failedStart(spawnfile, spawnargs, stdioList, e.errno);
  }
  const c = new ChildProcess(spawnfile, spawnargs, group, [...group.leader.stdio]);
  child = c;
  // Our stop (timeout, abort, group.stop()) reaching the running leader is a kill, as
  // child_process's timeout and abort are: `killed` says so.
  onStopReached(group, () => (c.killed = true));
  process.nextTick(() => c.emit('spawn'));
  if (abort?.aborted) process.nextTick(onAbort); // after 'spawn', as child_process has it
  watch(c, group, () => abort?.removeEventListener('abort', onAbort));
  track(c, group);
  return c;
}
