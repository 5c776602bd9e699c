/**
 * The small parts of ./child that need none of its state: its errors, where the addon writes a
 * started child's numbers, and the streams made of the parent's descriptors.
 * @internal
 * @module
 */
import * as net from 'node:net';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { NativeChildHandle, NativeSpawnFailure } from '../binding';
import { codedError, ERRNO } from '../errors';

const ECHILD = -ERRNO.ECHILD;

/**
 * `ERR_PROCPIN_CHILD_LOST`: someone else reaped the child (another library's `waitpid(-1)`,
 * SIGCHLD set to ignored after the spawn). Its exit status is gone, and so is any right to its
 * number: nothing is sent to it any more.
 */
export function lostError(pid: number, caller?: (...a: never[]) => unknown) {
  return codedError(
    Error,
    'ERR_PROCPIN_CHILD_LOST',
    `The child ${pid} was reaped by someone else (a foreign wait, or SIGCHLD ignored): its exit status is lost`,
    caller,
    { pid, errno: ECHILD, syscall: 'waitid' },
  );
}

export function notExited(caller: (...a: never[]) => unknown) {
  return codedError(
    Error,
    'ERR_PROCPIN_NOT_EXITED',
    'The child has not exited yet: await child.exited before reap()',
    caller,
  );
}

// Where the addon writes a started child's pid and the parent's descriptors (pid, fd 0, fd 1, ...):
// one per module instance (each Worker has its own), read right after each spawn. Cheaper than
// a result object built through Node-API a property at a time.
let spawnOutArray = new Int32Array(8);

export function spawnOut(nstdio: number): Int32Array {
  if (spawnOutArray.length < nstdio + 1) spawnOutArray = new Int32Array(nstdio + 1);
  return spawnOutArray;
}

/** The addon's answer is a failure: its own `errno`, never one polluted onto Object.prototype. */
export function isFailure(r: NativeChildHandle | NativeSpawnFailure): r is NativeSpawnFailure {
  return Object.hasOwn(r, 'errno');
}

/** `obj[key]` when it is the object's own: never a value polluted onto Object.prototype. */
export function ownOf<T extends object, K extends keyof T>(obj: T, key: K): T[K] | undefined {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function openStream(fd: number, i: number): Readable | Writable | Duplex {
  // A pipe (0-2) is one-way, a socket pair (3+) both; net.Socket gives child_process's streams:
  // backpressure, 'end' at EOF, and it closes the descriptor when destroyed. `handle` is given
  // (as none) because net.Socket reads it first: one polluted onto Object.prototype would
  // replace the descriptor.
  const options = { handle: undefined, fd, readable: i !== 0, writable: i === 0 || i >= 3 };
  return new net.Socket(options);
}
