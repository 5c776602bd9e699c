/**
 * The kernel side of a group's cleanup: {@link GroupOps} wired to a real leader (through the
 * {@link LeaderControl} the group holds), its native group signal, and the `/proc` scan.
 * @internal
 * @module
 */
import * as diagnostics from 'node:diagnostics_channel';
import { binding, type ScanMemory } from '../binding';
import type { Child } from '../child/child';
import { ERRNO } from '../errors';
import { pidfdGroupSignal, type LeaderControl } from '../child/leader';
import type { Holder } from '../contain/contain';
import { memberScanner, toLimit, type ScanKernel } from './scan';
import type { GroupOps, GroupPhase, SendResult } from './types';

const { EPERM } = ERRNO;

/**
 * The `node:diagnostics_channel` name a group's cleanup phases are published on, as
 * {@link GroupPhase} messages (`{ pid, phase, signal?, reason?, ms }`).
 */
export const GROUP_CHANNEL = 'procpin:group';
const channel = diagnostics.channel(GROUP_CHANNEL);

export { pidfdGroupSignal };

const nativeScan: ScanKernel<ScanMemory> = {
  memberLive: (pgid, pid) => binding.groupMemberLive(pgid, pid),
  scan: (pgid, limit, memory) => binding.scanGroup(pgid, limit, memory),
  createMemory: () => binding.createScanMemory(),
};

/**
 * Live (non-zombie) processes whose pgid is `pgid`, counted up to `limit`; `'unknown'` when `/proc`
 * cannot be read. Natively, off the event loop: one getdents64 pass over `/proc`, `getpgid(2)`
 * per pid, and only where the pgid matches a look at whether the process has exited (a pidfd
 * poll, or its state in `/proc/<pid>/stat` without pidfd_open), to leave zombies out. Not an
 * atomic snapshot: a member may fork or exit while it runs.
 * @internal
 */
export async function scanGroup(pgid: number, limit = Infinity): Promise<number | 'unknown'> {
  const [n] = await binding.scanGroup(pgid, toLimit(limit));
  return n < 0 ? 'unknown' : n;
}

/** The cleanup's effects on a real leader; a containment `holder` wraps the signal and scan. */
export function kernelOps(
  leader: Child,
  control: LeaderControl,
  abort: AbortSignal | undefined,
  holder: Holder | null,
): GroupOps {
  const ops = processGroupOps(leader, control, abort);
  if (holder === null) return ops;
  const { signalGroup, scanMembers } = ops;
  return {
    ...ops,
    signalGroup: (sig) => holder.signal(sig, signalGroup),
    scanMembers: () => holder.members(scanMembers),
  };
}

function toSendResult(r: number): SendResult {
  if (r === 0) return 'ok';
  return r === -EPERM ? 'EPERM' : 'ESRCH';
}

function processGroupOps(
  leader: Child,
  control: LeaderControl,
  abort: AbortSignal | undefined,
): GroupOps {
  const pgid = leader.pid;
  return {
    // Natively, beside the process signal: the leader's pidfd where the kernel binds the signal
    // to the group, else the number while the leader is provably unreaped (never after a reap).
    signalGroup: (sig) => toSendResult(control.signalGroup(sig, pidfdGroupSignal)),
    leaderInGroup: () => control.inGroup() === 1,
    signalsSurviveLoss: () => pidfdGroupSignal,
    reapOrphans: reapsOrphans() ? () => binding.reapGroupOrphans(pgid, pgid) : undefined,
    signalLeader: (sig) => leader.kill(sig),
    scanMembers: memberScanner(pgid, nativeScan),
    lookLeader: () => leader.poll(),
    reapLeader: () => control.reap(), // the group's own reap, after the cleanup
    closeLeader() {
      control.close();
      // Every member is dead: nobody in the group can read the leader's stdin any more. Close our
      // end as child_process does at exit; stdout and stderr close themselves at EOF, once
      // their data has been read.
      leader.stdin?.destroy();
    },
    now: () => performance.now(),
    setTimer(fn, ms, ref) {
      const t = setTimeout(fn, ms);
      if (!ref) t.unref();
      return () => clearTimeout(t);
    },
    publish(phase: GroupPhase) {
      if (channel.hasSubscribers) channel.publish(phase);
    },
    onAbort: abort
      ? (fn) => {
          abort.addEventListener('abort', fn, { once: true });
          return () => abort.removeEventListener('abort', fn);
        }
      : undefined,
  };
}

// A subreaper (or PID 1) inherits orphaned members: the group reaps them once it is clean.
function reapsOrphans(): boolean {
  return process.pid === 1 || binding.getChildSubreaper() === 1;
}
