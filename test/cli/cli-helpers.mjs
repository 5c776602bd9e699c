// Helpers for the procpin command's tests: run bin/procpin as a user would, headless (pipes, no
// controlling terminal on standard input).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fdTarget, openFds, procStatus, root } from '../helpers.mjs';

export const bin = join(root, 'bin', 'procpin');

/**
 * Starts `procpin ...args` (options: env, input, timeout, wrapper, nodeArgs). Returns { child, result, exited, line }: `result` resolves with
 * { code, signal, stdout, stderr, ms } once procpin exited and its output closed, `exited` with
 * { code, signal, ms } as soon as procpin exited, and `line()` with the next stdout line.
 * @typedef {{ env?: Record<string, string | undefined>, input?: string | Buffer, timeout?: number,
 *   wrapper?: readonly string[], nodeArgs?: readonly string[] }} StartOptions
 * @param {readonly string[]} args
 * @param {StartOptions} [options]
 */
export function start(args, { env = {}, input, timeout = 30000, wrapper = [], nodeArgs = [] } = {}) {
  const t0 = Date.now();
  // `wrapper`: a program that runs node (the old-kernel filter); `nodeArgs`: node's own options.
  const argv = [...wrapper, process.execPath, ...nodeArgs, bin, ...args];
  const child = spawn(argv[0], argv.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters = [];
  let consumed = 0;
  const wake = () => {
    while (waiters.length) {
      const nl = stdout.indexOf('\n', consumed);
      if (nl < 0) return;
      const line = stdout.slice(consumed, nl);
      consumed = nl + 1;
      waiters.shift()(line);
    }
  };
  child.stdout.on('data', (d) => {
    stdout += d;
    wake();
  });
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
  const result = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      for (const w of waiters.splice(0)) w(null);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 });
    });
  });
  // 'exit': procpin is gone, though a survivor may still hold its output open.
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, ms: Date.now() - t0 })),
  );
  if (input !== undefined) child.stdin.end(input);
  const line = () =>
    new Promise((resolve) => {
      waiters.push(resolve);
      wake();
    });
  return { child, result, exited, line };
}

/**
 * Runs `procpin ...args` to the end.
 * @param {readonly string[]} args
 * @param {StartOptions} [options]
 */
export function procpin(args, options) {
  return start(args, { input: '', ...options }).result;
}

/** The number of pidfds process `pid` holds open. */
export function pidfdCount(pid) {
  let fds;
  try {
    fds = openFds(pid);
  } catch {
    return 0;
  }
  return fds.filter((fd) => fdTarget(fd, pid) === 'anon_inode:[pidfd]').length;
}

/** The signals pending for `pid` (thread and shared) as a bit mask, or null when it is gone. */
export function pendingSignals(pid) {
  let status;
  try {
    status = procStatus(pid);
  } catch {
    return null;
  }
  const mask = (key) => BigInt(`0x${status[key] ?? '0'}`);
  return mask('SigPnd') | mask('ShdPnd');
}
