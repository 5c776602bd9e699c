/**
 * SPEC Layer 2: children the addon owns. `spawn` starts a program from the addon (clone with
 * CLONE_VM | CLONE_VFORK | CLONE_PIDFD, then execve), holds it through a pidfd, learns of its
 * exit without reaping it, and reaps only when told. `openProcess` holds any process by pidfd.
 * @module
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import { binding, type NativeChildHandle } from '../binding';
import { ERRNO, errnoException } from '../errors';
import { SIGNALS, validateSignal, type Signal } from '../signals';
import { spawn } from './spawn';
import { leaderRefusal, offerLeader, pidfdGroupSignal } from './leader';
import { handOverStreams, type SpawnSpec } from './spawn-options';
import { toWaitInfo, waitInfoOf, type WaitInfo } from '../waitinfo';
import { isFailure, lostError, notExited, openStream, ownOf, spawnOut } from './child-parts';

// What was in this module before it was split: importable from here as before.
export { prepareSpawn, readEnding, SPAWN_OPTIONS, spawnArguments } from './spawn-options';
export { readSpawnCall } from './spawn-call';
export type { SpawnOptions, SpawnRewrite, SpawnSpec, StdioEntry } from './spawn-options';
export { openProcess, ProcessHandle } from './process-handle';
export { spawn, spawnRewritten } from './spawn';

const kInternal = Symbol('procpin.internal');

const ECHILD = -ERRNO.ECHILD;
const ESRCH = -ERRNO.ESRCH;
const { SIGKILL } = SIGNALS;
const DISPOSE_WAIT_MS = 1000;

/**
 * A child started by {@link spawn}, held through its pidfd.
 *
 * Guarantees:
 * (a) the child's exit is learned without reaping it: after `exited` resolves it stays a zombie,
 *     so its pid, and the process group it leads, cannot be reissued until `reap()`;
 * (b) a signal is sent only while the child is unreaped: through the pidfd (which can never
 *     reach another process), or on kernels without pidfds by pid, which the unreaped child
 *     still owns; `kill()` returns `false` and sends nothing once the child has exited;
 * (c) the pidfd is closed exactly once: by `reap()`, `close()` or garbage collection;
 * (d) a Child that is closed or becomes unreachable never leaves a zombie behind: an exited
 *     child is reaped then, a running one as soon as it exits (without keeping the event loop
 *     alive);
 * (e) nothing here reaps another process: waits name this child's pid, never `-1`, and no
 *     SIGCHLD handler is installed, so `child_process` children are left alone.
 */
export class Child {
  /** The child's pid. Free for reuse by the kernel once {@link Child.reaped} is true. */
  readonly pid: number;
  /** The parent's end of the child's stdin when it is `'pipe'`, else null. */
  readonly stdin: Writable | null;
  /** The parent's end of the child's stdout when it is `'pipe'`, else null. */
  readonly stdout: Readable | null;
  /** The parent's end of the child's stderr when it is `'pipe'`, else null. */
  readonly stderr: Readable | null;
  /** Every descriptor's stream (`'pipe'` entries), else null, indexed by child descriptor. */
  readonly stdio: ReadonlyArray<Readable | Writable | Duplex | null>;
  /**
   * Resolves when the child exits (or is killed), **without reaping it**: the child stays a
   * zombie until {@link Child.reap}. Rejects with `ERR_PROCPIN_CHILD_LOST` if the exit status
   * was lost (something else in this process reaped the child, or SIGCHLD became ignored).
   */
  readonly exited: Promise<WaitInfo>;

  #handle: NativeChildHandle;
  #info: WaitInfo | null = null;
  #reaped = false;
  #closed = false;
  #lost: Error | null = null;
  // A process group's leader that its group holds: reap(), close() and dispose refuse (./leader).
  #held = false;
  #internalFds: number[] = [];
  #mapExit: ((info: WaitInfo) => WaitInfo) | null = null;
  #resolve!: (info: WaitInfo) => void;
  #reject!: (err: Error) => void;

  /** @internal Children are made by {@link spawn}; `asLeader`: claimable by a group (./leader). */
  constructor(token: typeof kInternal, spec: SpawnSpec, asLeader = false) {
    if (token !== kInternal) throw new TypeError('Illegal constructor: use spawn()');
    this.exited = new Promise<WaitInfo>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    const out = spawnOut(spec.stdio.length);
    const r = binding.spawn(
      spec.candidates,
      spec.argv,
      spec.env.join('\0'), // one string for the addon: one conversion, not one per variable
      spec.cwd,
      spec.stdio,
      spec.group,
      spec.pdeathsig,
      spec.closeFds,
      (code, status, pid, uid, reaped) => this.#onExit(code, status, pid, uid, reaped),
      ownOf(spec, 'cgroupProcs') ?? -1,
      [spec.uid, spec.gid],
      asLeader ? (pidfdGroupSignal ? 1 : 0) : -1,
      out,
    );
    if (typeof r === 'number') throw errnoException(r, 'spawn', { path: spec.file }, spawn);
    // Own keys only, here and below: a name polluted onto Object.prototype (`errno`, `internal`)
    // must not turn a started child into a failure nor take its streams away.
    if (isFailure(r)) {
      const syscall = ['chdir', 'execve', 'setuid', 'setgid'].includes(r.stage) ? r.stage : 'spawn';
      const path = r.stage === 'chdir' && spec.cwd !== null ? spec.cwd : spec.file;
      const err = errnoException(r.errno, syscall, { path, spawnargs: spec.args }, spawn);
      // Joining a cgroup (contain: 'cgroup') failed: containment tells that apart.
      if (r.stage === 'cgroup') {
        // Of no prototype, as codedError's: a polluted `get` makes no accessor of it.
        Object.defineProperty(err, 'stage', {
          __proto__: null,
          value: 'cgroup',
        } as PropertyDescriptor);
      }
      throw err;
    }
    // The pid and the parent's descriptors came in the out array (see spawnOut): read at once,
    // before any other code can spawn.
    this.pid = out[0] ?? -1;
    this.#handle = r;
    const fds: number[] = [];
    for (let i = 1; i <= spec.stdio.length; i++) fds.push(out[i] ?? -1);
    const streams: Array<Readable | Writable | Duplex | null> = [];
    const own = fds.length - (ownOf(spec, 'internal') ?? 0);
    this.#internalFds = fds.slice(own);
    try {
      for (let i = 0; i < own; i++) {
        const fd = fds[i] ?? -1;
        streams.push(fd < 0 ? null : openStream(fd, i));
      }
    } catch (err) {
      // The caller gets no Child, so none may be left behind: no descriptor, no process.
      for (const st of streams) st?.destroy();
      this.#internalFds = [];
      for (let i = streams.length; i < fds.length; i++) {
        const fd = fds[i] ?? -1;
        if (fd >= 0) binding.closeFd(fd);
      }
      this.#handle.kill(SIGKILL);
      this.#handle.close();
      throw err;
    }
    this.stdio = streams;
    this.stdin = (streams[0] as Writable | null) ?? null;
    this.stdout = (streams[1] as Readable | null) ?? null;
    this.stderr = (streams[2] as Readable | null) ?? null;
    if (asLeader) {
      offerLeader(this, {
        handle: this.#handle,
        hold: () => (this.#held = true),
        release: () => (this.#held = false),
        reap: (caller) => this.#reap(caller),
        close: () => this.close(),
        reaped: () => this.#reaped,
      });
    }
  }

  /** @internal The parent's ends of procpin's own stdio entries (SpawnSpec.internal); once. */
  static takeInternalFds(child: Child): number[] {
    const fds = child.#internalFds;
    child.#internalFds = [];
    return fds;
  }

  /** @internal How the first exit seen is reported (containment: the command's, for its init's). */
  static mapExit(child: Child, fn: (info: WaitInfo) => WaitInfo): void {
    child.#mapExit = fn;
  }

  /**
   * A pidfd of the child (O_CLOEXEC), or -1: on a kernel without pidfds, and after reap or close.
   * It is a duplicate of the one procpin watches and signals through, which stays private: closing
   * this one does not disturb procpin, and procpin never acts on a descriptor that got its number
   * later (it checks before it closes the duplicate, and makes a new one when it was closed).
   */
  get pidfd(): number {
    return this.#handle.pidfd();
  }

  /** True once the child was reaped: its pid is free and nothing more is sent to it. */
  get reaped(): boolean {
    return this.#reaped;
  }

  #onExit(code: number, status: number, pid: number, uid: number, reaped: boolean): void {
    if (code < 0) {
      this.#reaped = true;
      this.#lost =
        code === ECHILD ? lostError(this.pid) : errnoException(code, 'waitid', { pid: this.pid });
      this.#fail(this.#lost);
      return;
    }
    this.#settle(waitInfoOf(pid, uid, code, status), reaped);
  }

  // `exited` rejects. Given a handler first, here rather than at the spawn: a lost status must not
  // crash a process that never awaited, and an exit that is not lost (nearly every one) then
  // resolves a promise with no reaction of procpin's queued before the caller's continuation.
  #fail(err: Error): void {
    this.exited.catch(() => {});
    this.#reject(err);
  }

  #settle(info: WaitInfo, reaped: boolean): WaitInfo {
    if (!this.#info) this.#info = this.#mapExit === null ? info : this.#mapExit(info);
    if (reaped) {
      this.#reaped = true;
      // Nobody can read the child's stdin any more: close our end once the child is reaped (not
      // at its exit, where a write still in flight is owed its EPIPE). The output streams stay,
      // to be read to their end.
      if (this.stdin && !this.stdin.destroyed) this.stdin.destroy();
    }
    this.#resolve(this.#info);
    return this.#info;
  }

  /**
   * A `waitid(WEXITED | WNOHANG | WNOWAIT)` look: how the child ended, or `null` while it runs.
   * Never reaps. After {@link Child.reap} it returns what the reap reported.
   */
  poll(): WaitInfo | null {
    if (this.#reaped) {
      // Lost (reaped by someone else) stays lost, also when the exit had been read before.
      if (this.#info && !this.#lost) return this.#info;
      throw this.#lost ?? errnoException(ECHILD, 'waitid', { pid: this.pid }, this.poll);
    }
    const r = this.#handle.poll();
    if (r === null) return null;
    if (typeof r === 'number') {
      if (r === ECHILD) throw this.#markLost(this.poll);
      throw errnoException(r, 'waitid', { pid: this.pid }, this.poll);
    }
    return this.#settle(toWaitInfo(r), false);
  }

  #markLost(caller?: (...a: never[]) => unknown): Error {
    this.#reaped = true;
    this.#lost ??= lostError(this.pid, caller);
    this.#fail(this.#lost);
    return this.#lost;
  }

  /**
   * Sends `signal` (default `'SIGTERM'`; 0 probes) through the pidfd. Returns `true` when it
   * was sent to the running child; `false`, sending nothing, once the child has exited, was
   * reaped or this handle was closed. A zombie is never signalled, a reaped pid never touched.
   */
  kill(signal: Signal | 0 = 'SIGTERM'): boolean {
    const sig = validateSignal(signal, 'signal', this.kill, true);
    if (this.#reaped || this.#closed || this.#info) return false;
    const look = this.#handle.poll();
    if (look === ECHILD) {
      this.#markLost();
      return false;
    }
    if (look !== null && typeof look === 'object') {
      this.#settle(toWaitInfo(look), false);
      return false;
    }
    // Between the look and the signal the child can only become a zombie, which is still ours:
    // the signal then does nothing.
    const r = this.#handle.kill(sig);
    if (r === 0) return true;
    if (r === ESRCH) return false;
    throw errnoException(
      r,
      this.#handle.pidfd() >= 0 ? 'pidfd_send_signal' : 'kill',
      { pid: this.pid },
      this.kill,
    );
  }

  /**
   * Reaps the child (`waitid(WEXITED | WNOHANG)`): its pid is free afterwards, the pidfd is
   * closed, and `kill` sends nothing. Only once the child has exited (await {@link Child.exited});
   * throws `ERR_PROCPIN_NOT_EXITED` while it runs. Repeated calls return the same result.
   */
  reap(): WaitInfo {
    if (this.#held) throw leaderRefusal(this.reap);
    return this.#reap(this.reap);
  }

  #reap(caller: (...a: never[]) => unknown): WaitInfo {
    if (this.#reaped) {
      if (this.#info && !this.#lost) return this.#info;
      throw this.#lost ?? errnoException(ECHILD, 'waitid', { pid: this.pid }, caller);
    }
    // Once the exit was seen its info is known: the addon then only reaps (no object to build).
    const known = this.#info;
    const r = this.#handle.reap(known !== null);
    if (r === null) throw notExited(caller);
    if (typeof r === 'number') {
      if (r === 0 && known !== null) return this.#settle(known, true);
      if (r === ECHILD) throw this.#markLost(caller);
      throw errnoException(r, 'waitid', { pid: this.pid }, caller);
    }
    return this.#settle(toWaitInfo(r), true);
  }

  /** Lets the event loop exit while the child runs. Stdio pipes keep their own references. */
  unref(): this {
    this.#handle.unref();
    return this;
  }

  /** Undoes {@link Child.unref}: a running child keeps the event loop alive (the default). */
  ref(): this {
    this.#handle.ref();
    return this;
  }

  /**
   * Lets go of the child. An exited child is reaped now; a running one is left running, no
   * longer keeps the event loop alive, and is reaped the moment it exits (`exited` still
   * resolves). `kill` returns false afterwards. Stdio streams are not touched. Idempotent.
   */
  close(): void {
    if (this.#closed) return;
    if (this.#held) throw leaderRefusal(this.close);
    this.#closed = true;
    const r = this.#handle.close();
    if (r === null || r === undefined) return;
    if (typeof r === 'number') {
      this.#markLost();
      return;
    }
    this.#settle(toWaitInfo(r), true);
  }

  /**
   * Nothing outlives the `using` scope: a child that still runs is SIGKILLed, then reaped (a
   * wait of a few milliseconds at most: SIGKILL is not delayed but by the kernel; after a
   * second it is left to be reaped at its exit) and closed. An exited child is reaped and closed.
   */
  [Symbol.dispose](): void {
    if (this.#closed) return;
    if (this.#held) throw leaderRefusal(this.close);
    if (!this.#reaped) {
      const r = this.#handle.killAndReap(DISPOSE_WAIT_MS);
      if (r === ECHILD) this.#markLost();
      else if (r !== null && typeof r === 'object') this.#settle(toWaitInfo(r), true);
    }
    this.close();
  }
}

/** Starts what prepareSpawn (./spawn-options) validated. @internal */
export function startChild(spec: SpawnSpec): Child {
  const child = new Child(kInternal, spec);
  handOverStreams(spec.handedOver);
  return child;
}

/**
 * Starts a process group's leader: a Child that the group claims once (LeaderControl.claim in
 * ./leader) and then holds. Until claimed it is its spawner's, as any Child. @internal
 */
export function startLeader(spec: SpawnSpec): Child {
  const child = new Child(kInternal, spec, true);
  handOverStreams(spec.handedOver);
  return child;
}
