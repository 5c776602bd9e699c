// Shared test helpers: read the kernel's own record of processes, wait for conditions with a
// bound (never a fixed sleep), and make "needs root / a kernel feature" fail under CI=true.
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
export const testBinding = process.env.PROCPIN_TEST_BINDING || join(root, 'build-test', 'src', 'build', 'Release', 'procpin.node');

/** `/proc/PID/stat` fields, or null when the pid is gone. */
export function procStat(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = s.lastIndexOf(')');
  const rest = s.slice(close + 2).split(' ');
  return {
    pid,
    comm: s.slice(s.indexOf('(') + 1, close),
    state: rest[0],
    ppid: Number(rest[1]),
    pgid: Number(rest[2]),
    sid: Number(rest[3]),
  };
}

/** The one-letter state, or null when the pid is gone. */
export function procState(pid) {
  return procStat(pid)?.state ?? null;
}

/** Gone from the kernel's point of view: no entry, or a zombie / dead (PID 1 reaps late here). */
export function isGone(pid) {
  const st = procState(pid);
  return st === null || st === 'Z' || st === 'X';
}

/** `/proc/PID/status` as a map. */
export function procStatus(pid) {
  const out = {};
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}

/** Live (non-zombie) processes whose pgid is `pgid`. */
export function liveMembers(pgid) {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.pgid === pgid && st.state !== 'Z' && st.state !== 'X') out.push(st);
  }
  return out;
}

/** Zombie children of this process (pids): what a leak of unreaped children looks like. */
export function ourZombies() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const st = procStat(Number(name));
    if (st && st.ppid === process.pid && st.state === 'Z') out.push(st.pid);
  }
  return out;
}

/** Descriptor numbers open in this process. */
export function openFds(pid = 'self') {
  return readdirSync(`/proc/${pid}/fd`).map(Number).sort((a, b) => a - b);
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

/**
 * Runs a command; resolves with { code, signal, stdout, stderr }; SIGKILLs it after `timeout` ms.
 * `env` adds variables; `extraStdio` gives child_process stdio entries for descriptors 3 and up.
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

/** Runs a node ES module (code string) in a child process; resolves as {@link runCmd}. */
export function runNode(code, { args = [], ...options } = {}) {
  return runCmd(process.execPath, ['--input-type=module', '-e', code, ...args], options);
}

export function sh(cmd) {
  return spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
}

/** import specifier of the built package, for code run in child processes. */
export const pkg = JSON.stringify(join(root, 'dist', 'index.js'));
