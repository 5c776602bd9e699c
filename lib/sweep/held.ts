/**
 * What a {@link Claim} and a {@link Pidfile} share: an entry held by a flock on a descriptor that
 * only `release()` closes, after removing the entry.
 * @internal
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { binding } from '../binding';
import { codedError, ERRNO, errnoException } from '../errors';

const fsClose = promisify(fs.close);

// A held entry owns a descriptor it closes on release: only this folder may make one, or a caller
// could hand one any number and have it closed (Node's own classes refuse the same way).
export const kCreate = Symbol('procpin.create');

/** What `new Claim()` or `new Pidfile()` throws. */
export function illegalConstructor(): Error {
  return codedError(TypeError, 'ERR_ILLEGAL_CONSTRUCTOR', 'Illegal constructor');
}

/**
 * Removes `dir/name` if it still names the inode open as `fd`, then closes `fd` (dropping the
 * lock) in every case: natively for a descriptor the addon opened (`nativeFd`), through `fs` for
 * one `fs` opened (so that a Worker's descriptor tracking stays right). An entry already gone is
 * not an error.
 */
async function removeAndClose(
  dir: string,
  name: string,
  fd: number,
  nativeFd: boolean,
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  caller: Function,
): Promise<void> {
  let r: 0 | [number, string];
  try {
    r = await binding.removeHeld(dir, name, fd, nativeFd);
  } finally {
    // The lock goes with the last descriptor of its open file description: only now.
    if (!nativeFd) await fsClose(fd);
  }
  if (r !== 0 && r[0] !== -ERRNO.ENOENT) {
    throw errnoException(r[0], r[1], { path: path.join(dir, name) }, caller);
  }
}

/**
 * An entry held by its flock until `release()`: removed, then the lock dropped, exactly once.
 * `nativeFd` says who opened the descriptor (see `removeAndClose`).
 */
export abstract class HeldEntry {
  /** The entry's path. */
  readonly path: string;
  #fd: number;
  readonly #dir: string;
  readonly #name: string;
  readonly #nativeFd: boolean;
  #released: Promise<void> | null = null;

  protected constructor(token: symbol, dir: string, name: string, fd: number, nativeFd: boolean) {
    if (token !== kCreate) throw illegalConstructor();
    this.#dir = dir;
    this.#name = name;
    this.path = path.join(dir, name);
    this.#fd = fd;
    this.#nativeFd = nativeFd;
  }

  /** The descriptor that holds the lock (O_CLOEXEC; do not close it), or -1 once released. */
  get fd(): number {
    return this.#fd;
  }

  /**
   * Removes the entry, then drops the lock. Idempotent: every call returns the same promise.
   * An entry that is already gone is not an error; one whose name now names another inode is
   * left alone (rejects with `ESTALE`); the lock is dropped in every case.
   */
  release(): Promise<void> {
    if (this.#released === null) {
      const fd = this.#fd;
      this.#fd = -1;
      this.#released = removeAndClose(this.#dir, this.#name, fd, this.#nativeFd, this.release);
    }
    return this.#released;
  }

  /** `release()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}
