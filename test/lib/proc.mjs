// The kernel's record of processes and locks, read one way for every test, fixture and bench:
// `/proc/PID/stat` (proc_pid_stat(5)) and `/proc/locks` (proc_locks(5)). Only node:fs, so that
// code run in a child process, a Worker or a pid namespace can import it too (`procLib`).
import { readdirSync, readFileSync, statSync } from 'node:fs';

/** This module's URL as a JavaScript string literal, for `await import(${procLib})` in code strings. */
export const procLib = JSON.stringify(import.meta.url);

/**
 * The fields of one `/proc/PID/stat` line. The command name may hold spaces and parentheses: it
 * ends at the last ')', and the numbered fields follow (state is field 3, start time field 22).
 */
export function parseStat(line) {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  const f = line.slice(close + 2).split(' ');
  return {
    pid: Number(line.slice(0, open).trim()),
    comm: line.slice(open + 1, close),
    state: f[0],
    ppid: Number(f[1]),
    pgid: Number(f[2]),
    sid: Number(f[3]),
    tpgid: Number(f[5]),
    /** Clock ticks after boot, as the text the kernel wrote. */
    start: f[19],
  };
}

/** `/proc/PID/stat` fields ({@link parseStat}), or null when the pid is gone. */
export function procStat(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return parseStat(s);
}

/** The one-letter state, or null when the pid is gone. */
export function procState(pid) {
  return procStat(pid)?.state ?? null;
}

/** Gone from the kernel's point of view: no entry, or a zombie / dead (PID 1 reaps late here). */
export function isGone(pid) {
  const st = procState(pid);
  return st === null || st === 'Z' || st === 'X';
}

/** The stat fields of every process in /proc for which `keep(stat)` is true. */
export function procsWhere(keep) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && keep(st)) out.push(st);
  }
  return out;
}

/**
 * Live (non-zombie) processes whose environment holds `name=value` (`/proc/PID/environ`): a
 * marker that every process a command starts inherits, whatever group or session it moves to.
 */
export function markedLive(name, value) {
  const want = `${name}=${value}`;
  return procsWhere((st) => {
    if (st.state === 'Z' || st.state === 'X') return false;
    try {
      return readFileSync(`/proc/${st.pid}/environ`, 'latin1').split('\0').includes(want);
    } catch {
      return false;
    }
  });
}

/** Live (non-zombie) processes whose pgid is `pgid`. */
export function liveMembers(pgid) {
  return procsWhere((st) => st.pgid === pgid && st.state !== 'Z' && st.state !== 'X');
}

/** Zombie children of this process (pids): what a leak of unreaped children looks like. */
export function ourZombies() {
  return procsWhere((st) => st.ppid === process.pid && st.state === 'Z').map((st) => st.pid);
}

/**
 * `/proc/locks` as entries: `{ type ('FLOCK', 'POSIX', 'OFDLCK', ...), access ('READ' or
 * 'WRITE'), pid, dev ('major:minor', hex as listed), ino (decimal text), blocked }`. A blocked
 * waiter is listed with "->" after the id of the lock it waits for; it does not hold the lock.
 */
export function procLocks() {
  const out = [];
  for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
    const f = line.trim().split(/\s+/);
    const blocked = f[1] === '->';
    if (blocked) f.splice(1, 1);
    const id = f[5]?.split(':');
    if (f.length < 6 || id?.length !== 3) continue;
    out.push({ type: f[1], access: f[3], pid: Number(f[4]), dev: `${id[0]}:${id[1]}`, ino: id[2], blocked });
  }
  return out;
}

/** `pid`'s flock entries on the file at `path`: how many it holds and how many it waits for. */
export function ourLocks(path, pid = process.pid) {
  const ino = String(statSync(path).ino);
  let held = 0;
  let waiting = 0;
  for (const l of procLocks()) {
    if (l.type !== 'FLOCK' || l.pid !== pid || l.ino !== ino) continue;
    if (l.blocked) waiting++;
    else held++;
  }
  return { held, waiting };
}
