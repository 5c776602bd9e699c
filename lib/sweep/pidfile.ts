/**
 * A pidfile that is a lock: {@link claimPidfile} takes it when no one holds its flock, whatever
 * pid the file names.
 * @module
 */
import * as fs from 'node:fs';
import { constants as fsConstants, type BigIntStats } from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { abortError, codedError, ERRNO, errnoException } from '../errors';
import { constants, flock, tryLock } from '../primitives';
import { readOptions, validateAbortSignal, validateBoolean } from '../validate';
import { HeldEntry, illegalConstructor, kCreate } from './held';
import { validateDir } from './sweep';

const { ESTALE } = ERRNO;
const { O_RDWR, O_CREAT, O_NOFOLLOW } = fsConstants;

const fsOpen = promisify(fs.open);
const fsClose = promisify(fs.close);
const fsFstat = promisify(fs.fstat);
const fsFtruncate = promisify(fs.ftruncate);
const fsWrite = promisify(fs.write);
const fsRead = promisify(fs.read);

async function lstatOrNull(p: string): Promise<BigIntStats | null> {
  try {
    return await fsp.lstat(p, { bigint: true });
  } catch {
    return null;
  }
}

/**
 * A pidfile that is a lock. Guarantees: (a) while it is held, its flock is held on an O_CLOEXEC
 * descriptor and the file names this process; (b) `release()` unlinks it (if the name still
 * names our file) and then drops the lock, once; (c) a holder that dies drops the lock with it,
 * and the next {@link claimPidfile} takes the file over; (d) one never released is held until the
 * process exits.
 */
export class Pidfile extends HeldEntry {
  /** @internal Made by {@link claimPidfile} only; `new Pidfile()` throws `ERR_ILLEGAL_CONSTRUCTOR`. */
  constructor(token: symbol, p: string, fd: number) {
    if (token !== kCreate) throw illegalConstructor(); // before `p` is taken apart
    super(token, path.dirname(p), path.basename(p), fd, false);
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
export async function claimPidfile(
  path_: string,
  options: ClaimPidfileOptions = {},
): Promise<Pidfile> {
  validateDir(path_, claimPidfile);
  // Read once, own keys only: a `wait` polluted onto Object.prototype is no option.
  const o = readOptions<ClaimPidfileOptions>(options, 'options', ['wait', 'signal'], claimPidfile);
  const { wait: waitOpt, signal: signalOpt } = o;
  const wait =
    waitOpt === undefined ? false : validateBoolean(waitOpt, 'options.wait', claimPidfile);
  const signal = validateAbortSignal(signalOpt, 'options.signal', claimPidfile);
  if (signal?.aborted) throw abortError(signal);
  const p = path.resolve(path_);
  for (let attempt = 0; ; attempt++) {
    const fd = await fsOpen(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0o644);
    let keep = false;
    try {
      let taken: boolean;
      try {
        taken = tryLock(fd, 'exclusive');
      } catch (e) {
        throw errnoException((e as { errno: number }).errno, 'flock', { path: p }, claimPidfile);
      }
      if (!taken && wait) {
        // The open file description is ours alone: an abort leaves nothing taken.
        await flock(fd, constants.LOCK_EX, signal ? { signal } : {});
      } else if (!taken) {
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
      }
      // The previous holder may have unlinked the file between our open and our lock: the lock
      // is then on a name nobody can see. Only a lock on the file the path names counts.
      const [held, now] = await Promise.all([fsFstat(fd, { bigint: true }), lstatOrNull(p)]);
      if (now === null || held.dev !== now.dev || held.ino !== now.ino) {
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
