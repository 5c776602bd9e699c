// Running code as if on an old kernel (Linux < 5.3: no pidfds, no clone3, no close_range).
//
//   import { runOldKernel, oldKernelAvailable } from './oldkernel.mjs';
//   const r = await runOldKernel(`import * as p from ${pkg}; ...`, { timeout: 20000 });
//   // r: { code, signal, stdout, stderr }, as helpers.runNode gives
//
// runOldKernel(code, options) runs `node --input-type=module -e code` under
// test/fixtures/oldkernel.c, a seccomp filter (inherited by everything below it) that answers
// ENOSYS to pidfd_open, clone3, close_range, pidfd_send_signal, pidfd_getfd and to clone with
// CLONE_PIDFD, and EINVAL to waitid(P_PIDFD). Options are runNode's (args, env, timeout, input)
// plus `extraStdio`: child_process stdio entries for the node process's descriptors 3 and up
// (e.g. to hand it an inherited descriptor without close-on-exec at fd 100).
//
// With PROCPIN_OLDKERNEL_ERRNO=EPERM in this process's environment (or `errno: 'EPERM'` in the
// options) the filter answers EPERM wherever it would answer ENOSYS: a container runtime's
// default seccomp profile. `oldKernelErrno` is the code the tests expect from the missing calls.
//
// The filter program is compiled with `cc` into test/.tmp/ on first use. oldKernelAvailable()
// says whether that worked; tests should `need(t, oldKernelAvailable(), 'cc and seccomp')`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { root, runCmd } from './helpers.mjs';

export const tmp = join(root, 'test', '.tmp');

/**
 * Compiles test/fixtures/<name>.c into test/.tmp/<output> (once, or again when the source is
 * or test/fixtures/seccomp-exec.h is newer). `shared: true` builds a shared library. Returns the output path, or null when `cc`
 * failed (its message in compileC.lastError).
 */
export function compileC(name, { output = name, shared = false } = {}) {
  const src = join(root, 'test', 'fixtures', `${name}.c`);
  const out = join(tmp, output);
  const header = join(root, 'test', 'fixtures', 'seccomp-exec.h'); // included by some fixtures
  const newest = Math.max(statSync(src).mtimeMs, statSync(header).mtimeMs);
  if (existsSync(out) && statSync(out).mtimeMs >= newest) return out;
  mkdirSync(tmp, { recursive: true });
  const partial = `${out}.${process.pid}.tmp`;
  const flags = shared ? ['-shared', '-fPIC'] : [];
  const r = spawnSync('cc', ['-O2', '-Wall', ...flags, '-o', partial, src], { encoding: 'utf8' });
  if (r.status !== 0) {
    compileC.lastError = r.error?.message ?? r.stderr;
    return null;
  }
  renameSync(partial, out); // atomic: a concurrent user sees the old file or the new one
  return out;
}
compileC.lastError = '';

let checked;
/** The filter program's path, or null when it cannot be built or installed here. */
export function oldKernelBinary() {
  if (checked !== undefined) return checked;
  const bin = compileC('oldkernel');
  checked = null;
  if (bin) {
    const probe = spawnSync(bin, ['true']);
    if (probe.status === 0) checked = bin;
  }
  return checked;
}

export function oldKernelAvailable() {
  return oldKernelBinary() !== null;
}

/** What the filter answers for a missing call: 'ENOSYS' (an old kernel) or 'EPERM' (a container policy). */
export const oldKernelErrno = process.env.PROCPIN_OLDKERNEL_ERRNO === 'EPERM' ? 'EPERM' : 'ENOSYS';

/**
 * Runs a node ES module (code string) under the filter: resolves with { code, signal, stdout, stderr }.
 * @param {string} code
 * @param {import('./helpers.mjs').RunOptions & { args?: readonly string[], errno?: string }} [options]
 * @returns {Promise<import('./helpers.mjs').RunResult>}
 */
export function runOldKernel(code, { args = [], errno = oldKernelErrno, env = {}, ...options } = {}) {
  const bin = oldKernelBinary();
  if (!bin) return Promise.reject(new Error(`oldkernel unavailable: ${compileC.lastError}`));
  return runCmd(bin, [process.execPath, '--input-type=module', '-e', code, ...args], {
    timeout: 30000,
    ...options,
    env: { ...env, PROCPIN_OLDKERNEL_ERRNO: errno },
  });
}
