/**
 * How a `procpin/child_process` child reports: the events of a failed start, and the watch that
 * turns the group's exit and cleanup into `'exit'` and `'close'`.
 * @module
 */
import { PassThrough, type Readable } from 'node:stream';
import { errnoException } from '../errors';
import type { ProcessGroup, SpawnGroupOptions } from '../group/group';
import { streamsClosed } from '../group/output';
import { ChildProcess, type SpawnError } from './process';

export function failedStart(
  spawnfile: string,
  spawnargs: string[],
  stdio: SpawnGroupOptions['stdio'],
  errno: number,
): ChildProcess {
  // child_process hands out stream objects even when the start fails (a supervisor may attach
  // listeners right after spawn): ended ones here, for each 'pipe' entry.
  const list =
    stdio === undefined || typeof stdio === 'string' ? [stdio, stdio, stdio] : [...stdio];
  while (list.length < 3) list.push(undefined);
  const streams = list.map((e, i) => {
    if (!(e === 'pipe' || ((e === null || e === undefined) && i < 3))) return null;
    const s = new PassThrough();
    if (i === 0) s.destroy();
    else s.end().resume();
    return s;
  });
  const c = new ChildProcess(spawnfile, spawnargs, null, streams);
  process.nextTick(() => {
    c.exitCode = errno; // as child_process: null until the 'error' is emitted
    const err = errnoException(errno, `spawn ${spawnfile}`) as unknown as SpawnError;
    err.message = `spawn ${spawnfile} ${err.code}`;
    err.path = spawnfile;
    err.spawnargs = spawnargs.slice(1);
    c.emit('error', err);
    const closing = streamsClosed(streams).then(() => {
      c.markClosed();
      c.emit('close', errno, null);
    });
    closing.catch(uncaught);
  });
  return c;
}

/** Rethrows a listener's throw outside the promise chain: an uncaught exception, as child_process has it. */
function uncaught(err: unknown): void {
  process.nextTick(() => {
    throw err;
  });
}

export function watch(c: ChildProcess, group: ProcessGroup, done: () => void): void {
  const exiting = group.exited.then(
    (info) => {
      if (info.signal !== null) c.signalCode = info.signal as NodeJS.Signals;
      else c.exitCode = info.exitCode;
      done();
      // As child_process does at exit: stdin is destroyed, so a late write is no EPIPE 'error'.
      c.stdin?.destroy();
      c.emit('exit', c.exitCode, c.signalCode);
      // As child_process does at exit: output nobody reads is drained, so that 'close' comes.
      for (let i = 1; i < c.stdio.length; i++) {
        const s = c.stdio[i] as Readable | null;
        if (s && s.readable && s.readableFlowing === null && s.listenerCount('readable') === 0)
          s.resume();
      }
    },
    () => done(),
  );
  exiting.catch(uncaught);
  const streams = c.stdio.slice(1);
  const closing = group.closed.then(
    (result) =>
      streamsClosed(streams).then(() => {
        // A leader whose status was lost still closes; its code and signal are what the group says.
        if (c.exitCode === null && c.signalCode === null) {
          if (result.signal !== null) c.signalCode = result.signal as NodeJS.Signals;
          else c.exitCode = result.exitCode;
        }
        c.markClosed();
        c.emit('close', c.exitCode, c.signalCode);
      }),
    (err: unknown) => {
      // The leader was lost to a foreign reaper (ERR_PROCPIN_CHILD_LOST): said to whoever
      // listens, never an uncaught 'error' that child_process would not have thrown either.
      c.markClosed();
      if (c.listenerCount('error') > 0) c.emit('error', err);
      c.emit('close', c.exitCode, c.signalCode);
    },
  );
  closing.catch(uncaught);
}
