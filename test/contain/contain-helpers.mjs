// What the contain room's tests share: the cgroup base procpin uses here, the cgroups named for a
// supervisor, and the marked `sleep 1000.TOKEN` processes still alive by the host's /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { cgroupPlace } from '../../dist/contain/contain.js';
import { procStat } from '../helpers.mjs';

/** Where procpin's cgroups go here: cgroupPlace()'s answer (a string says why there is none). */
export const place = cgroupPlace();
/** The cgroup2 directory procpin makes its cgroups in, or null when there is none here. */
export const cgroupBase = typeof place === 'string' ? null : place.base;

/** The names of the cgroups supervisor `pid` made (procpin-PID-...), [] without a cgroup base. */
export function cgroupsOf(pid = process.pid) {
  if (cgroupBase === null) return [];
  return readdirSync(cgroupBase).filter((n) => n.startsWith(`procpin-${pid}-`));
}

/** Live (not zombie) processes whose command line is `sleep 1000.TOKEN`, by the host's /proc. */
export function marked(tok) {
  const pids = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let cmd;
    try {
      cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (cmd !== `sleep\0${'1000.' + tok}\0`) continue;
    const st = procStat(Number(name));
    if (st && st.state !== 'Z' && st.state !== 'X') pids.push(Number(name));
  }
  return pids;
}
