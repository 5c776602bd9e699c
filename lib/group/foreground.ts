/**
 * `foreground: true` of {@link ./group.spawnGroup}: a group is the terminal's foreground job while
 * its leader runs.
 * @internal
 * @module
 */
import * as fs from 'node:fs';
import { TerminalJob } from './jobcontrol';

/** What the terminal job needs of a group. */
export interface ForegroundGroup {
  readonly pid: number;
  readonly pgid: number;
  signal(sig: NodeJS.Signals): boolean;
}

/** Terminals a group holds now: given back by {@link restoreTerminals} however the process ends. */
const holding = new Set<ForegroundTerminal>();

/**
 * The supervisor is ending (its 'exit', an ending signal it does not listen for) while groups may
 * still hold the terminal: each terminal goes back to this process's group with its modes, as
 * when the group ends on its own; otherwise the shell that ran the supervisor without job control
 * (an npm script, `sh -c`) would be left in the background of its own terminal.
 */
export function restoreTerminals(): void {
  for (const tty of holding) tty.close();
}

// `foreground: true`: the job control of `procpin run` (lib/group/jobcontrol.ts) on this process's
// controlling terminal, opened as /dev/tty (whatever the stdio), for one group's lifetime.
export class ForegroundTerminal {
  #fd: number;
  #job: TerminalJob | null;

  private constructor(fd: number, job: TerminalJob | null) {
    this.#fd = fd;
    this.#job = job;
  }

  /** The controlling terminal, or an inert object when there is none. */
  static open(): ForegroundTerminal {
    let fd: number;
    try {
      fd = fs.openSync('/dev/tty', fs.constants.O_RDWR | fs.constants.O_NOCTTY);
    } catch {
      return new ForegroundTerminal(-1, null); // ENXIO: no controlling terminal
    }
    const job = TerminalJob.attach(fd, () => {});
    if (!job) {
      fs.closeSync(fd);
      return new ForegroundTerminal(-1, null);
    }
    const tty = new ForegroundTerminal(fd, job);
    holding.add(tty);
    return tty;
  }

  start(group: ForegroundGroup, exited: Promise<unknown>): void {
    const job = this.#job;
    if (!job) return;
    job.start({
      pid: group.pid,
      pgid: group.pgid,
      signal: (sig) => group.signal(sig),
    });
    exited.then(
      () => job.leaderExited(),
      () => job.leaderExited(),
    );
  }

  close(): void {
    holding.delete(this);
    const job = this.#job;
    this.#job = null;
    job?.end();
    if (this.#fd >= 0) fs.closeSync(this.#fd);
    this.#fd = -1;
  }
}
