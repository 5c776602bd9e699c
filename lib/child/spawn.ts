/**
 * SPEC Layer 2: `spawn`, the options wrapper around a {@link ./child.Child}: `signal`, `timeout`
 * and `killSignal` applied to the child, everything else validated by ./spawn-options.
 * @module
 */
import { startChild, startLeader, type Child } from './child';
import {
  prepareSpawn,
  readEnding,
  SPAWN_OPTIONS,
  type SpawnOptions,
  type SpawnRewrite,
} from './spawn-options';
import { readSpawnCall } from './spawn-call';

/**
 * Starts `file` with `args`, from the addon, and returns the {@link Child} that holds it.
 *
 * `file` is looked up in `PATH` as `execvp` does (the `env` option's `PATH` when given, else
 * this process's): `ENOENT`/`ENOTDIR` entries are skipped, `EACCES` is remembered and reported
 * if nothing runs. A failure to start throws here, synchronously, with `code`, `syscall`
 * (`'spawn'`, `'chdir'` or `'execve'`), `path` and `spawnargs`, and leaves no zombie. The child
 * gets a fresh signal mask and default dispositions (Node ignores SIGPIPE; the child does not).
 *
 * Throws `ERR_PROCPIN_SIGCHLD_IGNORED` when SIGCHLD is ignored in this process (SIG_IGN or
 * SA_NOCLDWAIT): the kernel would then reap every child at once and none could be held.
 *
 * @example
 * const child = spawn('sleep', ['1'], { stdio: 'ignore' });
 * const info = await child.exited; // a zombie now: pid and pgid still reserved
 * child.reap();
 */
export function spawn(file: string, args?: readonly string[], options?: SpawnOptions): Child;
export function spawn(file: string, options?: SpawnOptions): Child;
export function spawn(
  file: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
): Child {
  const [args, opts] = readSpawnCall(file, argsOrOptions, maybeOptions, SPAWN_OPTIONS, spawn);
  const { killSignal, timeout, abort } = readEnding(opts, spawn);
  const spec = prepareSpawn(file, args, opts, spawn);
  let child: Child | null = null;
  // The abort listener is added before anything starts: a look-alike signal whose
  // addEventListener throws leaves nothing running.
  const onAbort = () => child?.kill(killSignal);
  abort?.addEventListener('abort', onAbort, { once: true });
  try {
    child = startChild(spec);
  } catch (err) {
    abort?.removeEventListener('abort', onAbort);
    throw err;
  }
  const c = child;
  let timer: NodeJS.Timeout | null = null;
  if (timeout > 0) {
    // Unref'd: the child's own watch decides whether the event loop stays alive.
    timer = setTimeout(() => c.kill(killSignal), timeout);
    timer.unref();
  }
  if (abort?.aborted) queueMicrotask(onAbort); // as child_process: started, then stopped at once
  if (abort || timer) {
    const done = () => {
      if (timer) clearTimeout(timer);
      abort?.removeEventListener('abort', onAbort);
    };
    c.exited.then(done, done);
  }
  return c;
}

/**
 * @internal A group leader's spawn with the spec rewritten just before the addon gets it
 * (containment's hook). Options are read once, as {@link spawn} reads them; the child's own
 * `signal`, `timeout` and `killSignal` are the group's business and are not taken here.
 */
export function spawnRewritten(
  file: string,
  argsOrOptions?: readonly string[] | SpawnOptions,
  maybeOptions?: SpawnOptions,
  rewrite?: SpawnRewrite,
): Child {
  const known = SPAWN_OPTIONS.filter(
    (k) => k !== 'signal' && k !== 'timeout' && k !== 'killSignal',
  );
  const [args, opts] = readSpawnCall(file, argsOrOptions, maybeOptions, known, spawn);
  const spec = prepareSpawn(file, args, opts, spawn);
  return startLeader(rewrite ? rewrite(spec) : spec);
}
