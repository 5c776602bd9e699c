/**
 * SPEC Layer 3b: dead-pid sweeping. Programs leave pid-named entries behind (scratch
 * directories, sockets, lock files) when a SIGKILL, an OOM kill or a closed terminal runs none
 * of their cleanup. The successor sweeps: whoever creates the next entry first removes every
 * entry whose owner is provably gone, and never one whose owner may live.
 *
 * ## What a sweep can and cannot promise across pid namespaces
 *
 * A pid in a name is a number in the pid namespace of whoever wrote it. Seen from another
 * namespace it means nothing: it may name no process here while its owner runs there (so the
 * pid check alone would call a live owner dead), or name some unrelated process here (so a dead
 * owner's entry looks alive and stays). Two witnesses do cross namespaces, because they live on
 * the inode, not on a number: a flock held on the entry (taken by `claim`, held on an
 * O_CLOEXEC descriptor for the owner's whole life), and a socket with a listener.
 *
 * - Within one pid namespace the default sweep is exact for entries that hold their lock or
 *   listen, and as good as the pid for entries that do neither (a pid reused by an unrelated
 *   process keeps a dead owner's entry, which is the safe mistake).
 * - Across namespaces (containers sharing a directory), an entry made by {@link claim} is never
 *   removed while its owner lives, because its lock is held; an entry made by a program that
 *   takes no lock and does not listen can be removed under a live owner in another namespace.
 *   Do not share such a directory across namespaces with programs that do not lock.
 * - When every entry under a prefix was made by {@link claim}, pass `authority: 'lock'`: the
 *   lock alone then decides, and an entry whose lock is free is dead whatever its pid says
 *   (also one whose pid names some live process here). Sockets carry no lock and are still
 *   judged by their pid and their listener.
 *
 * @module
 */
import * as dc from 'node:diagnostics_channel';
import * as path from 'node:path';
import { binding } from '../binding';
import { errnoException, type ProcpinSystemError } from '../errors';
import {
  invalidArgValue,
  readOptions,
  validateBoolean,
  validateCString,
  validateObject,
} from '../validate';

/**
 * Why a candidate was kept. `'namespace'` (sweepCgroups only): its owner's pid belongs to a pid
 * namespace this sweep cannot see into, and nothing proves the owner dead.
 */
export type SweepReason =
  | 'alive'
  | 'namespace'
  | 'locked'
  | 'listening'
  | 'not-owner'
  | 'symlink'
  | 'unsupported-type'
  | 'replaced'
  | 'mount'
  | 'error';

/** One candidate entry and what became of it. */
export interface SweepEntry {
  /**
   * The entry's name in the swept directory: a string, or a `Buffer` of its exact bytes when
   * they are not UTF-8 (a string would replace them with U+FFFD), as `fs.readdir` gives with
   * `encoding: 'buffer'`.
   */
  name: string | Buffer;
  /** The pid its name carries. */
  pid: number;
  /** Why it was kept (absent for a removed entry). */
  reason?: SweepReason;
  /** With reason `'error'`: what went wrong (`code`, `errno`, `syscall`, `path`). */
  error?: ProcpinSystemError;
}

/**
 * What a sweep did. Names that are not candidates appear in neither list, nor does a candidate
 * that vanished while the sweep looked at it (another sweeper removed it).
 */
export interface SweepReport {
  /** Entries removed (with `dryRun`: the entries that would have been removed). */
  removed: SweepEntry[];
  /** Candidates left in place, each with its reason. */
  kept: SweepEntry[];
  /** Set when the directory itself could not be read; both lists are then empty. */
  error?: ProcpinSystemError;
}

/** Who decides that an entry's owner is gone. See the module notes on pid namespaces. */
export type SweepAuthority = 'pid' | 'lock';

/** Options of {@link sweep}. */
export interface SweepOptions {
  /** Entries named `prefix` + pid (+ end, `-` or `.`) are candidates. No `/`, no NUL, not empty. */
  prefix: string;
  /** Decide everything, remove nothing; `removed` lists what would go. Default `false`. */
  dryRun?: boolean;
  /**
   * `'pid'` (default): the pid must name no live process here *and* the lock must be free.
   * `'lock'`: for prefixes whose every entry was made by {@link claim}: a directory or file
   * whose lock is free is dead whatever its pid says.
   */
  authority?: SweepAuthority;
}

/** A message on the `procpin:sweep` diagnostics channel: one per candidate decision. */
export interface SweepMessage {
  dir: string;
  /** As {@link SweepEntry.name}: a Buffer when the name is not UTF-8. */
  name: string | Buffer;
  pid: number;
  action: 'removed' | 'kept';
  reason?: SweepReason;
  /** Present (true) in a dry run: `'removed'` then means "would be removed". */
  dryRun?: true;
}

/** The `node:diagnostics_channel` channel on which sweeps publish their decisions. */
export const SWEEP_CHANNEL = 'procpin:sweep';
const channel = dc.channel(SWEEP_CHANNEL);

const outcomes = binding.sweepOutcomes;
const VANISHED = outcomes.indexOf('vanished');

/** A name prefix: a string without NUL or `/`, not empty. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export function validatePrefix(prefix: unknown, name: string, caller: Function): string {
  const s = validateCString(prefix, name, caller as never);
  if (s === '' || s.includes('/')) {
    throw invalidArgValue(name, prefix, "must be a non-empty name without '/'", caller as never);
  }
  return s;
}

/** A path: a string without NUL, not empty. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export function validateDir(dir: unknown, caller: Function): string {
  const s = validateCString(dir, 'dir', caller as never);
  if (s === '') throw invalidArgValue('dir', dir, 'must be a non-empty path', caller as never);
  return s;
}

/** The names {@link sweep} reads from its options. */
const SWEEP_OPTIONS = ['prefix', 'dryRun', 'authority'] as const;

/** `options.authority`: `'pid'` (the default) or `'lock'`. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
export function validateAuthority(value: unknown, caller: Function): SweepAuthority {
  if (value === undefined) return 'pid';
  if (value !== 'pid' && value !== 'lock') {
    throw invalidArgValue('options.authority', value, "must be 'pid' or 'lock'", caller as never);
  }
  return value;
}

/**
 * Removes the entries of `dir` left by owners that are provably gone. A candidate is named
 * `prefix` + a pid in canonical decimal (no sign, no leading zero, > 0, within pid_t) + the end
 * of the name or `-` or `.`; `prefix-abc`, `prefix-12x`, `prefix-007`, `prefix-` are not.
 *
 * A candidate is removed only if all hold:
 * 1. it is not a symbolic link and is a directory, a regular file or a socket;
 * 2. it belongs to this process's effective uid;
 * 3. its pid names no live process here (a zombie is dead; a live stranger is live);
 * 4. nobody holds a flock on it (directories and files; the sweep holds the lock while it
 *    removes);
 * 5. a socket refuses a non-blocking connect (a connect that succeeds or would block is a
 *    listener; a listener sees one connection that closes at once);
 * 6. its name still names the inode that was checked, right before the unlink;
 * 7. a directory is removed through descriptors, without following a link (a symlink inside is
 *    unlinked, its target untouched) and without descending into another mount (such an entry is
 *    kept with reason `'mount'`, possibly emptied of everything but the mount point).
 *
 * Every check and removal is relative to descriptors, never a path resolved again between
 * check and act. The work runs off the event loop (one threadpool task per call, bounded by the
 * directory's size). Per-entry trouble is reported (`reason: 'error'`), never thrown; an
 * unreadable `dir` yields an empty report with `error` set. Each decision is published on the
 * `procpin:sweep` diagnostics channel. Bad arguments reject with `ERR_INVALID_ARG_TYPE` /
 * `ERR_INVALID_ARG_VALUE`.
 *
 * Across pid namespaces a pid in a name means nothing and only a lock (or a listener) is a
 * witness; see the module notes and `authority: 'lock'`.
 *
 * @example
 * const { removed, kept } = await sweep('/run/user/1000/myapp', { prefix: 'myapp-' });
 */
export async function sweep(dir: string, options: SweepOptions): Promise<SweepReport> {
  validateDir(dir, sweep);
  // Read once, own keys only: an `authority` polluted onto Object.prototype is no option.
  const o = readOptions<SweepOptions>(
    validateObject(options, 'options', sweep),
    'options',
    SWEEP_OPTIONS,
    sweep,
  );
  const prefix = validatePrefix(o.prefix, 'options.prefix', sweep);
  const dryRun =
    o.dryRun === undefined ? false : validateBoolean(o.dryRun, 'options.dryRun', sweep);
  const authority = validateAuthority(o.authority, sweep);
  let flags = 0;
  if (dryRun) flags |= binding.sweepFlags.DRY_RUN;
  if (authority === 'lock') flags |= binding.sweepFlags.LOCK_AUTHORITY;

  const raw = await binding.sweepDirectory(dir, prefix, flags);
  const report: SweepReport = { removed: [], kept: [] };
  if (raw.errno < 0) {
    report.error = errnoException(raw.errno, raw.syscall ?? 'open', { path: dir });
    return report;
  }
  const publish = channel.hasSubscribers;
  const { names, pids, outcomes: codes, errnos, syscalls } = raw;
  for (let i = 0; i < names.length; i++) {
    const code = codes[i]!;
    if (code === VANISHED) continue;
    const name = names[i]!;
    const pid = pids[i]!;
    if (code === 0) {
      report.removed.push({ name, pid });
      if (publish) {
        const msg: SweepMessage = { dir, name, pid, action: 'removed' };
        if (dryRun) msg.dryRun = true;
        channel.publish(msg);
      }
      continue;
    }
    const reason = outcomes[code] as SweepReason;
    const entry: SweepEntry = { name, pid, reason };
    if (reason === 'error') {
      entry.error = errnoException(errnos[i]!, syscalls[i] ?? 'sweep', {
        path: path.join(dir, name.toString()),
      });
    }
    report.kept.push(entry);
    if (publish) {
      const msg: SweepMessage = { dir, name, pid, action: 'kept', reason };
      if (dryRun) msg.dryRun = true;
      channel.publish(msg);
    }
  }
  return report;
}
