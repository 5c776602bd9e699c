/**
 * SPEC Layer 3a "Containment: contain" and Layer 3b `sweepCgroups`: groups the kernel holds.
 *
 * - `'pidns'`: the command runs under `procpin-init` in a new pid namespace (and mount
 *   namespace; a user namespace too when unprivileged). The group's `pid` is procpin-init's
 *   (procpin's direct child); a signal to the group goes to it, and it passes it on to every
 *   process of the namespace. When it dies (SIGKILL of the supervisor included: its
 *   parent-death signal) the kernel kills the whole namespace.
 * - `'cgroup'`: the command joins a new cgroup v2 directory before its first instruction;
 *   cleanup signals every process of the cgroup, ends with `cgroup.kill`, and reads emptiness
 *   from `cgroup.events`. The directory's name carries the supervisor's pid and start time, so
 *   that {@link sweepCgroups} can end and remove those of dead supervisors.
 * @module
 */
import * as diagnostics from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { binding, initExecutablePath } from '../binding';
import { Child, spawnRewritten, type SpawnOptions, type SpawnSpec } from '../child/child';
import { codedError, ERRNO, errnoException } from '../errors';
import { SIGNALS } from '../signals';
import type { ScanResult, SendResult } from '../group/logic';
import type { SweepEntry, SweepReport } from '../sweep/sweep';
import { invalidArgValue } from '../validate';

const { SIGKILL } = SIGNALS;
const { ESRCH, EPERM } = ERRNO;
const STDIO_PIPE = -1;

/** What `contain` asks for. */
export type ContainMode = 'pidns' | 'cgroup' | 'auto';
/** What holds a group: a pid namespace, a cgroup, or only its process group. */
export type Containment = 'pidns' | 'cgroup' | 'group';

/** @internal */
export function validateContain(value: unknown, name: string, caller: (...a: never[]) => unknown): ContainMode | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'pidns' || value === 'cgroup' || value === 'auto') return value;
  throw invalidArgValue(name, value, "must be 'pidns', 'cgroup' or 'auto'", caller);
}

/** @internal What a containment changes in a group's cleanup (see ./group). */
export interface Holder {
  readonly kind: Containment;
  /** Why a stronger one was not used (auto), for `--verbose`. */
  readonly fallback: string[];
  /** Replaces the process group's signal; `base` is that signal. */
  signal(sig: number, base: (sig: number) => SendResult): SendResult;
  /** Replaces the members scan (called once the leader exited). */
  members(base: (limit: number) => ScanResult | Promise<ScanResult>): ScanResult | Promise<ScanResult>;
  /** After the leader was reaped; `closed` waits for it. Never rejects. */
  release(): Promise<void>;
}

function unavailable(mode: string, reason: string, caller: (...a: never[]) => unknown): Error {
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

// ---------------------------------------------------------------------------------------------
// pidns

let pidnsRefused: string | null = null;

function readText(p: string): string | null {
  try {
    return fs.readFileSync(p, 'latin1');
  } catch {
    return null;
  }
}

/** Why `contain: 'pidns'` cannot work here, as far as can be known without trying; or null. */
function pidnsPrecheck(): string | null {
  if (pidnsRefused !== null) return pidnsRefused;
  if (initExecutablePath() === null) return 'procpin-init was not built next to the addon';
  if (process.geteuid?.() !== 0 && readText('/proc/sys/user/max_user_namespaces')?.trim() === '0') {
    return 'user namespaces are disabled (user.max_user_namespaces is 0)';
  }
  return null;
}

class ContainmentRefused extends Error {}

function spawnPidns(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  killSignal: number,
  grace: number,
): Child {
  const init = initExecutablePath() as string;
  const rewrite = (spec: SpawnSpec): SpawnSpec => {
    const errIndex = spec.stdio.length;
    return {
      ...spec,
      candidates: [init],
      argv: [
        init,
        String(errIndex),
        String(killSignal),
        String(grace),
        String(spec.candidates.length),
        ...spec.candidates,
        ...spec.argv,
      ],
      stdio: [...spec.stdio, STDIO_PIPE],
      internal: 1,
    };
  };
  const child = spawnRewritten(file, [...args], options, rewrite);
  // procpin-init writes here what failed before the command's execve; the command's execve
  // closes the last copy. Reading to the end is the spawn's own wait, as vfork is for a plain one.
  const [fd] = Child.takeInternalFds(child);
  let text = '';
  if (fd !== undefined && fd >= 0) {
    const buf = Buffer.alloc(128);
    try {
      for (;;) {
        let n: number;
        try {
          n = fs.readSync(fd, buf, 0, buf.length, null);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EAGAIN' || (err as NodeJS.ErrnoException).code === 'EINTR') continue;
          throw err;
        }
        if (n === 0) break;
        text += buf.toString('latin1', 0, n);
      }
    } finally {
      fs.closeSync(fd);
    }
  }
  const m = /^(\w+) (\d+)/.exec(text);
  if (m === null) return child;
  // Nothing of the command runs: procpin-init exits at once; reap it as soon as it does.
  child.close();
  const stage = m[1] as string;
  const errno = -Number(m[2]);
  if (stage === 'exec') {
    throw errnoException(errno, 'execve', { path: file, spawnargs: [...args] } as never, spawnGroupCaller);
  }
  const e = errnoException(errno, stage === 'mount' ? 'mount' : 'clone', {});
  throw new ContainmentRefused(
    stage === 'userns'
      ? `a user namespace was refused (${e.message})`
      : stage === 'mount'
        ? `the namespace's /proc could not be mounted (${e.message})`
        : `a pid namespace was refused (${e.message})`,
  );
}

// ---------------------------------------------------------------------------------------------
// cgroup v2

interface CgroupPlace {
  /** Mount point of cgroup2. */
  mount: string;
  /** Where procpin's cgroups go (absolute path). */
  base: string;
}

let placeCache: CgroupPlace | string | undefined;

// mountinfo escapes space, tab, newline and backslash as octal.
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** @internal The cgroup2 mount and the directory procpin's cgroups go in, or why there is none. */
export function cgroupPlace(): CgroupPlace | string {
  if (placeCache !== undefined) return placeCache;
  placeCache = findCgroupPlace();
  return placeCache;
}

function findCgroupPlace(): CgroupPlace | string {
  const mountinfo = readText('/proc/self/mountinfo');
  if (mountinfo === null) return '/proc/self/mountinfo cannot be read';
  let mount: string | null = null;
  let root = '/';
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right === undefined || left === undefined) continue;
    if (right.split(' ')[0] !== 'cgroup2') continue;
    const f = left.split(' ');
    mount = unescapeMount(f[4] ?? '');
    root = unescapeMount(f[3] ?? '/');
    break;
  }
  if (mount === null) return 'no cgroup2 file system is mounted';
  const self = readText('/proc/self/cgroup');
  const line = self?.split('\n').find((l) => l.startsWith('0::'));
  if (line === undefined) return 'this process is in no cgroup v2 (/proc/self/cgroup has no 0:: line)';
  let rel = line.slice(3);
  if (root !== '/' && rel.startsWith(root)) rel = rel.slice(root.length);
  if (rel.endsWith(' (deleted)')) return 'this process is in a removed cgroup';
  const own = path.join(mount, rel);
  let base: string;
  if (process.geteuid?.() === 0) {
    base = path.join(mount, 'procpin');
    try {
      fs.mkdirSync(base, { mode: 0o755 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        return `${base} cannot be made (${(err as Error).message})`;
      }
    }
  } else {
    // A subtree delegated to us: our own cgroup, owned by us, its cgroup.procs writable.
    base = own;
    try {
      const st = fs.statSync(own);
      if (st.uid !== process.geteuid?.()) return `${own} is not delegated to this user`;
      fs.accessSync(own, fs.constants.W_OK);
      fs.accessSync(path.join(own, 'cgroup.procs'), fs.constants.W_OK);
    } catch (err) {
      return `${own} is not writable (${(err as Error).message})`;
    }
  }
  return { mount, base };
}

/** Start time of a process (clock ticks since boot, /proc/PID/stat field 22), or null. */
function startTime(pid: number | 'self'): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field 22 is rest[19]. A zombie is a dead supervisor.
  if (rest[0] === 'Z' || rest[0] === 'X') return null;
  return rest[19] ?? null;
}

const CGROUP_NAME = /^procpin-([1-9][0-9]*)-([0-9]+)-([0-9]+)$/;
let cgroupSeq = 0;
let selfStart: string | null | undefined;

function cgroupKill(dir: string): boolean {
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
      const cg = readText(`/proc/${pid}/cgroup`)?.split('\n').find((l) => l.startsWith('0::'));
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
      if (pidfd >= 0) fs.closeSync(pidfd);
    }
  }
  if (sent) return 'ok';
  if (refused) return 'EPERM';
  return cgroupPopulated(dir) === false ? 'ESRCH' : 'ok';
}

// Removes the cgroup once it is empty (its sub-cgroups first), waiting for cgroup.events to say
// `populated 0` (fs.watch: kernfs notifies a change of cgroup.events) for up to `ms`.
async function removeCgroup(dir: string, ms: number): Promise<boolean> {
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

function makeCgroup(): { dir: string; rel: string; procs: number } | string {
  const place = cgroupPlace();
  if (typeof place === 'string') return place;
  if (selfStart === undefined) selfStart = startTime('self');
  const name = `procpin-${process.pid}-${selfStart ?? 0}-${++cgroupSeq}`;
  const dir = path.join(place.base, name);
  try {
    fs.mkdirSync(dir, { mode: 0o755 });
  } catch (err) {
    return `${dir} cannot be made (${(err as Error).message})`;
  }
  try {
    const procs = fs.openSync(path.join(dir, 'cgroup.procs'), fs.constants.O_WRONLY);
    return { dir, rel: `/${path.relative(place.mount, dir)}`, procs };
  } catch (err) {
    rmdirTree(dir);
    return `${dir}/cgroup.procs cannot be opened (${(err as Error).message})`;
  }
}

let cgroupRefused: string | null = null;

// Cgroups of groups not yet released. A supervisor on its way out (process 'exit': no event loop
// is left) kills each (cgroup.kill) and removes it once cgroup.events says it is empty, waiting
// a bounded time: what the kernel has not emptied by then is left to a successor's sweep.
const liveCgroups = new Set<string>();
let cgroupExitHooked = false;
const EXIT_EMPTY_WAIT_MS = 1000;

function removeLiveCgroups(): void {
  const deadline = performance.now() + EXIT_EMPTY_WAIT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (const dir of liveCgroups) cgroupKill(dir);
  for (const dir of liveCgroups) {
    while (cgroupPopulated(dir) === true && performance.now() < deadline) Atomics.wait(pause, 0, 0, 1);
    if (cgroupPopulated(dir) === false) rmdirTree(dir);
  }
  liveCgroups.clear();
}

function spawnCgroup(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
): { child: Child; holder: Holder } {
  const cg = makeCgroup();
  if (typeof cg === 'string') throw new ContainmentRefused(cg);
  let child: Child;
  try {
    child = spawnRewritten(file, [...args], options, (spec) => ({ ...spec, cgroupProcs: cg.procs }));
  } catch (err) {
    rmdirTree(cg.dir);
    if ((err as { stage?: string }).stage === 'cgroup') {
      throw new ContainmentRefused(`the child could not join ${cg.dir} (${(err as Error).message})`);
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
      await removeCgroup(dir, 10_000);
      liveCgroups.delete(dir);
    },
  };
  liveCgroups.add(dir);
  if (!cgroupExitHooked) {
    cgroupExitHooked = true;
    process.on('exit', removeLiveCgroups);
  }
  return { child, holder };
}

// ---------------------------------------------------------------------------------------------

let spawnGroupCaller: (...a: never[]) => unknown = spawnContained;

/**
 * @internal Starts the leader of a contained group: the strongest available for `'auto'`, the
 * one asked for otherwise (ERR_PROCPIN_CONTAINMENT_UNAVAILABLE, nothing started, when it is not
 * available).
 */
export function spawnContained(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  mode: ContainMode,
  killSignal: number,
  grace: number,
  caller: (...a: never[]) => unknown,
): { child: Child; holder: Holder } {
  spawnGroupCaller = caller;
  const fallback: string[] = [];
  if (mode === 'pidns' || mode === 'auto') {
    let reason = pidnsPrecheck();
    if (reason === null && options.parentDeathSignal !== 'SIGKILL' && options.parentDeathSignal !== SIGKILL) {
      reason = 'the group has no parentDeathSignal SIGKILL, which ends the namespace with its supervisor';
    }
    if (reason === null) {
      try {
        const child = spawnPidns(file, args, options, killSignal, grace);
        return { child, holder: pidnsHolder(child, fallback) };
      } catch (err) {
        if (!(err instanceof ContainmentRefused)) throw err;
        reason = err.message;
        pidnsRefused = reason;
      }
    }
    if (mode === 'pidns') throw unavailable('pidns', reason, caller);
    fallback.push(`pidns: ${reason}`);
  }
  let reason = cgroupRefused;
  if (reason === null) {
    try {
      const r = spawnCgroup(file, args, options);
      (r.holder.fallback as string[]).push(...fallback);
      return r;
    } catch (err) {
      if (!(err instanceof ContainmentRefused)) throw err;
      reason = err.message;
      cgroupRefused = reason;
    }
  }
  if (mode === 'cgroup') throw unavailable('cgroup', reason, caller);
  fallback.push(`cgroup: ${reason}`);
  const child = spawnRewritten(file, [...args], options);
  return {
    child,
    holder: {
      kind: 'group',
      fallback,
      signal: (sig, base) => base(sig),
      members: (base) => base(1),
      release: () => Promise.resolve(),
    },
  };
}

// procpin-init's request for the group's final SIGKILL (SIGRTMAX), and how long it has to answer.
const KILL_ALL = 64;
const KILL_ALL_ANSWER_MS = 1000;

function pidnsHolder(child: Child, fallback: string[]): Holder {
  let backstop: NodeJS.Timeout | null = null;
  return {
    kind: 'pidns',
    fallback,
    // procpin-init passes it on to every process of the namespace. The group's SIGKILL is asked
    // of it (KILL_ALL): it SIGKILLs the namespace and then reports the command's own status, so a
    // command that died by killSignal is not reported as SIGKILLed for a member's sake. Should it
    // not answer (stopped, wedged), it gets the SIGKILL itself; its parent-death signal is the
    // backstop when the supervisor ends first.
    signal(sig) {
      if (sig !== SIGKILL) return child.kill(sig) ? 'ok' : 'ESRCH';
      if (!child.kill(KILL_ALL)) return 'ESRCH';
      if (backstop === null) {
        backstop = setTimeout(() => child.kill(SIGKILL), KILL_ALL_ANSWER_MS);
        backstop.unref();
        child.exited.then(
          () => clearTimeout(backstop ?? undefined),
          () => clearTimeout(backstop ?? undefined),
        );
      }
      return 'ok';
    },
    // procpin-init exits only once its namespace is empty (its pid 1's exit kills the rest).
    members() {
      return child.poll() === null ? 1 : 0;
    },
    release: () => Promise.resolve(),
  };
}

/** @internal Test hook: forget what was learned about availability. */
export function resetContainment(): void {
  pidnsRefused = null;
  cgroupRefused = null;
  placeCache = undefined;
}

// ---------------------------------------------------------------------------------------------
// sweepCgroups

/** Options of {@link sweepCgroups}. */
export interface SweepCgroupsOptions {
  /** Report what would be removed, change nothing. Default false. */
  dryRun?: boolean;
}

const sweepChannel = diagnostics.channel('procpin:sweep');

/**
 * The successor's side of `contain: 'cgroup'`: every cgroup procpin made for a supervisor that
 * is dead now (its pid names no live process, or one that started at another time) is killed
 * (`cgroup.kill`) and removed; a live supervisor's are kept (`reason: 'alive'`).
 */
export async function sweepCgroups(options: SweepCgroupsOptions = {}): Promise<SweepReport> {
  if (options === null || typeof options !== 'object') {
    throw invalidArgValue('options', options, 'must be an object', sweepCgroups);
  }
  const dryRun = options.dryRun ?? false;
  if (typeof dryRun !== 'boolean') throw invalidArgValue('options.dryRun', dryRun, 'must be a boolean', sweepCgroups);
  const report: SweepReport = { removed: [], kept: [] };
  const place = cgroupPlace();
  if (typeof place === 'string') {
    report.error = unavailable("cgroup", place, sweepCgroups) as never;
    return report;
  }
  let names: string[];
  try {
    names = fs.readdirSync(place.base);
  } catch (err) {
    report.error = err as never;
    return report;
  }
  for (const name of names) {
    const m = CGROUP_NAME.exec(name);
    if (m === null) continue;
    const pid = Number(m[1]);
    const dir = path.join(place.base, name);
    const entry: SweepEntry = { name, pid };
    const start = startTime(pid);
    if (start !== null && start === m[2]) {
      entry.reason = 'alive';
      report.kept.push(entry);
    } else if (dryRun) {
      report.removed.push(entry);
    } else {
      cgroupKill(dir);
      if (await removeCgroup(dir, 5000)) {
        report.removed.push(entry);
      } else {
        entry.reason = 'error';
        report.kept.push(entry);
      }
    }
    if (sweepChannel.hasSubscribers) {
      const action = report.kept.includes(entry) ? 'kept' : 'removed';
      sweepChannel.publish({ dir: place.base, name, pid, action, reason: entry.reason });
    }
  }
  return report;
}
