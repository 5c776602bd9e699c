/**
 * A process group's hold on its leader. A leader is spawned claimable ({@link ./child.startLeader});
 * the group claims it once, and from then on owns it: the public {@link ./child.Child} it shows as
 * `group.leader` is a restricted view (its `reap()`, `close()` and dispose refuse with
 * `ERR_PROCPIN_GROUP_LEADER`), and what may free the pgid, or signal the whole group, is done
 * through the {@link LeaderControl} only the group holds, until the group releases it.
 * @internal
 * @module
 */
import { binding, type NativeChildHandle } from '../binding';
import { codedError } from '../errors';
import type { WaitInfo } from '../waitinfo';

// PIDFD_SIGNAL_PROCESS_GROUP (Linux 6.9) binds a group signal to the group the leader's pidfd
// names, never to a number. PROCPIN_NO_PIDFD_GROUP=1 (read once, at load) forces the kill(-pgid)
// path that older kernels take, so that it can be tested on a new one.
export const pidfdGroupSignal =
  process.env['PROCPIN_NO_PIDFD_GROUP'] !== '1' && binding.hasPidfdGroupSignal();

/** What a claimable Child hands over, once, to the group that claims it. */
export interface LeaderAccess {
  readonly handle: NativeChildHandle;
  /** From now on the Child's own reap(), close() and dispose refuse. */
  hold(): void;
  /** They no longer refuse. */
  release(): void;
  /** The Child's own reap (the JavaScript state with it): as Child.reap, without the refusal. */
  reap(caller: (...a: never[]) => unknown): WaitInfo;
  /** The Child's own close, without the refusal. */
  close(): void;
  /** Whether the Child knows itself reaped (by us, or lost). */
  reaped(): boolean;
}

const claimable = new WeakMap<object, LeaderAccess>();

/** Called by a Child spawned as a leader, once, as it is made. */
export function offerLeader(child: object, access: LeaderAccess): void {
  claimable.set(child, access);
}

/** `ERR_PROCPIN_GROUP_LEADER`: what the leader's own reap(), close() and dispose throw. */
export function leaderRefusal(caller: (...a: never[]) => unknown): Error {
  return codedError(
    Error,
    'ERR_PROCPIN_GROUP_LEADER',
    "A process group's leader is reaped by the group once it is clean: use group.stop() or await group.closed",
    caller,
  );
}

/**
 * The group's side of its leader. Every number is 0 or -errno, as the addon returns them.
 */
export class LeaderControl {
  readonly #access: LeaderAccess;
  #released = false;

  private constructor(access: LeaderAccess) {
    this.#access = access;
  }

  /** Claims a leader spawned claimable; once. Throws for any other Child. */
  static claim(child: object): LeaderControl {
    const access = claimable.get(child);
    if (access === undefined) throw new TypeError('not a claimable group leader');
    claimable.delete(child);
    access.hold();
    return new LeaderControl(access);
  }

  /**
   * A signal to the whole group, decided natively beside the process signal: through the
   * leader's pidfd with PIDFD_SIGNAL_PROCESS_GROUP when `pidfdGroup` (bound to the group, also
   * after a loss), else by number only while the leader is provably unreaped. 0, -ESRCH (gone,
   * or no longer ours), -EPERM (a member refused) or another -errno.
   */
  signalGroup(sig: number, pidfdGroup: boolean): number {
    return this.#access.handle.signalGroup(sig, pidfdGroup);
  }

  /** 1 while the leader is in the group it leads, 0 once it left it, or -errno. */
  inGroup(): number {
    return this.#access.reaped() ? -3 : this.#access.handle.inGroup();
  }

  /** The group's own reap of its leader, once the group is clean. As Child.reap. */
  reap(): WaitInfo {
    return this.#access.reap(this.reap);
  }

  /** Releases the leader (its own reap/close no longer refuse) and closes it. Once. */
  close(): void {
    if (this.#released) return;
    this.#released = true;
    this.#access.release();
    this.#access.close();
  }
}
