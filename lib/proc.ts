/**
 * `/proc/PID/stat` read by the addon's one `/proc` reader (native/core/proc.cc), the one the
 * sweep and the group scan decide liveness with.
 * @internal
 * @module
 */
import { binding } from './binding';
import { check, ERRNO } from './errors';
import { validatePid } from './validate';

/** The fields of `/proc/PID/stat` procpin reads (proc_pid_stat(5) fields 3-6 and 22). */
export interface ProcStat {
  /** The state letter: `R`, `S`, `D`, `T`, `t`, `Z` (a zombie), `X`, ... */
  state: string;
  ppid: number;
  pgid: number;
  session: number;
  /** Clock ticks after boot at which it started: with the pid, it names one process. */
  startTime: number;
}

/**
 * `/proc/PID/stat` of `pid`, or `null` when there is no such process (it exited and was
 * reaped). Throws `EXDEV` when `/proc` is another pid namespace's (it would name another
 * process), and the read's error otherwise. Microseconds, on the calling thread.
 */
export function readProcStat(pid: number): ProcStat | null {
  validatePid(pid, 'pid', readProcStat);
  const r = binding.procStat(pid);
  if (typeof r === 'number') {
    if (r === -ERRNO.ESRCH) return null;
    check(r, 'open', { path: `/proc/${pid}/stat` }, readProcStat);
  }
  const [state, ppid, pgid, session, startTime] = r as [string, number, number, number, number];
  return { state, ppid, pgid, session, startTime };
}
