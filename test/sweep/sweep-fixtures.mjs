// Fixtures for the sweep tests: real dead pids, live children, dead and live sockets, lock
// holders in other processes. Every wait is for a condition, with a bound.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, lstatSync } from 'node:fs';
import { isGone, pkg, tmpDirFor, waitFor } from '../helpers.mjs';

/** A temporary directory removed after the test `t`. */
export function scratch(t) {
  const d = tmpDirFor(t, 'procpin-sweep-');
  return d;
}

/** A pid that named a real process which has exited and been reaped (read before the wait). */
export async function deadPid() {
  const c = spawn('/bin/true', { stdio: 'ignore' });
  const pid = c.pid;
  await once(c, 'exit');
  await waitFor(() => isGone(pid), { what: `pid ${pid} gone` });
  return pid;
}

/** A live child (`sleep`), killed by `stop()`. */
export function liveChild() {
  const c = spawn('sleep', ['300'], { stdio: 'ignore' });
  return {
    pid: c.pid,
    async stop() {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit');
      }
    },
  };
}

/**
 * Runs `code` (an ES module body; `procpin` and `fs` are in scope) in a child node process that
 * prints "ready" when set up and then waits until killed. Resolves once it is ready.
 */
export async function holder(code) {
  const src = `import * as procpin from ${pkg}; import fs from 'node:fs'; import net from 'node:net';
${code}
process.stdout.write('ready\\n');
setInterval(() => {}, 1 << 30);`;
  const c = spawn(process.execPath, ['--input-type=module', '-e', src], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // 'close' comes after 'exit', once our end of its stdout pipe is closed too.
  const closed = once(c, 'close');
  let out = '';
  c.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('ready') || c.exitCode !== null, {
    timeout: 10000,
    what: 'holder ready',
  });
  if (!out.includes('ready')) throw new Error(`holder exited ${c.exitCode}`);
  return {
    pid: c.pid,
    output: () => out,
    /** SIGKILLs it and waits until it is reaped and its pipe closed. */
    async kill() {
      if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await closed;
    },
  };
}

/** A unix socket file at `path` whose server was SIGKILLed: nobody listens, the file stays. */
export async function deadSocket(path) {
  const h = await holder(`await new Promise((r) => net.createServer().listen(${JSON.stringify(path)}, r));`);
  await h.kill();
  if (!lstatSync(path).isSocket()) throw new Error('no socket left behind');
}

/** A process that holds an exclusive flock on `path` (opened like a sweeper would). */
export function lockHolder(path, { dir = false } = {}) {
  const flags = dir ? 'fs.constants.O_RDONLY | fs.constants.O_DIRECTORY' : 'fs.constants.O_RDONLY';
  return holder(`const fd = fs.openSync(${JSON.stringify(path)}, ${flags});
procpin.flockSync(fd, procpin.constants.LOCK_EX | procpin.constants.LOCK_NB);`);
}

export function names(list) {
  return list.map((e) => e.name).sort();
}

export function exists(p) {
  try {
    lstatSync(p);
    return true;
  } catch {
    return existsSync(p);
  }
}

/** What a report kept, and why: `[name, reason]` in the report's order. */
export function keptReasons(report) {
  return report.kept.map((e) => [e.name, e.reason]);
}
