/**
 * The owner's side of sweeping: {@link claim} sweeps a directory for a prefix, then creates an
 * entry of its own there and holds it by a flock until it is released.
 * @module
 */
import { randomBytes } from 'node:crypto';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { binding } from '../binding';
import { codedError, ERRNO, errnoException } from '../errors';
import { invalidArgValue, readOptions, validateInteger } from '../validate';
import { HeldEntry, kCreate } from './held';
import {
  sweep,
  validateAuthority,
  validateDir,
  validatePrefix,
  type SweepAuthority,
  type SweepReport,
} from './sweep';

/** Options of {@link claim}. */
export interface ClaimOptions {
  /** What to create: a directory (default) or a regular file. */
  kind?: 'directory' | 'file';
  /** Its mode, set exactly (not masked by the umask): default 0o700 (directory), 0o600 (file). */
  mode?: number;
  /** Passed to the sweep that precedes the claim (see {@link SweepOptions.authority}). */
  authority?: SweepAuthority;
}

const { EAGAIN, EEXIST } = ERRNO;

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
export class Claim extends HeldEntry {
  /** What the entry is. */
  readonly kind: 'directory' | 'file';
  /** The sweep that preceded the claim. */
  readonly swept: SweepReport;

  /** @internal Made by {@link claim} only; `new Claim()` throws `ERR_ILLEGAL_CONSTRUCTOR`. */
  constructor(
    token: symbol,
    dir: string,
    name: string,
    kind: 'directory' | 'file',
    fd: number,
    swept: SweepReport,
  ) {
    super(token, dir, name, fd, true);
    this.kind = kind;
    this.swept = swept;
  }
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
async function ensureSafeDir(dir: string, caller: Function): Promise<void> {
  try {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== 'EEXIST') throw err;
  }
  const st = await fsp.stat(dir);
  const euid = process.geteuid!();
  let why: string | null = null;
  if (!st.isDirectory()) why = 'is not a directory';
  else if (st.uid !== euid && st.uid !== 0)
    why = `is owned by uid ${st.uid}, not by uid ${euid} or root`;
  else if ((st.mode & 0o002) !== 0 && (st.mode & 0o1000) === 0) {
    why = 'is writable by all users without the sticky bit';
  }
  if (why !== null) {
    throw codedError(
      Error,
      'ERR_PROCPIN_UNSAFE_DIR',
      `Refusing to claim in '${dir}': it ${why}`,
      caller,
      {
        path: dir,
      },
    );
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
export async function claim(
  dir: string,
  prefix: string,
  options: ClaimOptions = {},
): Promise<Claim> {
  validateDir(dir, claim);
  validatePrefix(prefix, 'prefix', claim);
  const o = readOptions<ClaimOptions>(options, 'options', ['kind', 'mode', 'authority'], claim);
  const kind = o.kind ?? 'directory';
  if (kind !== 'directory' && kind !== 'file') {
    throw invalidArgValue('options.kind', kind, "must be 'directory' or 'file'", claim);
  }
  const mode =
    o.mode === undefined
      ? kind === 'directory'
        ? 0o700
        : 0o600
      : validateInteger(o.mode, 'options.mode', 0, 0o7777, claim);
  const authority = validateAuthority(o.authority, claim);

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
