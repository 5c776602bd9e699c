// Containment under attack: what a hostile command or an abrupt supervisor ending does to
// 'pidns' and 'cgroup' groups, read from the kernel's record (exit statuses, cgroup directories).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import * as procpin from '../../dist/index.js';
import { cgroupBase, cgroupsOf, place } from './contain-helpers.mjs';
import { isGone, isRoot, need, pkg, runCmd, runNode, tmpDirFor, waitFor } from '../helpers.mjs';

const { spawnGroup } = procpin;
// Where the cgroup tests make their cgroups ('' when cgroups are unavailable: those tests do not run).
const mount = typeof place === 'string' ? '' : place.mount;

function available(mode) {
  if (mode === 'cgroup') return isRoot && cgroupBase !== null;
  return isRoot || existsSync('/proc/sys/user/max_user_namespaces');
}

// The command dies by stop()'s SIGTERM at once; a member it started ignores SIGTERM, so the
// grace runs out and the group's final SIGKILL ends the member. The result names the command's
// own death, as for a plain group: the SIGKILL was for the member, not for the command.
for (const mode of /** @type {(procpin.ContainMode | undefined)[]} */ ([undefined, 'pidns', 'cgroup'])) {
  const name = mode ?? 'group';
  test(`${name}: stop() reports the command's own SIGTERM death although a member that ignores SIGTERM needed the final SIGKILL [L3a.contain.transparent]`, async (t) => {
    if (mode && !need(t, available(mode), `${mode} needs root here`)) return;
    const g = spawnGroup('sh', ['-c', `(trap '' TERM; echo ready; exec sleep 1000) & wait`], {
      contain: mode,
      stdio: ['ignore', 'pipe', 'ignore'],
      grace: 300,
    });
    for await (const chunk of g.leader.stdout) if (String(chunk).includes('ready')) break;
    const r = await g.stop();
    assert.equal(r.signal, 'SIGTERM');
    assert.equal(r.exitCode, null);
    assert.equal(r.stoppedWhileRunning, true);
    assert.equal(r.killed, true);
  });
}

// A supervisor that ends by process.exit() or an uncaught exception kills its cgroup groups
// (cgroup.kill) and removes their directories: nothing is left for a successor's sweep.
for (const how of ['process.exit(3)', "throw new Error('boom')"]) {
  test(`cgroup: a supervisor that ends by ${how} leaves no cgroup directory behind [L3b.cgroups.sweep]`, async (t) => {
    if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
    const code = `
      const { spawnGroup } = await import(${pkg});
      const g = spawnGroup('sh', ['-c', 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo ready; exec sleep 1000'],
        { contain: 'cgroup', stdio: ['ignore', 'pipe', 'ignore'] });
      g.leader.stdout.once('data', () => { console.log(process.pid); ${how}; });`;
    const r = await runNode(code);
    const pid = Number(r.stdout.trim());
    assert.ok(pid > 0, r.stdout + r.stderr);
    assert.deepEqual(cgroupsOf(pid), []);
  });
}

// A command with the power to move itself out of its cgroup (root writing cgroup.procs) still
// leaves its process-group members within reach: they get killSignal and the final SIGKILL as
// in a plain group, and the group settles.
test(
  'cgroup: a command that moves itself out of its cgroup cannot take its process-group members out of reach [L3a.contain.escape]',
  { timeout: 20000 },
  async (t) => {
    if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
    const out = mount && `${mount}/cgroup.procs`;
    const g = spawnGroup(
      'sh',
      ['-c', `echo $$ > ${out}; (trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done) & exec sleep 1000`],
      {
        contain: 'cgroup',
        stdio: ['ignore', 'pipe', 'ignore'],
        grace: 5000,
      },
    );
    let text = '';
    const ended = new Promise((resolve) => g.leader.stdout.on('end', resolve));
    g.leader.stdout.on('data', (d) => (text += d));
    await waitFor(() => text.includes('ready'), { timeout: 10000, what: 'the member to start' });
    const r = await g.stop();
    assert.equal(r.signal, 'SIGTERM');
    assert.equal(g.leader.reaped, true);
    // The member (in the leader's process group, outside the cgroup) got stop()'s SIGTERM: the
    // stream it held ends.
    await ended;
  },
);

// A command that dumps core is reported as a core dump (CLD_DUMPED), as without containment; the
// only core file is the command's own (procpin-init writes none of its own).
for (const mode of /** @type {(procpin.ContainMode | undefined)[]} */ ([undefined, 'pidns', 'cgroup'])) {
  const name = mode ?? 'group';
  test(`${name}: a command that dumps core is reported as CLD_DUMPED with its signal, and the only core file is its own [L3a.contain.transparent]`, async (t) => {
    if (mode && !need(t, available(mode), `${mode} needs root here`)) return;
    const pattern = readFileSync('/proc/sys/kernel/core_pattern', 'latin1').trim();
    if (
      !need(t, !pattern.startsWith('|') && !pattern.includes('/'), `core files in the cwd (core_pattern is ${pattern})`)
    )
      return;
    const dir = tmpDirFor(t);
    const g = spawnGroup('sh', ['-c', 'ulimit -c unlimited && kill -SEGV $$'], {
      contain: mode,
      stdio: 'ignore',
      cwd: dir.path,
    });
    const info = await g.leader.exited;
    assert.equal(info.code, 'CLD_DUMPED');
    assert.equal(info.signal, 'SIGSEGV');
    const r = await g.closed;
    assert.equal(r.signal, 'SIGSEGV');
    assert.equal(readdirSync(dir.path).length, 1, `one core file: ${readdirSync(dir.path)}`);
  });
}

// What holds against a command that tries to leave its cgroup (cgroup v2's delegation rule: a
// move needs write access to the common ancestor's cgroup.procs, which root owns). A command
// that is not root (here by the uid option) is refused and stays: stop() ends it with its
// setsid daemon. A root command leaves, whatever capabilities it dropped (the cgroup files are
// root's by ownership, not by capability): only its process-group members then stay within
// reach, as the test above shows.
test(
  'cgroup: a command that is not root cannot leave its cgroup (EACCES), and stop() ends it and its setsid daemon [L3a.contain.escape]',
  { timeout: 20000 },
  async (t) => {
    if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
    const root = `${mount}/cgroup.procs`;
    const g = spawnGroup(
      'sh',
      ['-c', `setsid sh -c 'echo $$ > ${root} 2>/dev/null && echo left || echo stayed; exec sleep 1000' & wait`],
      { contain: 'cgroup', uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let text = '';
    g.leader.stdout.on('data', (d) => (text += d));
    await waitFor(() => /left|stayed/.test(text), { timeout: 10000, what: 'the escape attempt' });
    assert.equal(text.trim(), 'stayed');
    const [name] = cgroupsOf(process.pid);
    const procs = readFileSync(`${cgroupBase}/${name}/cgroup.procs`, 'latin1').split('\n').filter(Boolean);
    assert.equal(procs.length, 2, 'the leader and the daemon are both in the cgroup');
    await g.stop();
    await waitFor(() => !existsSync(`${cgroupBase}/${name}`), { timeout: 5000, what: 'the cgroup removed' });
    for (const pid of procs) assert.equal(isGone(pid), true);
  },
);

test(
  'cgroup: a root command leaves its cgroup by writing another cgroup.procs even without any capability (the documented limit) [L3a.contain.escape]',
  { timeout: 20000 },
  async (t) => {
    if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
    const r = await runCmd('setpriv', ['--help']).catch(() => null);
    if (!need(t, r && r.code === 0, 'setpriv (util-linux)')) return;
    const root = `${mount}/cgroup.procs`;
    const g = spawnGroup(
      'setpriv',
      [
        '--bounding-set=-all',
        '--inh-caps=-all',
        'sh',
        '-c',
        `grep CapEff /proc/self/status; echo $$ > ${root} && grep '^0::' /proc/self/cgroup`,
      ],
      { contain: 'cgroup', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let text = '';
    g.leader.stdout.on('data', (d) => (text += d));
    const res = await g.closed;
    await waitFor(() => text.includes('0::'), { timeout: 2000, what: 'output' });
    assert.equal(res.exitCode, 0);
    assert.match(text, /CapEff:\s+0+\n/);
    assert.match(text, /^0::\/$/m, 'it left for the root cgroup');
  },
);

// An unprivileged supervisor makes its cgroups in its own cgroup, delegated to its uid. The
// kernel lets a process move between two cgroups when it may write the cgroup.procs of their
// common ancestor: the delegated cgroup's is the user's own, so a command of the supervisor's
// uid can move itself into the supervisor's cgroup (the documented limit; contain: 'pidns' or a
// `uid` of its own holds it). Its process-group members stay within reach of stop().
test(
  "cgroup, unprivileged in a delegated subtree: a command of the supervisor's uid can move itself into the supervisor's cgroup (the documented limit), and stop() still ends its process-group member [L3a.contain.escape]",
  { timeout: 30000 },
  async (t) => {
    if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
    const r0 = await runCmd('setpriv', ['--help']).catch(() => null);
    if (!need(t, r0 && r0.code === 0, 'setpriv (util-linux)')) return;
    const deleg = `${mount}/procpin-test-deleg-${process.pid}`;
    mkdirSync(deleg);
    t.after(async () => {
      for (const sub of readdirSync(deleg, { withFileTypes: true }))
        if (sub.isDirectory()) rmdirSync(`${deleg}/${sub.name}`);
      await waitFor(() => readFileSync(`${deleg}/cgroup.procs`, 'latin1') === '', {
        timeout: 5000,
        what: 'the delegated cgroup empty',
      });
      rmdirSync(deleg);
    });
    for (const f of ['', '/cgroup.procs', '/cgroup.subtree_control', '/cgroup.threads'])
      chownSync(`${deleg}${f}`, 65534, 65534);
    // The leader waits in a loop whose sleeps are forked after its move: only the process-group
    // signal reaches them, with the leader. (Waiting for the member instead, which the cgroup's
    // signal reaches first, a loaded machine lets the leader exit 143 before its own SIGTERM.)
    const code = `
      import { spawnGroup } from ${pkg};
      import { readFileSync } from 'node:fs';
      const g = spawnGroup('sh', ['-c', 'sleep 1000 & echo $$ > ${deleg}/cgroup.procs && echo left $! || echo stayed $!; while :; do sleep 1; done'], { contain: 'cgroup', stdio: ['ignore', 'pipe', 'inherit'] });
      let out = ''; g.leader.stdout.on('data', (d) => (out += d));
      const end = Date.now() + 10000;
      while (!out.includes('\\n') && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
      const leader = readFileSync('/proc/' + g.pid + '/cgroup', 'latin1').split('\\n').find((l) => l.startsWith('0::'));
      const res = await g.stop();
      console.log(JSON.stringify({ containment: g.containment, out, leader, signal: res.signal }));`;
    const r = await runCmd('sh', [
      '-c',
      `echo $$ > ${deleg}/cgroup.procs && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"`,
      'sh',
      process.execPath,
      '--input-type=module',
      '-e',
      code,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const res = JSON.parse(r.stdout);
    assert.equal(res.containment, 'cgroup');
    const [word, member] = res.out.trim().split(' ');
    assert.equal(word, 'left');
    assert.equal(res.leader, `0::/${deleg.slice(mount.length + 1)}`, "the leader moved into the supervisor's cgroup");
    assert.equal(res.signal, 'SIGTERM');
    await waitFor(() => isGone(member), { timeout: 5000, what: 'the process-group member ended' });
  },
);
