/**
 * SPEC Layer 3b `sweepCgroups`: the successor's side of `contain: 'cgroup'`.
 * @module
 */
import * as diagnostics from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SweepEntry, SweepReport } from '../sweep/sweep';
import { invalidArgValue } from '../validate';
import { CGROUP_NAME, cgroupKill, cgroupPlace, removeCgroup, startTime } from './cgroup';
import { unavailable } from './common';

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
