// Pid reuse: inside a pid namespace of our own, a stranger takes the exact number of a child or
// group that procpin released, and everything procpin could still send (Child.kill,
// ProcessHandle.kill, ProcessGroup.signal, stop(), a late timeout, a late abort) must never reach
// it. The stranger records every signal it gets; a control signal we send it ourselves proves the
// recorder works. Run on both group-signal paths: the leader's pidfd (PIDFD_SIGNAL_PROCESS_GROUP)
// and kill(-pgid) (PROCPIN_NO_PIDFD_GROUP=1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { CI, need, root, tmpDir } from '../helpers.mjs';
import { canPidNs, cfixture, runCmd, runs } from '../fixtures/reliab-lib.mjs';

const pkgPath = join(root, 'dist', 'index.js');
const script = join(root, 'test', 'fixtures', 'reliab-pidreuse.mjs');
const ready = typeof procpin.spawn === 'function' && typeof procpin.spawnGroup === 'function';

// The seccomp old-kernel wrapper (test/oldkernel.mjs): pidfd_open, clone3, close_range and
// pidfd_send_signal answer ENOSYS, waitid(P_PIDFD) EINVAL. Loaded if present.
let oldKernel = null;
try {
  const m = await import('../oldkernel.mjs');
  oldKernel = m.oldKernelBinary();
} catch {}

async function inNamespace(env, names = [], wrapper = []) {
  const dir = tmpDir('procpin-reuse-');
  const bin = cfixture('stranger');
  let r;
  try {
    r = await runCmd(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount-proc',
        '--kill-child',
        ...wrapper,
        process.execPath,
        script,
        pkgPath,
        bin,
        dir.path,
        ...names,
      ],
      // A sanitizer run starts every process far more slowly.
      { env, timeout: process.env.PROCPIN_SANITIZED ? 240000 : 60000 },
    );
  } finally {
    dir[Symbol.dispose]();
  }
  const lines = r.stdout.split('\n').filter((l) => l.startsWith('{'));
  const all = lines.map((l) => JSON.parse(l));
  const out = Object.fromEntries(all.map((o) => [o.name, o]));
  // Every line, in order, for a scenario run several times over ('name*N').
  Object.defineProperty(out, 'all', { value: all });
  assert.equal(r.code, 0, `namespace run failed: ${r.stderr}\n${lines.map((l) => JSON.parse(l).name).join(',')}`);
  return out;
}

function assertNoStrangerSignalled(o) {
  assert.equal(o.error, undefined, o.error);
  assert.deepEqual(o.got, [], `the stranger at pid ${o.pid} received signals: ${o.got.join(', ')}`);
  assert.equal(o.unharmed, true, 'the stranger was killed or stopped');
  assert.equal(o.control, true, 'the stranger did not record the control signal: the test proves nothing');
}

test(
  'old kernel without pidfds (seccomp): a child reaped by a foreign wait whose number a stranger (also our child) took is reported lost, and the stranger gets nothing [K.no-pidfd]',
  { timeout: 300000 },
  async (t) => {
    if (!need(t, canPidNs && ready && oldKernel, 'needs root, unshare --pid and the seccomp wrapper')) return;
    // The stranger is re-parented to the namespace's PID 1, the supervisor: a child of ours by
    // number, often started in the same clock tick as the lost child. 20 runs in one namespace.
    const rounds = 20;
    const out = await inNamespace({}, [`foreign-reap-child*${rounds}`], [oldKernel]);
    const lost = 'ERR_PROCPIN_CHILD_LOST';
    const failures = [];
    for (const run of out.all) {
      try {
        assertNoStrangerSignalled(run);
        assert.deepEqual(run.returned, [false, false, false, lost, lost, lost], 'a foreign reap is reported as lost');
      } catch (err) {
        failures.push(err.message.split('\n')[0]);
      }
    }
    const passed = out.all.length - failures.length;
    t.diagnostic(`${passed} of ${rounds} runs: lost reported, the stranger untouched`);
    assert.deepEqual(failures, [], `${passed} of ${rounds} runs passed`);
    assert.equal(out.all.length, rounds, 'every run reported');
  },
);

function suite(label, env, old = false) {
  test(
    `${label}: a stranger that took a released number never receives a procpin signal [F.stranger.never]`,
    { timeout: 600000 },
    async (t) => {
      if (!need(t, canPidNs, 'needs root and unshare --pid')) return;
      if (!need(t, ready, 'spawn and spawnGroup are not built yet')) return;
      if (old && !need(t, oldKernel, 'the seccomp old-kernel wrapper (test/oldkernel.mjs)')) return;
      const rounds = runs(1, 5);
      for (let round = 0; round < rounds; round++) {
        // Without pidfds the foreign-reap-child scenario can leave `exited` pending (open: the
        // todo test below); every other scenario runs on that path too.
        const out = await inNamespace(env, old ? ['!foreign-reap-child'] : [], old ? [oldKernel] : []);
        const child = out['child-kill-after-reap'];
        assertNoStrangerSignalled(child);
        // Child.kill after reap returns false each time; the handle's kill throws ESRCH or says false.
        assert.deepEqual(child.returned.slice(0, 5), [false, false, false, false, false]);
        const handleOk = old ? ['ENOSYS'] : [false, 'ESRCH'];
        for (const r of child.returned.slice(5)) assert.ok(handleOk.includes(r), `ProcessHandle.kill gave ${r}`);

        const reserved = out['reserved-number-cannot-be-taken'];
        assert.equal(reserved.error, undefined, reserved.error);
        assert.equal(reserved.took, false, 'a stranger took the number of an unreaped leader');

        const sig = out['group-signal-after-release'];
        assertNoStrangerSignalled(sig);
        assert.deepEqual(sig.returned, [false, false, false, false, false, true, 'released']);

        const ex = out['group-exit-then-signal'];
        assertNoStrangerSignalled(ex);
        assert.deepEqual(ex.returned, [false, false, false]);

        const to = out['timeout-fires-late'];
        assertNoStrangerSignalled(to);
        assert.deepEqual(to.returned, [false, true], 'the stranger was in place before the deadline; not timed out');

        const ab = out['abort-fires-late'];
        assertNoStrangerSignalled(ab);
        assert.deepEqual(ab.returned, [false]);

        const lost = 'ERR_PROCPIN_CHILD_LOST';
        if (!old) {
          const lostChild = out['foreign-reap-child'];
          assertNoStrangerSignalled(lostChild);
          assert.deepEqual(
            lostChild.returned,
            [false, false, false, lost, lost, lost],
            'a foreign reap is reported as lost',
          );
        }

        const reused = out['foreign-reap-group-reused'];
        assertNoStrangerSignalled(reused);
        assert.deepEqual(reused.returned, [false, false, lost, false]);

        const member = out['foreign-reap-group-member'];
        assertNoStrangerSignalled(member);
        assert.equal(member.closed, lost, 'closed rejects with the loss, never a normal-looking result');
        assert.deepEqual(member.returned, [false, lost]);
        // Through the leader's pidfd (Linux 6.9+) the members still die; by number nothing is sent.
        const viaPidfd = !old && env.PROCPIN_NO_PIDFD_GROUP !== '1' && procpin.groupSignalsUsePidfd();
        assert.equal(member.memberKilled, viaPidfd, 'members of a lost leader killed only through its pidfd');

        const wrap = out['natural-wrap'];
        assertNoStrangerSignalled(wrap);
        assert.deepEqual(wrap.returned, [false, false, false]);
        if (round === 0) t.diagnostic(`natural wrap: the released number came round after ${wrap.tries} strangers`);
      }
    },
  );
}

suite('pidfd group signals', {});
suite('kill(-pgid) fallback', { PROCPIN_NO_PIDFD_GROUP: '1' });
suite('old kernel without pidfds (seccomp)', {}, true);

test('the pid-reuse runner detects a stranger that is signalled (the test can fail) [F.stranger.never]', async (t) => {
  if (!need(t, canPidNs, 'needs root and unshare --pid')) return;
  const dir = tmpDir('procpin-reuse-');
  t.after(() => dir[Symbol.dispose]());
  const bin = cfixture('stranger');
  // A stranger at a chosen number inside a namespace, then a plain kill(-N): recorded.
  const code = `
    const { spawnSync } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    const log = ${JSON.stringify(join(dir.path, 'x.log'))};
    const r = spawnSync(${JSON.stringify(bin)}, [log, '777'], { encoding: 'utf8' });
    process.kill(-777, 'SIGTERM');
    const end = Date.now() + 2000;
    while (!readFileSync(log, 'utf8') && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
    console.log(r.stdout.trim() + '|' + readFileSync(log, 'utf8').trim());
    process.exit(0);`;
  const r = await runCmd(
    'unshare',
    ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, '--input-type=module', '-e', code],
    { timeout: 60000 },
  );
  assert.match(r.stdout, /^ready 777 777\|15 1 0$/m, r.stdout + r.stderr);
});

if (CI) {
  // CI must not pass silently when the namespace cannot be made.
  test('pid namespaces are available for the pid-reuse tests [K.pidns]', () => assert.ok(canPidNs));
}

// The supervisor (not PID 1 of the namespace) loses a leader to another library's synchronous
// waitpid, another library's child_process child takes the number at once (so it is a child of
// the supervisor, and leads a group of that number), and the supervisor then dies of a signal
// that only the native end-kill hook sees, before procpin's watch had a turn.
for (const [how, end] of [
  ['SIGUSR2', "process.kill(process.pid, 'SIGUSR2')"],
  ['abort()', 'process.abort()'],
]) {
  test(
    `old kernel without pidfds: a supervisor that dies of ${how} after a foreign reap whose number another child of it took never SIGKILLs that child [K.no-pidfd]`,
    { timeout: 60000 },
    async (t) => {
      if (!need(t, canPidNs && ready && oldKernel, 'needs root, unshare --pid and the seccomp wrapper')) return;
      const code = `
        const p = await import(${JSON.stringify(pkgPath)});
        const { spawn } = await import('node:child_process');
        const { writeFileSync } = await import('node:fs');
        const { P_PID, WEXITED } = p.constants;
        const g = p.spawnGroup('sleep', ['1000'], { stdio: 'ignore' });
        process.kill(g.pid, 'SIGKILL');
        p.waitid(P_PID, g.pid, WEXITED);
        writeFileSync('/proc/sys/kernel/ns_last_pid', String(g.pid - 1));
        const s = spawn('sh', ['-c', 'sleep 1000; :'], { detached: true, stdio: 'ignore' });
        s.unref();
        console.log(JSON.stringify({ pidfd: g.leader.pidfd, leader: g.pid, stranger: s.pid }));
        ${end};`;
      // The outer shell is PID 1: it reports the stranger's state once the supervisor is gone.
      const r = await runCmd('unshare', [
        '--pid',
        '--fork',
        '--mount-proc',
        'sh',
        '-c',
        `ulimit -c 0; ${oldKernel} ${process.execPath} --input-type=module -e "$0"; ` +
          `for s in /proc/[0-9]*/stat; do read -r line < $s 2>/dev/null && echo "STAT $line"; done`,
        code,
      ]);
      const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
      assert.ok(line, `no report: ${r.stdout} ${r.stderr}`);
      const info = JSON.parse(line);
      assert.equal(info.pidfd, -1, 'the old-kernel path');
      assert.equal(info.stranger, info.leader, 'the stranger took the number');
      const stat = r.stdout.split('\n').find((l) => l.startsWith(`STAT ${info.stranger} `));
      const state = stat?.replace(/^STAT \d+ \(.*\) /, '')[0];
      assert.ok(
        state === 'S' || state === 'R',
        `the stranger at ${info.stranger} was killed (state ${state ?? 'gone'})`,
      );
    },
  );
}
