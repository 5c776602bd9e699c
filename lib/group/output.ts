/**
 * Collecting what a child or a group writes: stdout and stderr as strings or Buffers, with a
 * size limit, as execa's result and child_process's `exec` give them.
 * @module
 */
import type { Readable, Writable, Duplex } from 'node:stream';
import { Child } from '../child/child';
import { codedError } from '../errors';
import { ProcessGroup } from './group';
import type { GroupResult } from './logic';
import { invalidArgType, invalidArgValue, readOptions, validateInteger } from '../validate';
import type { WaitInfo } from '../waitinfo';
import { validateSignal, type Signal } from '../signals';

/** Options of {@link collectOutput}. */
export interface CollectOptions {
  /** `'utf8'` (default) and the other Buffer encodings give strings; `'buffer'` gives Buffers. */
  encoding?: BufferEncoding | 'buffer' | undefined;
  /**
   * Bytes allowed on stdout and on stderr, each (default 1 MiB, as child_process's `exec`). More
   * stops the child or group and rejects with `ERR_CHILD_PROCESS_STDIO_MAXBUFFER`.
   */
  maxBuffer?: number | undefined;
  /** For a Child: what an overflow sends it (default `'SIGTERM'`). A group is stopped as usual. */
  killSignal?: Signal | undefined;
}

/** What {@link collectOutput} resolves with for a group: its result and its output. */
export type GroupOutput<T extends string | Buffer = string> = GroupResult & {
  stdout: T;
  stderr: T;
};
/** What {@link collectOutput} resolves with for a Child: how it ended and its output. */
export type ChildOutput<T extends string | Buffer = string> = WaitInfo & { stdout: T; stderr: T };

/** The rejection of an overflow: what was collected (up to the limit) and how it ended. */
export interface MaxBufferError<T extends string | Buffer = string> extends RangeError {
  code: 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER';
  stdout: T;
  stderr: T;
  /** The group's result (or the Child's exit) once it was stopped. */
  result: GroupResult | WaitInfo;
}

type Target = Child | ProcessGroup | { readonly group: ProcessGroup | null };

/**
 * Collects stdout and stderr (those that are pipes) of a {@link Child}, a {@link ProcessGroup}
 * or a `procpin/child_process` child, and resolves once the streams ended and it finished: a
 * group once it was cleaned and its leader reaped (with its {@link GroupResult}), a Child once it
 * exited (with its {@link WaitInfo}; the Child is not reaped). More than `maxBuffer` bytes on
 * either stream stops it (a group: its usual cleanup) and rejects, after that, with
 * `ERR_CHILD_PROCESS_STDIO_MAXBUFFER`.
 *
 * @example
 * const jobs = files.map((f) => collectOutput(spawnGroup('node', ['--test', f], { timeout: 30_000 })));
 * for (const { exitCode, timedOut, stdout } of await Promise.all(jobs)) console.log(exitCode, timedOut, stdout);
 */
export function collectOutput(
  target: ProcessGroup | { readonly group: ProcessGroup | null },
  options: CollectOptions & { encoding: 'buffer' },
): Promise<GroupOutput<Buffer>>;
export function collectOutput(
  target: ProcessGroup | { readonly group: ProcessGroup | null },
  options?: CollectOptions,
): Promise<GroupOutput<string>>;
export function collectOutput(
  target: Child,
  options: CollectOptions & { encoding: 'buffer' },
): Promise<ChildOutput<Buffer>>;
export function collectOutput(
  target: Child,
  options?: CollectOptions,
): Promise<ChildOutput<string>>;
export function collectOutput(
  target: Target,
  options?: CollectOptions,
): Promise<GroupOutput<string | Buffer> | ChildOutput<string | Buffer>> {
  let o: Partial<CollectOptions>;
  let maxBuffer: number;
  let killSignal: number;
  let group: ProcessGroup | null = null;
  let child: Child | null = null;
  try {
    o = readOptions<CollectOptions>(
      options,
      'options',
      ['encoding', 'maxBuffer', 'killSignal'],
      collectOutput,
    );
    maxBuffer = validateInteger(
      o.maxBuffer ?? 1024 * 1024,
      'options.maxBuffer',
      0,
      Number.MAX_SAFE_INTEGER,
      collectOutput,
    );
    killSignal = validateSignal(o.killSignal ?? 'SIGTERM', 'options.killSignal', collectOutput);
    if (o.encoding !== undefined && o.encoding !== 'buffer' && !Buffer.isEncoding(o.encoding)) {
      throw invalidArgValue(
        'options.encoding',
        o.encoding,
        "must be a Buffer encoding or 'buffer'",
        collectOutput,
      );
    }
    if (target instanceof ProcessGroup) group = target;
    else if (target instanceof Child) child = target;
    else if (
      target !== null &&
      typeof target === 'object' &&
      (target as { group?: unknown }).group instanceof ProcessGroup
    ) {
      group = (target as { group: ProcessGroup }).group;
    } else {
      throw invalidArgType(
        'target',
        'a Child, a ProcessGroup or a procpin/child_process child',
        target,
        collectOutput,
      );
    }
  } catch (err) {
    return Promise.reject(err);
  }
  const encoding = o.encoding ?? 'utf8';
  const leader = group ? group.leader : (child as Child);
  const decode = (chunks: Buffer[]) => {
    const b = Buffer.concat(chunks);
    return encoding === 'buffer' ? b : b.toString(encoding);
  };
  let overflow: string | null = null;
  const stop = (): void => {
    if (group) void group.stop();
    else child?.kill(killSignal);
  };
  const read = (stream: Readable | null, name: string) => {
    const chunks: Buffer[] = [];
    let size = 0;
    if (!stream) return { chunks, done: Promise.resolve() };
    const done = new Promise<void>((resolve) => {
      stream.on('data', (chunk: Buffer | string) => {
        const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        if (size + b.length > maxBuffer) {
          chunks.push(b.subarray(0, maxBuffer - size));
          size = maxBuffer;
          if (overflow === null) {
            overflow = name;
            stop();
          }
          stream.destroy();
          return;
        }
        size += b.length;
        chunks.push(b);
      });
      stream.once('close', () => resolve());
      stream.once('error', () => resolve());
    });
    return { chunks, done };
  };
  const out = read(leader.stdout, 'stdout');
  const err = read(leader.stderr, 'stderr');
  const finished: Promise<GroupResult | WaitInfo> = group ? group.closed : leader.exited;
  return Promise.all([finished, out.done, err.done]).then(([result]) => {
    const stdout = decode(out.chunks);
    const stderr = decode(err.chunks);
    if (overflow !== null) {
      throw codedError<MaxBufferError<string | Buffer>>(
        RangeError,
        'ERR_CHILD_PROCESS_STDIO_MAXBUFFER',
        `${overflow} maxBuffer length exceeded`,
        collectOutput,
        { stdout, stderr, result },
      );
    }
    return { ...result, stdout, stderr };
  });
}

/**
 * Resolves when every stdio stream of a Child or group (descriptors 1 and up, those that are
 * pipes) has closed: its output has been read to the end. The streams are not read here: read
 * (or `resume()`) them, or this never resolves while a pipe is full.
 */
export function stdioEnded(target: Child | ProcessGroup): Promise<void> {
  const leader = target instanceof ProcessGroup ? target.leader : target;
  return streamsClosed(leader.stdio.slice(1));
}

/** Resolves when each of `streams` has closed. @internal */
export function streamsClosed(
  streams: ReadonlyArray<Readable | Writable | Duplex | null | undefined>,
): Promise<void> {
  return Promise.all(
    streams.map((s) =>
      !s || (s as { closed?: boolean }).closed || s.destroyed
        ? Promise.resolve()
        : new Promise<void>((resolve) => s.once('close', () => resolve())),
    ),
  ).then(() => {});
}
