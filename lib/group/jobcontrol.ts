/**
 * Terminal job control for `procpin run`, as a shell does it for a foreground job.
 *
 * When standard input is this process's controlling terminal:
 * (a) if procpin is in the terminal's foreground group, the child's group is given the
 *     foreground, so it can read the terminal and ^C / ^Z reach it (not procpin);
 * (b) when the leader is stopped (^Z, or a background read), procpin takes the terminal back,
 *     restores its own modes (keeping the job's), and stops its own group with the same signal, as
 *     the terminal would have stopped it; when continued in the foreground (`fg`), it gives the
 *     terminal and the job's modes back and continues the group. If procpin's group is orphaned
 *     (no shell to continue it) the kernel discards that stop and the job simply goes on;
 * (c) when the leader exits, and again at the end, the foreground and the terminal's modes are
 *     restored to what they were when procpin started.
 * Without a controlling terminal on standard input the group is simply its own.
 * @internal
 * @module
 */
import { binding } from '../binding';
import { constants, waitid } from '../primitives';

/** What job control needs of the group it runs. */
export interface Job {
  readonly pid: number;
  readonly pgid: number;
  signal(sig: NodeJS.Signals): boolean;
}

type Log = (line: string) => void;

const TTY_STOPS = new Set(['SIGTSTP', 'SIGTTIN', 'SIGTTOU']);

/**
 * A job on procpin's controlling terminal: hands the foreground to the job's group and back, and
 * passes the job's stops on to procpin's own group, as described in the module notes.
 */
export class TerminalJob {
  readonly #fd: number;
  readonly #ownPgrp: number;
  readonly #ownModes: Buffer | null;
  readonly #log: Log;
  #job: Job | null = null;
  #jobModes: Buffer | null = null;
  #gave = false;
  #active = false;

  private constructor(fd: number, ownPgrp: number, ownModes: Buffer | null, log: Log) {
    this.#fd = fd;
    this.#ownPgrp = ownPgrp;
    this.#ownModes = ownModes;
    this.#log = log;
  }

  /** Job control on `fd`, or null when `fd` is not this process's controlling terminal. */
  static attach(fd: number, log: Log): TerminalJob | null {
    // tcgetpgrp fails with ENOTTY for anything but our controlling terminal (a pipe, a file, or
    // a terminal that belongs to another session).
    if (binding.ttyGetForeground(fd) < 0) return null;
    const modes = binding.ttyGetAttr(fd);
    return new TerminalJob(fd, binding.getpgrp(), typeof modes === 'number' ? null : modes, log);
  }

  /** Starts watching `job`; gives it the terminal when procpin has the foreground. */
  start(job: Job): void {
    this.#job = job;
    this.#active = true;
    process.on('SIGCHLD', this.#onChild);
    process.on('SIGCONT', this.#onContinue);
    // The leader has run since the spawn, and a stop before the listener existed sent a SIGCHLD
    // that nobody saw; the stop itself stays reported until consumed, so look now.
    if (this.#foreground()) this.#give();
    else this.#onChild();
  }

  /** The leader exited: the job no longer needs the terminal. */
  leaderExited(): void {
    this.#active = false;
    this.#take();
  }

  /** Restores the terminal and stops watching. Idempotent. */
  end(): void {
    this.#active = false;
    process.off('SIGCHLD', this.#onChild);
    process.off('SIGCONT', this.#onContinue);
    this.#take();
  }

  #foreground(): boolean {
    return binding.ttyGetForeground(this.#fd) === this.#ownPgrp;
  }

  #give(): void {
    const job = this.#job;
    if (!job) return;
    if (this.#jobModes) binding.ttySetAttr(this.#fd, this.#jobModes);
    const r = binding.ttySetForeground(this.#fd, job.pgid);
    if (r < 0) {
      this.#log(`terminal: cannot give the foreground to group ${job.pgid} (errno ${-r})`);
      return;
    }
    this.#gave = true;
    this.#log(`terminal: foreground is group ${job.pgid}`);
    // The leader ran before it had the foreground; had it touched the terminal meanwhile it
    // would be stopped (SIGTTIN/SIGTTOU). That stop is consumed here and the group continued.
    const stopped = this.#leaderStop();
    if (stopped) job.signal('SIGCONT');
  }

  #take(): void {
    const job = this.#job;
    if (!job || !this.#gave) return;
    if (binding.ttyGetForeground(this.#fd) === job.pgid) {
      const modes = binding.ttyGetAttr(this.#fd);
      this.#jobModes = typeof modes === 'number' ? null : modes;
      binding.ttySetForeground(this.#fd, this.#ownPgrp);
      this.#log(`terminal: foreground is procpin's group ${this.#ownPgrp} again`);
    }
    if (this.#ownModes) binding.ttySetAttr(this.#fd, this.#ownModes);
    this.#gave = false;
  }

  /** The leader's pending stop report, consumed (WSTOPPED without WNOWAIT), or null. */
  #leaderStop(): string | null {
    const job = this.#job;
    if (!job) return null;
    try {
      const info = waitid(constants.P_PID, job.pid, constants.WSTOPPED | constants.WNOHANG);
      return info && info.code === 'CLD_STOPPED' ? (info.signal ?? 'SIGSTOP') : null;
    } catch {
      return null; // ECHILD: reaped already
    }
  }

  readonly #onChild = (): void => {
    if (!this.#active) return;
    const sig = this.#leaderStop();
    if (!sig) return;
    const job = this.#job;
    if (!job) return;
    if (sig === 'SIGTTIN' || sig === 'SIGTTOU') {
      const fg = binding.ttyGetForeground(this.#fd);
      if (fg === job.pgid) {
        // The terminal stops only background groups: the job touched the terminal in the moment
        // before it was given the foreground, and the stop took effect after the check in #give.
        job.signal('SIGCONT');
        return;
      }
      if (fg === this.#ownPgrp) {
        // procpin was brought to the foreground while it ran in the background (a shell's `fg`
        // sends no SIGCONT to a running job): the job wants the terminal, and procpin has it.
        this.#resume();
        return;
      }
    }
    this.#log(`group ${job.pgid} stopped by ${sig}`);
    this.#take();
    // Stop procpin's own group as the terminal would have, had it had the foreground: the shell
    // that started procpin then sees its job stopped. For the main thread this takes effect on
    // the return from kill(2), so the line after it runs once procpin is continued. An orphaned
    // group is not stopped by these signals (nobody could continue it): then it runs at once.
    process.kill(0, TTY_STOPS.has(sig) ? sig : 'SIGTSTP');
    this.#resume();
  };

  readonly #onContinue = (): void => {
    if (this.#active && !this.#gave && this.#foreground()) this.#resume();
  };

  #resume(): void {
    if (!this.#active || !this.#job) return;
    if (this.#foreground()) this.#give();
    this.#job.signal('SIGCONT');
  }
}
