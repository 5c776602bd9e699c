/**
 * SPEC Layer 2: a pidfd on any process, from {@link openProcess}.
 * @module
 */
import { binding, type NativeChildHandle } from '../binding';
import { errnoException } from '../errors';
import { validatePid } from '../validate';
import { validateSignal, type Signal } from '../signals';

const kInternal = Symbol('procpin.process.internal');
const ESRCH = -3;

/**
 * A pidfd on any process (not only our children), from {@link openProcess}: for supervisors
 * that watch pids they did not start. The pidfd refers to the process that had the pid when it
 * was opened and never to a later holder of the number.
 */
// ProcessHandles that keep the event loop alive are kept reachable here until their process exits
// or they are closed (the native exit callback deliberately does not hold them).
const refHeld = new Map<object, ProcessHandle>();

export class ProcessHandle {
  /** The pid it was opened on. */
  readonly pid: number;
  /** Resolves when the process exits (its pidfd polls readable). Never settles once closed first. */
  readonly exited: Promise<void>;
  #handle: NativeChildHandle;
  #closed = false;
  readonly #key = {};

  /** @internal Made by {@link openProcess}. */
  constructor(token: typeof kInternal, pid: number) {
    if (token !== kInternal) throw new TypeError('Illegal constructor: use openProcess()');
    let resolve!: () => void;
    this.exited = new Promise<void>((r) => (resolve = r));
    // The native side holds the exit callback strongly until it runs, so the callback must not
    // hold this handle: an unref'd handle that is dropped is then collected and its pidfd closed.
    // A ref'd one is kept reachable (refHeld) until the process exits or the handle is closed, so
    // that someone awaiting only `exited` still sees it settle.
    const key = this.#key;
    const h = binding.openProcess(pid, () => {
      refHeld.delete(key);
      resolve();
    });
    if (typeof h === 'number') throw errnoException(h, 'pidfd_open', { pid }, openProcess);
    this.pid = pid;
    this.#handle = h;
    refHeld.set(key, this);
  }

  /** The pidfd, or -1 once closed. */
  get pidfd(): number {
    return this.#handle.pidfd();
  }

  /**
   * Sends `signal` (default `'SIGTERM'`; 0 probes) through the pidfd. `false`, sending nothing,
   * once the process has exited or the handle is closed.
   */
  kill(signal: Signal | 0 = 'SIGTERM'): boolean {
    const sig = validateSignal(signal, 'signal', this.kill, true);
    if (this.#closed || this.#handle.hasExited()) return false;
    const r = this.#handle.kill(sig);
    if (r === 0) return true;
    if (r === ESRCH) return false;
    throw errnoException(r, 'pidfd_send_signal', { pid: this.pid }, this.kill);
  }

  /** Lets the event loop exit while the process runs. */
  unref(): this {
    this.#handle.unref();
    refHeld.delete(this.#key);
    return this;
  }

  /** Undoes {@link ProcessHandle.unref} (a handle keeps the event loop alive by default). */
  ref(): this {
    this.#handle.ref();
    if (!this.#closed && !this.#handle.hasExited()) refHeld.set(this.#key, this);
    return this;
  }

  /** Closes the pidfd. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    refHeld.delete(this.#key);
    this.#handle.close();
  }

  /** {@link ProcessHandle.close}. */
  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * Opens a pidfd on process `pid` (`pidfd_open`). Throws `ESRCH` when there is none, and
 * `ENOSYS` on a kernel without pidfds (< 5.3): a bare pid is never watched, since it could be
 * reused.
 */
export function openProcess(pid: number): ProcessHandle {
  validatePid(pid, 'pid', openProcess);
  return new ProcessHandle(kInternal, pid);
}
