/**
 * `contain: 'cgroup'`: the command joins a new cgroup v2 directory before its first instruction;
 * cleanup signals every process of the cgroup, ends with `cgroup.kill`, and reads emptiness from
 * `cgroup.events`. The directory's name carries the supervisor's pid, start time and pid
 * namespace ({@link CGROUP_NAME}), so that `sweepCgroups` (./sweep-cgroups) can end and remove
 * those of dead supervisors, and only those.
 * @module
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { binding } from '../binding';
import { Child, spawnRewritten, type SpawnOptions } from '../child/child';
import type { SendResult } from '../group/logic';
import { ERRNO, errnoException } from '../errors';
import { SIGNALS } from '../signals';
import { cgroupPlace, knownCgroupPlace } from './cgroup-place';
import { ContainmentRefused, readText, type Holder } from './common';

const { SIGKILL } = SIGNALS;
const { ESRCH, EPERM } = ERRNO;

/** @internal Start time of a process (clock ticks since boot, /proc/PID/stat field 22), or null. */
export function startTime(pid: number | 'self'): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field 22 is rest[19]. A zombie is a dead supervisor.
  if (rest[0] === 'Z' || rest[0] === 'X') return null;
  return rest[19] ?? null;
}

/** @internal The inode of a namespace link (`/proc/PID/ns/KIND`), or the error's code. */
export function nsInode(pid: number | 'self', kind: 'pid' | 'time'): number | string {
  try {
    return fs.statSync(`/proc/${pid}/ns/${kind}`).ino;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? 'EIO';
  }
}

/**
 * A cgroup's name: `procpin-PID-START-SEQ-nsINO`, the supervisor's pid and start time (as its own
 * pid namespace and /proc see them), a sequence number, and the inode of its pid namespace
 * (`/proc/self/ns/pid`). Without `-nsINO`: a name of an earlier procpin, or of a supervisor that
 * could not read its namespace; which namespace its pid belongs to is unknown. Numbers are
 * written without a leading zero; {@link cgroupOwner} also bounds them.
 */
export const CGROUP_NAME =
  /^procpin-([1-9][0-9]*)-(0|[1-9][0-9]*)-([1-9][0-9]*)(?:-ns([1-9][0-9]*))?$/;

/** A pid is a pid_t (as sweep's candidates): a larger number is no process's, in any namespace. */
const PID_LIMIT = 0x7fffffff;
/** A namespace's inode number is 32 bits (the kernel's proc inum). */
const NS_LIMIT = 0xffffffff;

/** @internal A cgroup name's supervisor: pid, start time, pid namespace (null: not in the name). */
export interface CgroupOwner {
  pid: number;
  start: string;
  ns: number | null;
}

/**
 * @internal The supervisor a procpin cgroup name records, or null for another name: one that no
 * procpin makes (a pid above a pid_t's range, an inode above 32 bits, a leading zero) is no
 * candidate of a sweep, so that every number reported is the name's own, exactly.
 */
export function cgroupOwner(name: string): CgroupOwner | null {
  const m = CGROUP_NAME.exec(name);
  if (m === null) return null;
  const pid = Number(m[1]);
  const ns = m[4] === undefined ? null : Number(m[4]);
  if (pid > PID_LIMIT || (ns !== null && ns > NS_LIMIT)) return null;
  return { pid, start: m[2] as string, ns };
}

let cgroupSeq = 0;
let self: CgroupOwner | undefined;

// This supervisor as its cgroups' names record it.
function selfOwner(): CgroupOwner {
  if (self === undefined) {
    const ns = nsInode('self', 'pid');
    self = {
      pid: process.pid,
      start: startTime('self') ?? '0',
      ns: typeof ns === 'number' ? ns : null,
    };
  }
  return self;
}

function isOwnName(name: string): boolean {
  const o = cgroupOwner(name);
  const me = selfOwner();
  return o !== null && o.pid === me.pid && o.start === me.start && o.ns === me.ns;
}

/** @internal Writes cgroup.kill: true when the kernel took it. */
export function cgroupKill(dir: string): boolean {
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1');
    return true;
  } catch {
    return false;
  }
}

/** @internal populated of cgroup.events: true, false, or null when unreadable. */
export function cgroupPopulated(dir: string): boolean | null {
  const ev = readText(path.join(dir, 'cgroup.events'));
  if (ev === null) return null;
  const m = /^populated (\d)/m.exec(ev);
  return m === null ? null : m[1] !== '0';
}

function cgroupPids(dir: string, out: number[] = []): number[] {
  const procs = readText(path.join(dir, 'cgroup.procs'));
  if (procs !== null) for (const l of procs.split('\n')) if (l !== '') out.push(Number(l));
  for (const sub of subdirs(dir)) cgroupPids(path.join(dir, sub), out);
  return out;
}

function subdirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return [];
  }
}

// Signals every process of the cgroup. A pid read from cgroup.procs is opened as a pidfd and
// its cgroup read again through /proc before the signal: a number that was reused meanwhile
// names a process elsewhere and is left alone.
function cgroupSignal(dir: string, rel: string, sig: number): SendResult {
  let sent = false;
  let refused = false;
  for (const pid of cgroupPids(dir)) {
    const pidfd = binding.pidfdOpen(pid, 0);
    if (pidfd < 0 && pidfd !== -ERRNO.ENOSYS) continue;
    try {
      const cg = readText(`/proc/${pid}/cgroup`)
        ?.split('\n')
        .find((l) => l.startsWith('0::'));
      if (cg === undefined || !(cg.slice(3) === rel || cg.slice(3).startsWith(`${rel}/`))) continue;
      let r: number;
      if (pidfd >= 0) {
        r = binding.pidfdSendSignal(pidfd, sig, 0);
      } else {
        try {
          process.kill(pid, sig);
          r = 0;
        } catch (err) {
          r = (err as NodeJS.ErrnoException).code === 'EPERM' ? -EPERM : -ESRCH;
        }
      }
      if (r === 0) sent = true;
      else if (r === -EPERM) refused = true;
    } finally {
      if (pidfd >= 0) binding.closeFd(pidfd);
    }
  }
  if (sent) return 'ok';
  if (refused) return 'EPERM';
  return cgroupPopulated(dir) === false ? 'ESRCH' : 'ok';
}

// @internal Removes the cgroup once it is empty (its sub-cgroups first), waiting for cgroup.events to say
// `populated 0` (fs.watch: kernfs notifies a change of cgroup.events) for up to `ms`.
export async function removeCgroup(dir: string, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    if (cgroupPopulated(dir) === false && rmdirTree(dir)) return true;
    if (!fs.existsSync(dir)) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await new Promise<void>((resolve) => {
      let watcher: fs.FSWatcher | null = null;
      const done = () => {
        clearTimeout(t);
        watcher?.close();
        resolve();
      };
      const t = setTimeout(done, Math.min(delay, left));
      try {
        watcher = fs.watch(path.join(dir, 'cgroup.events'), done);
        watcher.on('error', done);
      } catch {
        watcher = null;
      }
    });
  }
}

function rmdirTree(dir: string): boolean {
  for (const sub of subdirs(dir)) rmdirTree(path.join(dir, sub));
  try {
    fs.rmdirSync(dir);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT';
  }
}

interface NewCgroup {
  dir: string;
  rel: string;
  /** cgroup.procs, open for the child to write itself into; closed once it was spawned. */
  procs: number;
  /** cgroup.kill, open for the group's lifetime, and its end-kill table slot. */
  kill: number;
  slot: number;
}

function makeCgroup(): NewCgroup | string {
  const place = cgroupPlace();
  if (typeof place === 'string') return place;
  const me = selfOwner();
  let dir: string;
  // Each thread (a Worker) counts on its own: a name that another thread of this process took
  // already is passed over (mkdir is the atomic claim).
  for (;;) {
    const name = `procpin-${me.pid}-${me.start}-${++cgroupSeq}${me.ns === null ? '' : `-ns${me.ns}`}`;
    dir = path.join(place.base, name);
    try {
      fs.mkdirSync(dir, { mode: 0o755 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      return `${dir} cannot be made (${(err as Error).message})`;
    }
  }
  let procs = -1;
  let kill: number;
  try {
    procs = fs.openSync(path.join(dir, 'cgroup.procs'), fs.constants.O_WRONLY);
    kill = fs.openSync(path.join(dir, 'cgroup.kill'), fs.constants.O_WRONLY);
  } catch (err) {
    if (procs >= 0) fs.closeSync(procs);
    rmdirTree(dir);
    return `${dir}'s cgroup.procs and cgroup.kill cannot be opened (${(err as Error).message})`;
  }
  // Before anything joins it: however this Worker or the process ends (terminate(), exit from
  // anywhere, abort), the native end-kill table writes cgroup.kill, which reaches the members
  // that left the process group as well; at this environment's end it also removes the
  // directory once the kernel has emptied it (a Worker's JavaScript no longer runs then).
  const slot = binding.endKillCgroup(kill, dir);
  if (slot < 0) {
    fs.closeSync(procs);
    fs.closeSync(kill);
    rmdirTree(dir);
    throw errnoException(slot, 'spawn', {});
  }
  return { dir, rel: `/${path.relative(place.mount, dir)}`, procs, kill, slot };
}

function forgetCgroup(cg: NewCgroup): void {
  binding.endKillRemove(cg.slot);
  fs.closeSync(cg.kill);
}

// Cgroups of groups not yet released. A supervisor on its way out (process 'exit', or a signal
// it has no listener for: no event loop is left) kills each (cgroup.kill) and removes it once
// cgroup.events says it is empty, waiting a bounded time: what the kernel has not emptied by
// then is left to a successor's sweep. The main thread also removes those of its Workers that
// ended before it (their JavaScript could not): every cgroup named for this process.
const liveCgroups = new Set<string>();
let cgroupExitHooked = false;
const EXIT_EMPTY_WAIT_MS = 1000;

/** @internal Kills and removes this supervisor's cgroups: it is ending now. */
export function endCgroups(): void {
  const dirs = new Set(liveCgroups);
  const place = knownCgroupPlace();
  if (isMainThread && typeof place === 'object' && self !== undefined) {
    for (const name of subdirs(place.base))
      if (isOwnName(name)) dirs.add(path.join(place.base, name));
  }
  if (dirs.size === 0) return;
  const deadline = performance.now() + EXIT_EMPTY_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const dir of dirs) cgroupKill(dir);
  for (const dir of dirs) {
    while (cgroupPopulated(dir) === true && performance.now() < deadline)
      Atomics.wait(pause, 0, 0, 1);
    if (cgroupPopulated(dir) === false) rmdirTree(dir);
  }
  liveCgroups.clear();
}

/** @internal Starts the command in a new cgroup; throws {@link ContainmentRefused} when none can be had. */
export function spawnCgroup(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
): { child: Child; holder: Holder } {
  const cg = makeCgroup();
  if (typeof cg === 'string') throw new ContainmentRefused(cg);
  let child: Child;
  try {
    child = spawnRewritten(file, [...args], options, (spec) => ({
      ...spec,
      cgroupProcs: cg.procs,
    }));
  } catch (err) {
    forgetCgroup(cg);
    rmdirTree(cg.dir);
    if ((err as { stage?: string }).stage === 'cgroup') {
      throw new ContainmentRefused(
        `the child could not join ${cg.dir} (${(err as Error).message})`,
      );
    }
    throw err;
  } finally {
    fs.closeSync(cg.procs);
  }
  const { dir, rel } = cg;
  const holder: Holder = {
    kind: 'cgroup',
    fallback: [],
    signal(sig, base) {
      if (sig === SIGKILL) {
        // cgroup.kill reaches every process of the cgroup, also one forked a moment ago; the
        // process group's own SIGKILL too, while its leader is still ours.
        const killed = cgroupKill(dir);
        const r = base(sig);
        if (!killed && cgroupPopulated(dir) !== false) cgroupSignal(dir, rel, sig);
        return r === 'ok' || cgroupPopulated(dir) !== false ? 'ok' : r;
      }
      // The process group too, while its leader is ours: a member whose cgroup was changed (a
      // root command can write another cgroup's cgroup.procs) is still within its reach.
      const c = cgroupSignal(dir, rel, sig);
      const b = base(sig);
      if (c === 'ok' || b === 'ok') return 'ok';
      return c === 'EPERM' || b === 'EPERM' ? 'EPERM' : 'ESRCH';
    },
    members() {
      const p = cgroupPopulated(dir);
      return p === null ? 'unknown' : p ? 1 : 0;
    },
    async release() {
      // Not emptied in time: the table entry stays, and kills what is left when this ends.
      if (await removeCgroup(dir, 10_000)) forgetCgroup(cg);
      liveCgroups.delete(dir);
    },
  };
  liveCgroups.add(dir);
  if (!cgroupExitHooked) {
    cgroupExitHooked = true;
    process.on('exit', endCgroups);
  }
  return { child, holder };
}
