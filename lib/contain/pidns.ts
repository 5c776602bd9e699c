/**
 * `contain: 'pidns'`: the command runs under `procpin-init` in a new pid namespace (and mount
 * namespace; a user namespace too when unprivileged). The group's `pid` is procpin-init's
 * (procpin's direct child); a signal to the group goes to it, and it passes it on to every
 * process of the namespace. When it dies (SIGKILL of the supervisor included: its parent-death
 * signal) the kernel kills the whole namespace.
 * @module
 */
import { binding, initExecutablePath, type NativeHeldFd } from '../binding';
import { Child, spawnRewritten, type SpawnOptions, type SpawnSpec } from '../child/child';
import type { WaitInfo } from '../waitinfo';
import { errnoException } from '../errors';
import { SIGNALS } from '../signals';
import { ContainmentRefused, readText, type Holder } from './common';

const { SIGKILL } = SIGNALS;
const STDIO_PIPE = -1;

/** @internal Why `contain: 'pidns'` cannot work here, as far as can be known without trying; or null. */
export function pidnsPrecheck(): string | null {
  if (initExecutablePath() === null) return 'procpin-init was not built next to the addon';
  if (process.geteuid?.() !== 0 && readText('/proc/sys/user/max_user_namespaces')?.trim() === '0') {
    return 'user namespaces are disabled (user.max_user_namespaces is 0)';
  }
  return null;
}

/**
 * @internal Starts procpin-init in front of the command; throws {@link ContainmentRefused} when
 * a namespace was refused, the command's execve error (for `caller`) when it could not run.
 */
export function spawnPidns(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  killSignal: number,
  grace: number,
  caller: (...a: never[]) => unknown,
): Child {
  const init = initExecutablePath() as string;
  const rewrite = (spec: SpawnSpec): SpawnSpec => {
    const errIndex = spec.stdio.length;
    return {
      ...spec,
      candidates: [init],
      argv: [
        init,
        String(errIndex),
        String(errIndex + 1),
        String(killSignal),
        String(grace),
        String(spec.candidates.length),
        ...spec.candidates,
        ...spec.argv,
      ],
      stdio: [...spec.stdio, STDIO_PIPE, STDIO_PIPE],
      internal: 2,
    };
  };
  const child = spawnRewritten(file, [...args], options, rewrite);
  const [fd = -1, statusFd = -1] = Child.takeInternalFds(child);
  // Both held by the addon: closed at the group's exit at the latest, or by the environment's
  // end when that comes first (a Worker's teardown runs no JavaScript).
  const errors = hold(fd);
  const status = hold(statusFd);
  const takeStatus = (): string => {
    errors?.close();
    return readStatus(status);
  };
  Child.mapExit(child, (info) => withCoreDump(info, takeStatus()));
  // procpin-init writes here what failed before the command's execve, which closes the last copy.
  // The end of the stream is the spawn's own wait, as vfork is for a plain one; but procpin-init
  // is a process that someone else may stop (SIGSTOP) or hold up: see startReport.
  const text = errors === null ? '' : startReport(errors, child.pid);
  let m: RegExpExecArray | null = null;
  let mntns = -1;
  for (const line of text.split('\n').slice(0, -1)) {
    const l = /^(\w+) (\d+)$/.exec(line);
    if (l === null) continue;
    if (l[1] !== 'mntns') {
      m = l;
      break;
    }
    mntns = Number(l[2]);
  }
  if (m === null) {
    if (mntns >= 0) holdMountNamespace(child, mntns);
    return child;
  }
  // Nothing of the command runs: procpin-init exits at once (and is made to, should it be stopped
  // after it said so); reap it as soon as it does.
  child.kill(SIGKILL);
  child.close();
  takeStatus();
  const stage = m[1] as string;
  const errno = -Number(m[2]);
  if (stage === 'exec') {
    throw errnoException(errno, 'execve', { path: file, spawnargs: [...args] }, caller);
  }
  const e = errnoException(errno, stage === 'mount' ? 'mount' : 'clone', {});
  throw new ContainmentRefused(
    stage === 'userns'
      ? `a user namespace was refused (${e.message})`
      : stage === 'mount'
        ? `the namespace's /proc could not be mounted (${e.message})`
        : `a pid namespace was refused (${e.message})`,
  );
}

// How long a spawn waits at most for procpin-init's report, and the slice between two looks at
// whether procpin-init is stopped.
const START_WAIT_MS = 1000;
const START_SLICE_MS = 2;

// procpin-init's report on the start, read up to its end: that comes within a few milliseconds
// (the command's execve closes it). Cut short, and the rest left unread, when a process of the
// start (procpin-init's two halves, the command before its execve) is stopped, or after
// START_WAIT_MS: the spawn then returns the running group without waiting for the stopped
// process, and a failure it meets once continued ends procpin-init as it ends the command: 127
// (not found), 126 (could not run), 125 (no namespace). Only whole lines are read here.
function startReport(errors: NativeHeldFd, pid: number): string {
  let text = '';
  const deadline = performance.now() + START_WAIT_MS;
  for (;;) {
    const r = errors.read(128, START_SLICE_MS);
    if (r instanceof Buffer && r.length > 0) {
      text += r.toString('latin1');
      continue;
    }
    // The end of the stream (or an error reading it: nothing more to learn there).
    if (r !== null) {
      errors.close();
      return text;
    }
    if (performance.now() >= deadline || startStopped(pid)) return text;
  }
}

// Whether procpin-init (`pid`, procpin's child), its inner half or the command before its
// execve is stopped (or stopped by a tracer), by the host's /proc.
function startStopped(pid: number, depth = 0): boolean {
  const st = binding.procStat(pid);
  if (typeof st === 'number') return false;
  if (st[0] === 'T' || st[0] === 't') return true;
  if (depth === 2) return false;
  const children = readText(`/proc/${pid}/task/${pid}/children`);
  if (children === null) return false;
  return children
    .split(' ')
    .filter((c) => c !== '')
    .some((c) => startStopped(Number(c), depth + 1));
}

// The namespace's mount namespace, from procpin-init's outer (which holds it as descriptor
// `outerFd`), held until the group's init has exited and then closed off the event loop: its
// teardown (the release of its mounts waits for an RCU grace period, about as long as the rest of
// a contained spawn) then neither delays the exit that reports the command's status nor blocks
// this thread. Opened through /proc/PID/fd of our own unreaped child: the number names no other
// process. When the outer is gone already, there is nothing to hold. Held by the addon, whose
// closer thread closes it (a close queued on the threadpool would be cancelled by the end of a
// Worker, and the descriptor left open), or the environment's end.
function holdMountNamespace(child: Child, outerFd: number): void {
  const held = binding.openHeld(`/proc/${child.pid}/fd/${outerFd}`);
  if (typeof held === 'number') return;
  const close = () => held.closeOffLoop();
  child.exited.then(close, close);
}

const CORE_DUMPED = 0x80;

// procpin-init's outer mirrors the command's death by a signal without dumping a core of its own
// (which would be written next to the command's, or sent to the system's crash handler): the
// command's raw wait status, written to the status descriptor just before, says whether the
// command's death dumped core. Read once, when the outer's exit is first seen.
function readStatus(held: NativeHeldFd | null): string {
  if (held === null) return '';
  try {
    const r = held.read(24, 0);
    // Nothing there: the outer died before it could say (killed from outside), or the inner,
    // which closes its copy first thing, was held up before it could.
    return r instanceof Buffer ? r.toString('latin1') : '';
  } finally {
    held.close();
  }
}

/** A descriptor the addon made, held by it (closed once, also at the environment's end); or null. */
function hold(fd: number): NativeHeldFd | null {
  if (fd < 0) return null;
  const h = binding.holdFd(fd);
  return typeof h === 'number' ? null : h;
}

function withCoreDump(info: WaitInfo, text: string): WaitInfo {
  const raw = /^(-?\d+)\n/.exec(text);
  if (raw === null || info.code !== 'CLD_KILLED') return info;
  const status = Number(raw[1]);
  const dumped = (status & CORE_DUMPED) !== 0 && (status & 0x7f) === info.status;
  return dumped ? { ...info, code: 'CLD_DUMPED' } : info;
}

// procpin-init's request for the group's final SIGKILL (SIGRTMAX), and how long it has to answer.
const KILL_ALL = 64;
const KILL_ALL_ANSWER_MS = 1000;

/** @internal The group's side of a pidns containment. */
export function pidnsHolder(child: Child, fallback: string[]): Holder {
  let backstop: NodeJS.Timeout | null = null;
  return {
    kind: 'pidns',
    fallback,
    // procpin-init passes it on to every process of the namespace. The group's SIGKILL is asked
    // of it (KILL_ALL): it SIGKILLs the namespace and then reports the command's own status, so a
    // command that died by killSignal is not reported as SIGKILLed for a member's sake. Should it
    // not answer (stopped, wedged), it gets the SIGKILL itself; its parent-death signal is the
    // backstop when the supervisor ends first.
    signal(sig) {
      if (sig !== SIGKILL) return child.kill(sig) ? 'ok' : 'ESRCH';
      if (!child.kill(KILL_ALL)) return 'ESRCH';
      if (backstop === null) {
        backstop = setTimeout(() => child.kill(SIGKILL), KILL_ALL_ANSWER_MS);
        backstop.unref();
        child.exited.then(
          () => clearTimeout(backstop ?? undefined),
          () => clearTimeout(backstop ?? undefined),
        );
      }
      return 'ok';
    },
    // procpin-init exits only once its namespace is empty (its pid 1's exit kills the rest).
    members() {
      return child.poll() === null ? 1 : 0;
    },
    release: () => Promise.resolve(),
  };
}
