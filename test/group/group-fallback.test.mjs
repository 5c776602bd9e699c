// The group tests again through the fallbacks: group signals by kill(-pgid) while the leader is
// reserved (forced on this kernel by PROCPIN_NO_PIDFD_GROUP=1), and on a simulated old kernel
// (seccomp: no pidfd_open, clone3, pidfd_send_signal, close_range, waitid(P_PIDFD)), once answering
// ENOSYS as an old kernel does and once EPERM as a container runtime's default profile does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { need } from '../helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// group.test.mjs split by concern: the three files are the group tests against real processes.
const groupTests = ['group.test.mjs', 'group-deadline.test.mjs', 'group-start.test.mjs'].map((f) => join(here, f));

function nodeTest(files, env, wrap = (argv) => argv) {
  return new Promise((resolve, reject) => {
    const [cmd, ...args] = wrap([process.execPath, '--test', '--test-reporter=tap', ...files]);
    // Not a nested run of this runner: the file runs as a test run of its own.
    const childEnv = { ...process.env, ...env };
    delete childEnv.NODE_TEST_CONTEXT;
    const cp = spawn(cmd, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    cp.stdout.on('data', (d) => (out += d));
    cp.stderr.on('data', (d) => (out += d));
    cp.on('error', reject);
    cp.on('close', (code) => resolve({ code, out }));
  });
}

function assertAllRan(out) {
  assert.match(out, /# fail 0/);
  assert.match(out, /# skipped 0/);
  assert.ok(Number(/# pass (\d+)/.exec(out)?.[1]) >= 20, out);
}

test('every group test passes with group signals forced through kill(-pgid) [K.pidfd-group]', async () => {
  const { code, out } = await nodeTest(groupTests, {
    PROCPIN_NO_PIDFD_GROUP: '1',
    PROCPIN_EXPECT_GROUP_PATH: 'kill',
  });
  assert.equal(code, 0, out);
  assertAllRan(out);
});

const oldKernelHelper = join(here, '..', 'oldkernel.mjs');

for (const errno of ['ENOSYS', 'EPERM']) {
  const title =
    errno === 'ENOSYS'
      ? 'every group test passes on a simulated old kernel (no pidfd at all)'
      : 'every group test passes under a seccomp policy that answers EPERM to the pidfd calls and close_range';
  test(title, async (t) => {
    if (!need(t, existsSync(oldKernelHelper), 'test/oldkernel.mjs (the seccomp old-kernel helper)')) return;
    const { oldKernelBinary } = await import(oldKernelHelper);
    const bin = oldKernelBinary();
    if (!need(t, bin !== null, 'cc and seccomp for the old-kernel filter')) return;
    const { code, out } = await nodeTest(
      groupTests,
      { PROCPIN_EXPECT_GROUP_PATH: 'kill', PROCPIN_EXPECT_NO_PIDFD: '1', PROCPIN_OLDKERNEL_ERRNO: errno },
      (argv) => [bin, ...argv],
    );
    assert.equal(code, 0, out);
    assertAllRan(out);
  });
}
