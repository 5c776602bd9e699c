/**
 * SPEC Layer 3b `sweepCgroups`: the successor's side of `contain: 'cgroup'`.
 *
 * A cgroup's name records its supervisor: pid, start time and pid namespace (see
 * `CGROUP_NAME` in ./cgroup). The pid is a number of that namespace; this module decides, from what
 * this process can see, whether that supervisor is alive, dead, or beyond its view.
 * @module
 */
import * as diagnostics from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SweepEntry, SweepReport } from '../sweep/sweep';
import { invalidArgValue, readOptions } from '../validate';
import {
  cgroupKill,
  cgroupOwner,
  nsInode,
  removeCgroup,
  startTime,
  type CgroupOwner,
} from './cgroup';
import { cgroupPlace } from './cgroup-place';
import { readText, unavailable } from './common';

/** Options of {@link sweepCgroups}. */
export interface SweepCgroupsOptions {
  /** Report what would be removed, change nothing. Default false. */
  dryRun?: boolean;
}

const sweepChannel = diagnostics.channel('procpin:sweep');

// The inode of the initial pid namespace (the kernel's PROC_PID_INIT_INO, fixed since Linux 3.8).
// A /proc of that namespace shows every process of the machine.
const INIT_PIDNS_INO = 0xeffffffc;

/** One live process as the scan saw it. */
interface Seen {
  /** Its pid in its own pid namespace (the last of NSpid). */
  pid: number;
  ns: number;
  start: string;
  /** Its start time is read on this process's clock (the same time namespace). */
  sameClock: boolean;
}

/** Every live process this /proc shows, and whether each could be read whole. */
interface Scan {
  seen: Seen[];
  namespaces: Set<number>;
  /** The pid namespace this /proc shows, or null when no process said. */
  procNs: number | null;
  complete: boolean;
}

type Verdict = 'alive' | 'dead' | 'namespace';

/** What this sweeper sees of processes: read once per sweep, the /proc scan only when needed. */
class View {
  readonly ownNs: number | null;
  /** /proc is this pid namespace's own: /proc/N is the process that has pid N here. */
  readonly procOurs: boolean;
  readonly timeNs: number | string;
  private scanned: Scan | undefined;

  constructor() {
    const own = nsInode('self', 'pid');
    this.ownNs = typeof own === 'number' ? own : null;
    let selfLink: string | null;
    try {
      selfLink = fs.readlinkSync('/proc/self');
    } catch {
      selfLink = null;
    }
    this.procOurs = this.ownNs !== null && selfLink === String(process.pid);
    this.timeNs = nsInode('self', 'time');
  }

  /** Whether `pid` (a number of /proc's namespace) runs on this process's clock. */
  private sameClock(pid: number): boolean {
    const t = nsInode(pid, 'time');
    // No time namespaces in this kernel: one clock for all.
    return t === this.timeNs || (t === 'ENOENT' && this.timeNs === 'ENOENT');
  }

  /**
   * Whether the supervisor `o` lives. Entries of this pid namespace are judged by pid and start
   * time; others by a scan of /proc (a namespace below this one is in view, each process with its
   * pid there, NSpid); dead only when the scan proves it: every process of that namespace was in
   * view (or every process of the machine) and none is the supervisor.
   */
  judge(o: CgroupOwner): Verdict {
    if (o.ns !== null && o.ns === this.ownNs && this.procOurs) {
      const start = startTime(o.pid);
      if (start === o.start) return 'alive';
      // Its pid is free, a zombie's, or another process's on the same clock: the supervisor is dead.
      if (start === null || this.sameClock(o.pid)) return 'dead';
      return 'namespace';
    }
    const scan = this.scan();
    const here = scan.seen.filter((p) => p.pid === o.pid && (o.ns === null || p.ns === o.ns));
    if (here.some((p) => p.start === o.start)) return 'alive';
    // A process with its pid there on another clock may be the supervisor: its start reads otherwise.
    if (!scan.complete || here.some((p) => !p.sameClock)) return 'namespace';
    if (o.ns !== null && scan.namespaces.has(o.ns)) return 'dead';
    if (scan.procNs === INIT_PIDNS_INO) return 'dead';
    return 'namespace';
  }

  private scan(): Scan {
    if (this.scanned !== undefined) return this.scanned;
    const scan: Scan = {
      seen: [],
      namespaces: new Set(),
      procNs: this.procOurs ? this.ownNs : null,
      complete: true,
    };
    this.scanned = scan;
    let names: string[];
    try {
      names = fs.readdirSync('/proc');
    } catch {
      scan.complete = false;
      return scan;
    }
    // NSpid lists a process's pid in each namespace from /proc's down to its own: one number is a
    // process of /proc's namespace, whose ns link (pid 1's may be closed even to root) is not needed.
    const unnamed: Array<Omit<Seen, 'ns'>> = [];
    for (const name of names) {
      if (!/^[1-9][0-9]*$/.test(name)) continue;
      const start = startTime(Number(name));
      if (start === null) continue; // gone, or a zombie: not a live supervisor
      const status = readText(`/proc/${name}/status`);
      const nspid =
        status === null ? undefined : /^NSpid:[ \t]*(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      if (nspid === undefined) {
        // Gone meanwhile, or a kernel without NSpid (before 4.1): then this scan proves nothing.
        if (fs.existsSync(`/proc/${name}/stat`)) scan.complete = false;
        continue;
      }
      const pid = Number(nspid[nspid.length - 1]);
      const ns = nsInode(Number(name), 'pid');
      const sameClock = this.sameClock(Number(name));
      if (typeof ns === 'number') {
        if (nspid.length === 1) scan.procNs ??= ns;
        scan.namespaces.add(ns);
        scan.seen.push({ pid, ns, start, sameClock });
      } else if (nspid.length === 1) {
        unnamed.push({ pid, start, sameClock });
      } else if (ns !== 'ENOENT' || fs.existsSync(`/proc/${name}/stat`)) {
        scan.complete = false; // a process below that may not be read: its namespace is unknown
      }
    }
    if (unnamed.length > 0) {
      if (scan.procNs === null) scan.complete = false;
      else {
        scan.namespaces.add(scan.procNs);
        for (const p of unnamed) scan.seen.push({ ...p, ns: scan.procNs });
      }
    }
    return scan;
  }
}

/**
 * The successor's side of `contain: 'cgroup'`: every cgroup procpin made for a supervisor that
 * is dead now is killed (`cgroup.kill`) and removed; the others are kept, with their reason.
 *
 * A cgroup's name records its supervisor's pid, start time and pid namespace. The sweep judges:
 * - a supervisor of its own pid namespace by pid and start time: alive (`reason: 'alive'`) when
 *   a process with that pid started then, dead when the pid is free, a zombie's, or another
 *   process's (a number that was reused);
 * - a supervisor of another pid namespace through `/proc` (a namespace below this one is in
 *   view, with each process's pid there): alive when it is found; dead only when that is proven:
 *   the namespace is in view (or this is the initial namespace, which sees every process) and
 *   nothing in it is the supervisor. Otherwise (a sweeper in a container, a sandbox under
 *   `unshare --pid`) it is kept, `reason: 'namespace'`;
 * - a name of an earlier procpin (no namespace in it) as alive when any process in view has its
 *   pid and start time, as dead only from the initial namespace; otherwise `'namespace'`.
 * A doubt (a process it may not read, a process on another clock: a time namespace) keeps the
 * entry. A cgroup whose members do not die in 5 s is kept with `reason: 'error'`.
 */
export async function sweepCgroups(options?: SweepCgroupsOptions): Promise<SweepReport> {
  // Only the options given are read: never a key polluted onto Object.prototype.
  const opts = readOptions<SweepCgroupsOptions>(options, 'options', ['dryRun'], sweepCgroups);
  const dryRun = opts.dryRun ?? false;
  if (typeof dryRun !== 'boolean')
    throw invalidArgValue('options.dryRun', dryRun, 'must be a boolean', sweepCgroups);
  const report: SweepReport = { removed: [], kept: [] };
  const place = cgroupPlace();
  if (typeof place === 'string') {
    report.error = unavailable('cgroup', place, sweepCgroups) as never;
    return report;
  }
  let names: string[];
  try {
    names = fs.readdirSync(place.base);
  } catch (err) {
    report.error = err as never;
    return report;
  }
  // Read after the directory: a supervisor of a listed cgroup existed before this view was taken.
  const view = new View();
  for (const name of names) {
    const owner = cgroupOwner(name);
    if (owner === null) continue;
    const { pid } = owner;
    const dir = path.join(place.base, name);
    const entry: SweepEntry = { name, pid };
    const verdict = view.judge(owner);
    if (verdict !== 'dead') {
      entry.reason = verdict;
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
      sweepChannel.publish({
        dir: place.base,
        name,
        pid,
        action,
        reason: entry.reason,
        ...(dryRun ? { dryRun: true } : {}),
      });
    }
  }
  return report;
}
