// Shared test helpers: read the kernel's own record of processes, wait for conditions with a
// bound (never a fixed sleep), and make "needs root / a kernel feature" fail under CI=true.
import assert from 'node:assert/strict';
import { spawn as cpSpawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const fixtures = join(root, 'test', 'fixtures');
export const CI = process.env.CI === 'true' || process.env.CI === '1';
/**
 * The test build of the addon (scripts/build-test.sh: the production sources plus the test-only
 * hooks), or the build PROCPIN_TEST_BINDING names (the sanitizer run's). Test files that steer a
 * hook load it through test/use-test-build.mjs.
 */
export const testBinding =
  process.env.PROCPIN_TEST_BINDING || join(root, 'build-test', 'src', 'build', 'Release', 'procpin.node');

// The kernel's record of processes and locks: one reader, shared with fixtures and bench.
export {
  isGone,
  liveMembers,
  ourLocks,
  ourZombies,
  parseStat,
  procLib,
  procLocks,
  procsWhere,
  procStat,
  procState,
} from './lib/proc.mjs';

/** `/proc/PID/status` as a map. */
export function procStatus(pid) {
  const out = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}

/** Descriptor numbers open in this process. */
export function openFds(pid = 'self') {
  return readdirSync(`/proc/${pid}/fd`)
    .map(Number)
    .sort((a, b) => a - b);
}

export function fdTarget(fd, pid = 'self') {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return null;
  }
}

/** Waits until `cond()` is truthy, polling; throws after `timeout` ms with `what`. */
export async function waitFor(cond, { timeout = 5000, interval = 5, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Waits until the file at `path` holds whole JSON (another process writes it), then returns it parsed. */
export function waitForJson(path, { timeout = 10000, what = `JSON in ${path}` } = {}) {
  return waitFor(
    () => {
      try {
        return JSON.parse(readFileSync(path, 'utf8'));
      } catch {
        return null;
      }
    },
    { timeout, what },
  );
}

/**
 * For tests that need something of the machine (root, a kernel feature, a tool). Outside CI a
 * missing need skips the test; under CI=true it fails, so a green CI never hides a skip.
 */
export function need(t, ok, why) {
  if (ok) return true;
  if (CI) throw new Error(`required under CI: ${why}`);
  t.skip(why);
  return false;
}

export const isRoot = process.getuid?.() === 0;

export function tmpDir(prefix = 'procpin-test-') {
  const d = mkdtempSync(join(tmpdir(), prefix));
  return { path: d, [Symbol.dispose]: () => rmSync(d, { recursive: true, force: true }) };
}

/** A {@link tmpDir} removed after the test `t`. */
export function tmpDirFor(t, prefix) {
  const d = tmpDir(prefix);
  t.after(() => d[Symbol.dispose]());
  return d;
}

/**
 * Runs a command; resolves with { code, signal, stdout, stderr }; SIGKILLs it after `timeout` ms.
 * `env` adds variables; `extraStdio` gives child_process stdio entries for descriptors 3 and up.
 * @typedef {{ env?: Record<string, string | undefined>, timeout?: number, input?: string | Buffer,
 *   extraStdio?: Array<import('node:child_process').IOType | 'ipc' | number | import('node:stream').Stream | null> }} RunOptions
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }} RunResult
 * @param {string} cmd
 * @param {readonly string[]} args
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
export function runCmd(cmd, args, { env = {}, timeout = 30000, input, extraStdio = [] } = {}) {
  return new Promise((resolve, reject) => {
    const child = cpSpawn(cmd, args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe', ...extraStdio],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.on('error', () => {}); // EPIPE: a child that exits without reading its stdin
    if (input) child.stdin.end(input);
    else child.stdin.end();
  });
}

/**
 * Runs a node ES module (code string) in a child process; resolves as {@link runCmd}.
 * @param {string} code
 * @param {RunOptions & { args?: readonly string[] }} [options]
 * @returns {Promise<RunResult>}
 */
export function runNode(code, { args = [], ...options } = {}) {
  return runCmd(process.execPath, ['--input-type=module', '-e', code, ...args], options);
}

/**
 * Asserts that a run exited with status 0 and was not killed by a signal (its stderr the message
 * of either failure), and returns its stdout.
 * @param {RunResult} r
 * @returns {string}
 */
export function exitedZero(r) {
  assert.equal(r.signal, null, r.stderr);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

export function sh(cmd) {
  return spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
}

/** import specifier of the built package, for code run in child processes. */
export const pkg = JSON.stringify(join(root, 'dist', 'index.js'));

/**
 * A group's result (what `closed` resolves with) as a test expects it: every flag false and no
 * exit status, but for the `fields` given.
 */
export function groupResult(fields = {}) {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    aborted: false,
    stoppedWhileRunning: false,
    killed: false,
    ...fields,
  };
}

/**
 * Runs `cmd` with sh on a new pseudo-terminal (script(1)); `steps` are [text to wait for, bytes to
 * type] pairs, typed in order as their text appears. Resolves with the whole output (CRLF as LF)
 * and script's status once it ends; killed after `timeout` ms.
 * @param {string} cmd
 * @param {{ steps?: [string, string][], timeout?: number }} [options]
 * @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null, out: string }>}
 */
export function onTerminal(cmd, { steps = [], timeout = 20000 } = {}) {
  const child = cpSpawn('script', ['-qec', cmd, '/dev/null'], {
    env: { ...process.env, SHELL: '/bin/sh' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let next = 0;
  const onData = (/** @type {Buffer} */ d) => {
    out += d;
    while (next < steps.length && out.replace(/\r\n/g, '\n').includes(steps[next][0])) {
      child.stdin.write(steps[next][1]);
      next++;
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeout);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin.end();
      resolve({ code, signal, out: out.replace(/\r\n/g, '\n') });
    });
  });
}
