/**
 * What every command shares: its output and the library, loaded only when a command runs, so
 * that `--help` and usage errors work (and procpin's own failure is reported as 125) even where
 * the addon cannot be loaded.
 * @internal
 * @module
 */
import * as fs from 'node:fs';

export type Library = typeof import('../index');

/** The library; throws when the addon cannot be loaded. */
export function library(): Library {
  return require('../index') as Library;
}

/** The library, or null after saying on stderr why it cannot load (the caller exits 125). */
export function loadLibrary(): Library | null {
  try {
    return library();
  } catch (e) {
    err(`procpin: cannot load procpin: ${firstLine(e)}\n`);
    return null;
  }
}

// Direct writes to the descriptors: procpin never touches process.stdout/stderr, whose creation
// on a terminal reopens it (and makes descriptor 1 or 2 close-on-exec) before the child inherits it.
function write(fd: number, text: string): void {
  const buf = Buffer.from(text);
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'EAGAIN') continue; // a non-blocking pipe we inherited: try again
      if (code === 'EPIPE') return;
      throw e;
    }
  }
}

export function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split('\n')[0] ?? '';
}

/** Writes to standard output. */
export const out = (text: string): void => write(1, text);
/** Writes to standard error. */
export const err = (text: string): void => write(2, text);
