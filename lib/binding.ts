/**
 * The typed native boundary: exactly what the addon exports, loaded once. Native functions
 * return a negative errno instead of throwing; {@link ./errors} turns that into an Error.
 * @internal
 * @module
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

/** A raw `siginfo_t` as the addon reports it. */
export interface RawWaitInfo {
  pid: number;
  uid: number;
  code: number;
  status: number;
}

export interface NativeConstants {
  readonly P_ALL: number;
  readonly P_PID: number;
  readonly P_PGID: number;
  readonly P_PIDFD: number;
  readonly WEXITED: number;
  readonly WSTOPPED: number;
  readonly WCONTINUED: number;
  readonly WNOHANG: number;
  readonly WNOWAIT: number;
  readonly __WNOTHREAD: number;
  readonly __WALL: number;
  readonly __WCLONE: number;
  readonly CLD_EXITED: number;
  readonly CLD_KILLED: number;
  readonly CLD_DUMPED: number;
  readonly CLD_TRAPPED: number;
  readonly CLD_STOPPED: number;
  readonly CLD_CONTINUED: number;
  readonly PIDFD_NONBLOCK: number;
  readonly PIDFD_SIGNAL_THREAD: number;
  readonly PIDFD_SIGNAL_THREAD_GROUP: number;
  readonly PIDFD_SIGNAL_PROCESS_GROUP: number;
  readonly PIDFD_SELF_THREAD: number;
  readonly PIDFD_SELF_THREAD_GROUP: number;
  readonly CLOSE_RANGE_UNSHARE: number;
  readonly CLOSE_RANGE_CLOEXEC: number;
  readonly LOCK_SH: number;
  readonly LOCK_EX: number;
  readonly LOCK_UN: number;
  readonly LOCK_NB: number;
}

/**
 * A descriptor the addon made, held for JavaScript (native/held_fd.cc): closed exactly once, by
 * close(), garbage collection or the end of its environment (a Worker's teardown runs no
 * JavaScript). Non-blocking.
 */
export interface NativeHeldFd {
  /** At most `max` bytes (an empty Buffer at end of file), null when none came within `ms`, or -errno. */
  read(max: number, ms: number): Buffer | null | number;
  /** 0 the first time, -EBADF after. */
  close(): number;
  /** As close(), the close(2) itself made by a thread of the addon's. */
  closeOffLoop(): number;
}

/** The native side of a Child or ProcessHandle (native/child/). */
export interface NativeChildHandle {
  /** The pidfd, -1 when none (old kernel) or after reap/close. */
  pidfd(): number;
  /** WEXITED | WNOHANG | WNOWAIT look: info, null while running, or -errno. */
  poll(): RawWaitInfo | null | number;
  /**
   * WEXITED | WNOHANG reap: info, null while running, or -errno. The pidfd is closed after.
   * `known`: the caller has the info from the exit already; 0 instead of it.
   */
  reap(known?: boolean): RawWaitInfo | null | number;
  /** 0 or -errno (-ESRCH once reaped). */
  kill(signal: number): number;
  /** openProcess: whether the pidfd polls readable. */
  hasExited(): boolean;
  ref(): void;
  unref(): void;
  /** Child: info when it reaped now, null when left to reap at exit; undefined otherwise. */
  close(): RawWaitInfo | null | undefined | number;
  /**
   * A signal to the group this leader leads: through the private pidfd with
   * PIDFD_SIGNAL_PROCESS_GROUP when `pidfdGroup` (bound to the group, also after a loss); else, or
   * where the kernel refuses the flag, `kill(-pgid)` only while the leader is provably unreaped.
   * 0, -ESRCH (gone, or no longer ours), -EPERM (a member refused) or another -errno.
   */
  signalGroup(signal: number, pidfdGroup: boolean): number;
  /** 1 while the unreaped leader is in the group it leads, 0 once it left it, or -errno. */
  inGroup(): number;
  /** SIGKILL if running, wait up to `ms`, reap: info, null when not exited in time, or -errno. */
  killAndReap(ms: number): RawWaitInfo | null | number;
}

export interface NativeSpawned {
  handle: NativeChildHandle;
  pid: number;
  /** The parent's end per child descriptor ('pipe' entries), -1 elsewhere. */
  fds: number[];
}

/** The arguments every spawn takes first (see NativeBinding.spawn). */
type SpawnHead = [
  candidates: string[],
  argv: string[],
  /** The variables (`NAME=value`) joined by NUL. */
  env: string,
  cwd: string | null,
  stdio: number[],
  group: number,
  pdeathsig: number,
  closeFds: boolean,
  onExit: (code: number, status: number, pid: number, uid: number, reaped: boolean) => void,
];

export interface NativeSpawnFailure {
  errno: number;
  stage: string;
}

/** One directory's sweep as the addon reports it: parallel arrays, one slot per candidate. */
export interface RawSweepReport {
  /** 0, or -errno when the directory itself could not be read. */
  errno: number;
  syscall?: string;
  names: (string | Buffer)[];
  pids: Int32Array;
  outcomes: Uint8Array;
  errnos: Int32Array;
  syscalls: (string | undefined)[];
}

/** The zombies a group's last scan saw (native/scan.cc), held for its next scan. */
export interface ScanMemory {
  readonly __scanMemory: never;
}

/** The addon's exports. Every `number` result below 0 is `-errno`. */
export interface NativeBinding {
  readonly constants: NativeConstants;
  // Layer 1 (native/primitives.cc)
  pidfdOpen(pid: number, flags: number): number;
  pidfdSendSignal(pidfd: number, signal: number, flags: number): number;
  waitid(idtype: number, id: number, options: number): RawWaitInfo | null | number;
  closeRange(first: number, last: number, flags: number): number;
  flock(fd: number, operation: number): number;
  /** close(2) of a descriptor the addon made (fs closes only what fs opened: Workers track it). */
  closeFd(fd: number): number;
  /** Takes a descriptor the addon made over (native/held_fd.cc), or -errno. */
  holdFd(fd: number): NativeHeldFd | number;
  /** open(path, O_RDONLY | O_CLOEXEC), held (native/held_fd.cc), or -errno. */
  openHeld(path: string): NativeHeldFd | number;
  setPdeathsig(signal: number): number;
  getPdeathsig(): number;
  setChildSubreaper(on: boolean): number;
  getChildSubreaper(): number;
  sigchldIgnored(): number;
  hasPidfdGroupSignal(): boolean;
  strerror(errno: number): string;
  /**
   * `/proc/PID/stat` (native/core/proc.cc): `[state, ppid, pgid, session, startTime]`, or -errno
   * (-ESRCH: no such process; -EXDEV: `/proc` is another pid namespace's).
   */
  procStat(pid: number): [string, number, number, number, number] | number;
  // Layer 1 (native/flock_wait.cc). flockWait returns the wait's id (> 0), 0 when granted at
  // once (no callback then), -EALREADY when a wait is pending on the same open file description,
  // or -errno when it could not start; the callback later gets 0 (locked), -ECANCELED
  // (flockCancel came first; no lock is left taken) or -errno. flockCancel is true while the
  // result is still to come.
  flockWait(fd: number, operation: number, callback: (result: number) => void): number;
  flockCancel(id: number): boolean;

  // Layer 2 (native/child/): spawn, the pidfd exit watcher.
  /**
   * Starts a child. `stdio[i]` is -1 (pipe), -2 (ignore), -3 (close) or a parent descriptor.
   * `group` 0 new, 1 session, 2 inherit. `onExit(code | -errno, status, pid, uid, reaped)` is
   * called once, when the exit is seen: the siginfo's `si_code` (> 0) and fields, or a negative
   * errno (the rest 0) when the status was lost. The child is not reaped unless `reaped`.
   * `cgroupProcs` a descriptor of a cgroup's cgroup.procs, or -1; `creds` [uid, gid], -1 =
   * unchanged; `endKill` below.
   */
  spawn(
    ...args: [
      ...SpawnHead,
      cgroupProcs?: number,
      creds?: [number, number],
      /**
       * A process group's leader: armed in the end-kill table before spawn returns (1: with the
       * group signal through its pidfd, 0: without it; -1 or absent: not a leader).
       */
      endKill?: number,
    ]
  ): NativeSpawned | NativeSpawnFailure | number;
  /**
   * The same with `out`, an Int32Array of at least 1 + stdio.length: a started child's handle
   * alone, its pid in `out[0]` and the parent's descriptors in `out[1...]`.
   */
  spawn(
    ...args: [
      ...SpawnHead,
      cgroupProcs: number,
      creds: [number, number],
      endKill: number,
      out: Int32Array,
    ]
  ): NativeChildHandle | NativeSpawnFailure | number;
  /** A pidfd watch on any process; `onExit(0)` when it exits. */
  openProcess(pid: number, onExit: (result: number) => void): NativeChildHandle | number;
  /**
   * Subreaper / PID 1: reaps this process's zombie children in group `pgid` except `leader`;
   * the number of such children still alive, or -errno.
   */
  reapGroupOrphans(pgid: number, leader: number): number;

  // The supervisor's end (native/endkill.cc).
  /** SIGKILL to every entry of the end-kill table, now. */
  endKillAll(): void;
  endKillRehook(): void;
  /** Entries in the table. */
  endKillCount(): number;
  /**
   * A cgroup.kill descriptor written "1" when this environment or the process ends, and the
   * cgroup's directory, removed once emptied when this environment ends: slot or -errno.
   */
  endKillCgroup(fd: number, dir?: string): number;
  endKillRemove(slot: number): void;

  // Layer 3b (native/sweep.cc): the per-entry sweep work.
  /** Sweeps one directory off the event loop. `flags`: `sweepFlags` bits. */
  sweepDirectory(dir: string, prefix: string, flags: number): Promise<RawSweepReport>;
  /** Creates `dir/name` exclusively, locked (LOCK_EX, O_CLOEXEC): the fd, or [-errno, syscall]. */
  createLocked(
    dir: string,
    name: string,
    directory: boolean,
    mode: number,
  ): Promise<number | [number, string]>;
  /** Removes `dir/name` if it is still the inode open as `fd`; then closes fd if `closeAfter`. */
  removeHeld(
    dir: string,
    name: string,
    fd: number,
    closeAfter: boolean,
  ): Promise<0 | [number, string]>;
  /** Outcome names indexed by the codes in `RawSweepReport.outcomes` (0 = removed). */
  readonly sweepOutcomes: readonly string[];
  readonly sweepFlags: { readonly DRY_RUN: number; readonly LOCK_AUTHORITY: number };

  // Command line (native/tty.cc): terminal job control. Results below 0 are -errno.
  ttyGetForeground(fd: number): number;
  ttySetForeground(fd: number, pgid: number): number;
  ttyGetAttr(fd: number): Buffer | number;
  ttySetAttr(fd: number, termios: Buffer): number;
  getpgrp(): number;

  // Layer 3a (native/scan.cc): the advisory scan of a group's members.
  /** The zombie memory of one group's successive scans (an opaque handle). */
  createScanMemory(): ScanMemory;
  /**
   * Live (non-zombie) processes whose pgid is `pgid`, counted up to `limit` (>= 1), on libuv's
   * threadpool: `[count, first live member found or 0]`, or `[-errno, 0]` when `/proc` cannot
   * be read. With `memory`, zombies the previous scan saw are not read again.
   */
  scanGroup(pgid: number, limit: number, memory?: ScanMemory): Promise<[number, number]>;
  /** Whether `pid` is a live member of `pgid`: 1, 0, or -errno. Microseconds. */
  groupMemberLive(pgid: number, pid: number): number;
}

/**
 * What the test build adds (scripts/build-test.sh, PROCPIN_TEST_HOOKS); the production addon,
 * built and prebuilt, has none of it.
 */
export interface NativeTestHooks {
  /** close_range's fallback loop alone, to compare it with the syscall. */
  closeRangeLoop(first: number, last: number, flags: number): number;
  /** Test injection: at `point`, swap entry `name` for a symlink to `target`. No arguments: off. */
  sweepTestHook(point?: number, name?: string, target?: string): void;
  /** scanGroup on the calling thread (milliseconds). */
  scanGroupSync(pgid: number, limit: number, memory?: ScanMemory): [number, number];
  /**
   * Test injection: with an errno (non-zero), every scan and member look fails with it; with
   * `statOnly`, liveness is read from `/proc/PID/stat` alone (as without `pidfd_open`). No
   * arguments: off.
   */
  scanTestHook(errno?: number, statOnly?: boolean): void;
}

function load(): NativeBinding {
  // PROCPIN_BINDING names a specific build (the cmake-js, sanitizer or test build, in tests).
  const explicit = process.env['PROCPIN_BINDING'];
  if (explicit) return require(path.resolve(explicit)) as NativeBinding;
  const nodeGypBuild = require('node-gyp-build') as (dir: string) => unknown;
  // A bundler that inlined this file moved it away from the package, and so from the addon.
  const dir = typeof __dirname === 'string' ? path.join(__dirname, '..') : '';
  if (!dir || !existsSync(path.join(dir, 'binding.gyp'))) {
    const err = new Error(
      `procpin: its native addon is not beside its JavaScript (${dir || 'an ES module bundle'}): ` +
        'procpin was bundled. Keep procpin external so it loads from node_modules (esbuild --external:procpin, ' +
        "webpack externals: { procpin: 'commonjs procpin' }, rollup external: ['procpin']) and ship node_modules/procpin " +
        'with the bundle.',
    ) as Error & { code: string };
    err.code = 'ERR_PROCPIN_ADDON_NOT_FOUND';
    throw err;
  }
  return nodeGypBuild(dir) as NativeBinding;
}

/** The loaded addon. */
export const binding: NativeBinding = load();

/**
 * The `procpin-init` executable of `contain: 'pidns'`, built with the addon and kept next to it
 * (build/Release, or prebuilds/linux-ARCH in the package); null when none is there.
 */
export function initExecutablePath(): string | null {
  if (initPath !== undefined) return initPath;
  const fs = require('node:fs') as typeof import('node:fs');
  const root = path.join(__dirname, '..');
  const explicit = process.env['PROCPIN_BINDING'];
  const dirs = [
    ...(explicit ? [path.dirname(path.resolve(explicit))] : []),
    path.join(root, 'build', 'Release'),
    path.join(root, 'prebuilds', `linux-${process.arch}`),
  ];
  initPath = null;
  for (const d of dirs) {
    const p = path.join(d, 'procpin-init');
    try {
      fs.accessSync(p, fs.constants.X_OK);
      initPath = p;
      break;
    } catch {
      // not here
    }
  }
  return initPath;
}
let initPath: string | null | undefined;
