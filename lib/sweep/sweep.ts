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
 * the inode, not on a number: a flock held on the entry (taken by {@link claim}, held on an
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
import { randomBytes } from 'node:crypto';
import * as dc from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import { constants as fsConstants, type BigIntStats } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { binding } from '../binding';
import { abortError, codedError, errnoException, type ProcpinSystemError } from '../errors';
import { flock } from '../primitives';
import {
  invalidArgValue,
  validateAbortSignal,
  validateBoolean,
  validateCString,
  validateInteger,
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

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
function validatePrefix(prefix: unknown, name: string, caller: Function): string {
  const s = validateCString(prefix, name, caller as never);
  if (s === '' || s.includes('/')) {
    throw invalidArgValue(name, prefix, "must be a non-empty name without '/'", caller as never);
  }
  return s;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
function validateDir(dir: unknown, caller: Function): string {
  const s = validateCString(dir, 'dir', caller as never);
  if (s === '') throw invalidArgValue('dir', dir, 'must be a non-empty path', caller as never);
  return s;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
function validateAuthority(value: unknown, caller: Function): SweepAuthority {
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
  validateObject<SweepOptions>(options, 'options', sweep as never);
  const prefix = validatePrefix(options.prefix, 'options.prefix', sweep);
  const dryRun = options.dryRun === undefined ? false : validateBoolean(options.dryRun, 'options.dryRun', sweep as never);
  const authority = validateAuthority(options.authority, sweep);
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

/** Options of {@link claim}. */
export interface ClaimOptions {
  /** What to create: a directory (default) or a regular file. */
  kind?: 'directory' | 'file';
  /** Its mode, set exactly (not masked by the umask): default 0o700 (directory), 0o600 (file). */
  mode?: number;
  /** Passed to the sweep that precedes the claim (see {@link SweepOptions.authority}). */
  authority?: SweepAuthority;
}

const EWOULDBLOCK = 11;
const EAGAIN = 11;
const EEXIST = 17;
const ENOENT = 2;
const ESTALE = 116;
const { LOCK_EX, LOCK_NB } = binding.constants;
const { O_RDWR, O_CREAT, O_NOFOLLOW } = fsConstants;

const fsOpen = promisify(fs.open);
const fsClose = promisify(fs.close);
const fsFstat = promisify(fs.fstat);
const fsFtruncate = promisify(fs.ftruncate);
const fsWrite = promisify(fs.write);
const fsRead = promisify(fs.read);

function sameInode(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

async function lstatOrNull(p: string): Promise<BigIntStats | null> {
  try {
    return await fsp.lstat(p, { bigint: true });
  } catch {
    return null;
  }
}

function isErrno(err: unknown, code: string): boolean {
  return (err as { code?: unknown } | null)?.code === code;
}

// Claim and Pidfile own a descriptor they close on release: only this module may make them, or a
// caller could hand one any number and have it closed (Node's own classes refuse the same way).
const kCreate = Symbol('procpin.create');

function illegalConstructor(): Error {
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
  if (r !== 0 && r[0] !== -ENOENT) {
    throw errnoException(r[0], r[1], { path: path.join(dir, name) }, caller);
  }
}

/**
 * An entry this process created and owns, named `prefix<pid>-<random>`.
 *
 * Guarantees:
 * (a) it was created exclusively: no one else's entry is ever adopted;
 * (b) its flock is held on an O_CLOEXEC descriptor (children do not inherit it) from before it is
 *     handed out until `release()` settles, so no sweeper removes it, in any pid namespace;
 * (c) `release()` removes the entry (a directory with its contents, through descriptors, never
 *     following links or crossing mounts) and only then drops the lock, exactly once: later calls
 *     return the same promise;
 * (d) a claim that is never released holds its lock (one descriptor) until the process exits,
 *     even if the `Claim` object is garbage-collected, because its path may still be in use;
 * (e) if the process dies without releasing (SIGKILL, OOM), the kernel drops the lock and the next
 *     {@link claim} or {@link sweep} of the prefix removes the entry.
 */
export class Claim {
  /** The entry's path. */
  readonly path: string;
  /** What the entry is. */
  readonly kind: 'directory' | 'file';
  /** The sweep that preceded the claim. */
  readonly swept: SweepReport;
  #fd: number;
  #dir: string;
  #name: string;
  #released: Promise<void> | null = null;

  /** @internal Made by {@link claim} only; `new Claim()` throws `ERR_ILLEGAL_CONSTRUCTOR`. */
  constructor(
    token: symbol,
    dir: string,
    name: string,
    kind: 'directory' | 'file',
    fd: number,
    swept: SweepReport,
  ) {
    if (token !== kCreate) throw illegalConstructor();
    this.#dir = dir;
    this.#name = name;
    this.path = path.join(dir, name);
    this.kind = kind;
    this.#fd = fd;
    this.swept = swept;
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
      this.#released = removeAndClose(this.#dir, this.#name, fd, true, this.release);
    }
    return this.#released;
  }

  /** `release()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
async function ensureSafeDir(dir: string, caller: Function): Promise<void> {
  try {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
  }
  const st = await fsp.stat(dir);
  const euid = process.geteuid!();
  let why: string | null = null;
  if (!st.isDirectory()) why = 'is not a directory';
  else if (st.uid !== euid && st.uid !== 0) why = `is owned by uid ${st.uid}, not by uid ${euid} or root`;
  else if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) {
    why = 'is writable by all users without the sticky bit';
  }
  if (why !== null) {
    throw codedError(Error, 'ERR_PROCPIN_UNSAFE_DIR', `Refusing to claim in '${dir}': it ${why}`, caller, {
      path: dir,
    });
  }
}

/**
 * The owner's side of sweeping: sweeps `dir` for `prefix` (the successor is the one who cleans),
 * creates `dir` with mode 0700 if it is missing, refuses with `ERR_PROCPIN_UNSAFE_DIR` a `dir`
 * owned by another user (root excepted: root can remove anything anyway, and `/tmp` is root's)
 * or writable by all without the sticky bit, then creates `prefix<pid>-<random>` exclusively (a
 * directory 0700 or a file 0600 unless `mode` says otherwise, set exactly) and holds a flock on
 * it until `release()`.
 *
 * A file is created unnamed, locked, then linked in (`O_TMPFILE`), so no sweeper ever sees it
 * unlocked. A directory is unlocked for the microseconds between `mkdir` and `flock`: a sweeper
 * with `authority: 'lock'` that takes it then makes the claim retry under a new name; a claim
 * never hands out an entry that is about to vanish (the name is checked after the lock is held).
 *
 * @example
 * await using scratch = await claim('/tmp/myapp', 'myapp-');
 * // ... use scratch.path; removed on release, or swept after a SIGKILL.
 */
export async function claim(dir: string, prefix: string, options: ClaimOptions = {}): Promise<Claim> {
  validateDir(dir, claim);
  validatePrefix(prefix, 'prefix', claim);
  validateObject<ClaimOptions>(options, 'options', claim as never);
  const kind = options.kind ?? 'directory';
  if (kind !== 'directory' && kind !== 'file') {
    throw invalidArgValue('options.kind', kind, "must be 'directory' or 'file'", claim as never);
  }
  const mode =
    options.mode === undefined
      ? kind === 'directory'
        ? 0o700
        : 0o600
      : validateInteger(options.mode, 'options.mode', 0, 0o7777, claim as never);
  const authority = validateAuthority(options.authority, claim);

  await ensureSafeDir(dir, claim);
  const swept = await sweep(dir, { prefix, authority });

  for (let attempt = 0; ; attempt++) {
    const name = `${prefix}${process.pid}-${randomBytes(6).toString('hex')}`;
    const r = await binding.createLocked(dir, name, kind === 'directory', mode);
    if (typeof r === 'number') return new Claim(kCreate, dir, name, kind, r, swept);
    // EEXIST: a name collision; EAGAIN: a lock-authority sweeper took it before we locked it.
    if ((r[0] === -EEXIST || r[0] === -EAGAIN) && attempt < 64) continue;
    throw errnoException(r[0], r[1], { path: path.join(dir, name) }, claim);
  }
}

/**
 * A pidfile that is a lock. Guarantees: (a) while it is held, its flock is held on an O_CLOEXEC
 * descriptor and the file names this process; (b) `release()` unlinks it (if the name still
 * names our file) and then drops the lock, once; (c) a holder that dies drops the lock with it,
 * and the next {@link claimPidfile} takes the file over; (d) one never released is held until the
 * process exits.
 */
export class Pidfile {
  /** The pidfile's path. */
  readonly path: string;
  #fd: number;
  #released: Promise<void> | null = null;

  /** @internal Made by {@link claimPidfile} only; `new Pidfile()` throws `ERR_ILLEGAL_CONSTRUCTOR`. */
  constructor(token: symbol, p: string, fd: number) {
    if (token !== kCreate) throw illegalConstructor();
    this.path = p;
    this.#fd = fd;
  }

  /** The descriptor that holds the lock (O_CLOEXEC; do not close it), or -1 once released. */
  get fd(): number {
    return this.#fd;
  }

  /** Unlinks the pidfile, then drops the lock. Idempotent. */
  release(): Promise<void> {
    if (this.#released === null) {
      const fd = this.#fd;
      this.#fd = -1;
      this.#released = removeAndClose(
        path.dirname(this.path),
        path.basename(this.path),
        fd,
        false,
        this.release,
      );
    }
    return this.#released;
  }

  /** `release()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.release();
  }
}

/** The pids that hold a flock on (dev, ino), from /proc/locks (empty when unreadable). */
async function flockHolders(st: BigIntStats): Promise<number[]> {
  let text: string;
  try {
    text = await fsp.readFile('/proc/locks', 'latin1');
  } catch {
    return [];
  }
  // Linux's encoding of dev_t (new_decode_dev).
  const dev = st.dev;
  const major = Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn));
  const minor = Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn));
  const ino = st.ino.toString();
  const out: number[] = [];
  // "1: FLOCK  ADVISORY  WRITE 1234 00:2a:5678 0 EOF" (major and minor in hex); blocked
  // waiters are listed with "->" and do not hold the lock.
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[1] !== 'FLOCK' || f[3] !== 'WRITE') continue;
    const id = f[5]?.split(':');
    if (!id || id.length !== 3) continue;
    if (parseInt(id[0]!, 16) !== major || parseInt(id[1]!, 16) !== minor || id[2] !== ino) continue;
    const pid = Number(f[4]);
    if (Number.isInteger(pid) && pid > 0) out.push(pid);
  }
  return out;
}

async function holderPid(fd: number): Promise<number | undefined> {
  const buf = Buffer.alloc(32);
  const [n, st] = await Promise.all([
    fsRead(fd, buf, 0, buf.length, 0).then(
      (r) => r.bytesRead,
      () => 0,
    ),
    fsFstat(fd, { bigint: true }),
  ]);
  const m = /^\s*([1-9][0-9]{0,9})\s*$/.exec(buf.toString('latin1', 0, n));
  const written = m ? Number(m[1]) : undefined;
  const holders = await flockHolders(st);
  // The file says who the holder is; /proc/locks says who took the lock. They differ while the
  // holder has locked but not yet written, or when the lock passed to a child across fork.
  if (written !== undefined && (holders.length === 0 || holders.includes(written))) return written;
  return holders[0] ?? written;
}

/** Options of {@link claimPidfile}. */
export interface ClaimPidfileOptions {
  /** Wait for the holder to let go instead of rejecting with `ERR_PROCPIN_LOCKED`. */
  wait?: boolean;
  /** Cancels a `wait`: the promise rejects with an `AbortError`, nothing taken or changed. */
  signal?: AbortSignal;
}

/** The most a pidfile holds: a pid (at most 10 digits), whitespace and a newline. */
const PIDFILE_MAX = 32;

/**
 * Takes the pidfile at `path`: the lock is the truth, not the pid written in the file. Taken
 * when no one holds its flock (a stale file from a dead owner is taken over whatever pid it
 * names, even a live one such as 1); this process's pid is then written into it. Otherwise
 * rejects with `code: 'ERR_PROCPIN_LOCKED'` and the holder's pid in `err.pid` (as written in the
 * file, or as /proc/locks reports the lock's taker), or with `wait: true` waits until the holder
 * lets go (abortable with `signal`). A symlink at `path` is refused (`ELOOP`). A file that is not
 * a pidfile (neither empty nor one line holding a pid: a configuration file named by mistake) is
 * refused with `ERR_PROCPIN_NOT_PIDFILE` and left exactly as it was.
 *
 * @example
 * const pf = await claimPidfile('/run/myapp.pid');
 * process.on('exit', () => pf.release());
 */
export async function claimPidfile(path_: string, options: ClaimPidfileOptions = {}): Promise<Pidfile> {
  validateDir(path_, claimPidfile);
  validateObject<ClaimPidfileOptions>(options, 'options', claimPidfile as never);
  const { wait: waitOpt, signal: signalOpt } = options; // read once
  for (const key of Object.keys(options)) {
    if (key !== 'wait' && key !== 'signal') {
      throw invalidArgValue(`options.${key}`, (options as Record<string, unknown>)[key], 'is not an option of claimPidfile', claimPidfile as never);
    }
  }
  const wait = waitOpt === undefined ? false : validateBoolean(waitOpt, 'options.wait', claimPidfile as never);
  const signal = validateAbortSignal(signalOpt, 'options.signal', claimPidfile as never);
  if (signal?.aborted) throw abortError(signal);
  const p = path.resolve(path_);
  for (let attempt = 0; ; attempt++) {
    const fd = await fsOpen(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0o644);
    let keep = false;
    try {
      const r = binding.flock(fd, LOCK_EX | LOCK_NB);
      if (r === -EWOULDBLOCK && wait) {
        // The open file description is ours alone: an abort leaves nothing taken.
        await flock(fd, LOCK_EX, signal ? { signal } : {});
      } else if (r === -EWOULDBLOCK) {
        const pid = await holderPid(fd);
        const props: Record<string, unknown> = { path: p };
        if (pid !== undefined) props['pid'] = pid;
        throw codedError(
          Error,
          'ERR_PROCPIN_LOCKED',
          `Pidfile '${p}' is locked by ${pid === undefined ? 'another process' : `pid ${pid}`}`,
          claimPidfile,
          props,
        );
      } else if (r < 0) {
        throw errnoException(r, 'flock', { path: p }, claimPidfile);
      }
      // The previous holder may have unlinked the file between our open and our lock: the lock
      // is then on a name nobody can see. Only a lock on the file the path names counts.
      const [held, now] = await Promise.all([fsFstat(fd, { bigint: true }), lstatOrNull(p)]);
      if (now === null || !sameInode(held, now)) {
        if (attempt < 64 || wait) continue;
        throw errnoException(-ESTALE, 'open', { path: p }, claimPidfile);
      }
      // Only a pidfile is ever written: anything else is someone's data.
      if (!held.isFile() || held.size > BigInt(PIDFILE_MAX)) throw notPidfile(p);
      const buf = Buffer.alloc(PIDFILE_MAX + 1);
      const { bytesRead } = await fsRead(fd, buf, 0, buf.length, 0);
      if (!/^(\s*[1-9][0-9]{0,9}[ \t]*\n?)?$/.test(buf.toString('latin1', 0, bytesRead))) {
        throw notPidfile(p);
      }
      if (signal?.aborted) throw abortError(signal);
      await fsFtruncate(fd, 0);
      await fsWrite(fd, `${process.pid}\n`, 0, 'latin1');
      keep = true;
      return new Pidfile(kCreate, p, fd);
    } finally {
      if (!keep) await fsClose(fd);
    }
  }
}

function notPidfile(p: string) {
  return codedError(
    Error,
    'ERR_PROCPIN_NOT_PIDFILE',
    `'${p}' is not a pidfile (neither empty nor one line holding a pid); it was left as it was`,
    claimPidfile,
    { path: p },
  );
}
