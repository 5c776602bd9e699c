/**
 * Exit statuses of the `procpin` command. They follow coreutils `timeout` and `env`: the
 * command's own code, 128+N when signal N ended it, 124 when the timeout fired, 125 when procpin
 * itself failed, 126 when the command was found but could not be run, 127 when it was not found,
 * and 2 for a usage error.
 * @internal
 * @module
 */
import type { GroupResult } from '../index';

/** Exit statuses of the `procpin` command. */
export const EXIT = Object.freeze({
  OK: 0,
  FAILURE: 1,
  USAGE: 2,
  TIMEOUT: 124,
  PROCPIN_FAILED: 125,
  CANNOT_RUN: 126,
  NOT_FOUND: 127,
});

// errno codes with which execve refuses a file that exists (the `env`/`timeout` 126 cases).
const CANNOT_EXEC = new Set([
  'EACCES',
  'ENOEXEC',
  'EPERM',
  'EISDIR',
  'ENOTDIR',
  'ELOOP',
  'ETXTBSY',
  'ENAMETOOLONG',
  'E2BIG',
  'ELIBBAD',
  'EINVAL',
]);

/**
 * The exit status for a command that did not start: 127 when it was not found (`ENOENT` from the
 * exec or the PATH search), 126 when it was found but the kernel would not run it, 125 for any
 * other failure (procpin's own: out of descriptors or processes, SIGCHLD ignored, ...).
 */
export function spawnFailureStatus(err: unknown): number {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const syscall = typeof e?.syscall === 'string' ? e.syscall : '';
  if (!code || code.startsWith('ERR_')) return EXIT.PROCPIN_FAILED;
  const exec = syscall === 'execve' || syscall === 'execvp' || syscall === 'spawn';
  if (!exec) return EXIT.PROCPIN_FAILED;
  if (code === 'ENOENT') return EXIT.NOT_FOUND;
  return CANNOT_EXEC.has(code) ? EXIT.CANNOT_RUN : EXIT.PROCPIN_FAILED;
}

/**
 * The exit status that tells how the leader ended: 124 when the timeout stopped it while it ran,
 * else 128+N when signal N ended it, else its exit code.
 */
export function exitStatusOf(
  result: Pick<GroupResult, 'exitCode' | 'signal' | 'timedOut' | 'stoppedWhileRunning'>,
  signalNumber: (name: string) => number,
): number {
  if (result.timedOut && result.stoppedWhileRunning) return EXIT.TIMEOUT;
  if (result.signal !== null) return 128 + signalNumber(result.signal);
  if (result.exitCode !== null) return result.exitCode;
  return EXIT.PROCPIN_FAILED;
}
