// SPEC Layer 3b sweepCgroups across pid namespaces and pid reuse, with real processes and real
// cgroups: a pid in a cgroup's name is a number of its supervisor's own pid namespace, so the
// name also carries that namespace (the inode of /proc/self/ns/pid) and the supervisor's start
// time. A sweeper judges entries of its own namespace by pid and start time, and keeps those of
// a namespace it cannot see into (reason 'namespace') unless it can prove them dead.
//
// Every sweep here that could act on other supervisors' cgroups runs as a dry run first; the real
// sweep runs only when the dry run left this test's live cgroup alone, so an older procpin
// (which took such a cgroup for dead) never kills anything while this test shows it fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { isRoot, need, pkg, procStat, runCmd, waitFor } from '../helpers.mjs';
import { cgroupPlace } from '../../dist/contain/contain.js';
import { start as cliStart } from '../cli/cli-helpers.mjs';

const { spawnGroup, sweepCgroups } = procpin;
const place = cgroupPlace();
const cgroupBase = typeof place === 'string' ? null : place.base;
const unshare = ['/usr/bin/unshare', '/bin/unshare'].find((p) => existsSync(p)) ?? null;
const ok = isRoot && cgroupBase !== null && unshare !== null;
const WHY = 'root, a writable cgroup2 and unshare(1)';
const NEW_PIDNS = ['--pid', '--fork', '--mount-proc'];
// The initial pid namespace (the kernel's PROC_PID_INIT_INO): its /proc shows every process.
const inInitPidns = statSync('/proc/self/ns/pid').ino === 0xeffffffc;
const CONTAIN = JSON.stringify(new URL('../../dist/contain/contain.js', import.meta.url).pathname);

// The cgroups this file made (named here, by the supervisors it started), removed at the end.
const made = new Set();
test.after(() => {
  const left = [...made].filter((n) => existsSync(join(cgroupBase, n)));
  for (const n of left) {
    try {
      rmdirSync(join(cgroupBase, n));
    } catch {}
  }
  assert.deepEqual(left, [], 'every cgroup this file made is removed');
});

function cgroupsNamed(pid) {
  return readdirSync(cgroupBase).filter((n) => n.startsWith(`procpin-${pid}-`));
}

// A 'cgroup' group of this supervisor, stopped after the test, and its cgroup's name (made).
function liveCgroupGroup(t) {
  const g = spawnGroup('sleep', ['1000'], { contain: 'cgroup', stdio: 'ignore' });
  t.after(() => g.stop());
  const [name] = cgroupsNamed(process.pid);
  made.add(name);
  return { g, name };
}

function alive(pid) {
  const st = procStat(pid);
  return st !== null && st.state !== 'Z' && st.state !== 'X';
}

function startTicks(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return s.slice(s.lastIndexOf(')') + 2).split(' ')[19];
}

// Runs `code` (an ES module) in node inside a new pid namespace (and mount namespace with its own
// /proc), as `unshare --pid --fork --mount-proc` does for a sandboxed sweeper.
async function inNewPidns(code) {
  const r = await runCmd(unshare, [...NEW_PIDNS, process.execPath, '--input-type=module', '-e', code], {
    timeout: 30000,
  });
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

// A dry run, then (only when the dry run did not take `name` for dead) a real one.
const SWEEP_TWICE = (name) => `
  import { sweepCgroups } from ${pkg};
  const dry = await sweepCgroups({ dryRun: true });
  const real = dry.removed.some((e) => e.name === ${JSON.stringify(name)}) ? null : await sweepCgroups();
  console.log(JSON.stringify({ dry, real, ns: (await import('node:fs')).statSync('/proc/self/ns/pid').ino }));`;

/** The sweep report `res` keeps the cgroup `name` of this supervisor, for 'namespace', and removes it not. */
function keptForNamespace(res, name, message = undefined) {
  assert.deepEqual(
    res.removed.filter((e) => e.name === name),
    [],
    message,
  );
  assert.deepEqual(
    res.kept.filter((e) => e.name === name),
    [{ name, pid: process.pid, reason: 'namespace' }],
  );
}

test(
  "cgroup: a live supervisor's cgroup survives sweepCgroups() run from inside a new pid namespace, kept with reason 'namespace' [L3b.cgroups.namespace]",
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    const { g, name } = liveCgroupGroup(t);
    assert.ok(name, "this supervisor's cgroup");
    const { dry, real, ns } = await inNewPidns(SWEEP_TWICE(name));
    assert.notEqual(ns, statSync('/proc/self/ns/pid').ino, 'the sweeper ran in another pid namespace');
    keptForNamespace(dry, name, 'the dry run would not remove it');
    assert.ok(real !== null, 'the real sweep ran');
    keptForNamespace(real, name);
    assert.ok(existsSync(join(cgroupBase, name)), 'the cgroup is still there');
    assert.ok(alive(g.pid), 'its command still runs');
    await g.stop();
    assert.equal(existsSync(join(cgroupBase, name)), false);
  },
);

test(
  "procpin sweep --cgroups run from inside a new pid namespace keeps a live supervisor's cgroup and says why [L3b.cgroups.namespace]",
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    const { g, name } = liveCgroupGroup(t);
    const wrapper = [unshare, ...NEW_PIDNS];
    const json = await cliStart(['sweep', '--cgroups', '--dry-run', '--json'], { wrapper, input: '' }).result;
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    keptForNamespace(report, name);
    const text = await cliStart(['sweep', '--cgroups', '--dry-run'], { wrapper, input: '' }).result;
    assert.equal(text.code, 0, text.stderr);
    const line = text.stdout.split('\n').find((l) => l.includes(name));
    assert.match(line, /^kept +cgroup procpin-\S+ +\(procpin \d+: in another pid namespace, not provably dead\)$/);
    assert.ok(alive(g.pid));
    await g.stop();
  },
);

// A supervisor that is pid 1 of its own pid namespace: in the initial namespace that number is
// init's, a live process that is not the supervisor.
function supervisorInPidns(extra = []) {
  const code = `
    import { spawnGroup } from ${pkg};
    import { readdirSync } from 'node:fs';
    import { cgroupPlace } from ${CONTAIN};
    const g = spawnGroup('sleep', ['1000'], { contain: 'cgroup', stdio: 'ignore' });
    const name = readdirSync(cgroupPlace().base).find((n) => n.startsWith('procpin-' + process.pid + '-'));
    console.log(JSON.stringify({ name, pid: process.pid, leader: g.pid }));
    process.stdin.on('end', async () => { await g.stop(); process.exit(0); });
    process.stdin.resume();`;
  const child = cpSpawn(unshare, [...NEW_PIDNS, ...extra, process.execPath, '--input-type=module', '-e', code], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  const info = new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(JSON.parse(out));
    });
    child.on('exit', (c, s) => reject(new Error(`the supervisor ended early (${c ?? s})`)));
  });
  const exited = new Promise((r) => child.on('exit', r));
  return { child, info, exited };
}

test(
  'cgroup: a live supervisor inside a pid namespace keeps its cgroup when swept from the initial namespace, though its pid names another live process there [L3b.cgroups.namespace]',
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    const sup = supervisorInPidns();
    t.after(() => sup.child.stdin.end());
    const info = await sup.info;
    made.add(info.name);
    assert.equal(info.pid, 1, 'the supervisor is pid 1 of its namespace');
    assert.ok(alive(1), 'pid 1 here is another live process');
    const dry = await sweepCgroups({ dryRun: true });
    assert.deepEqual(
      dry.removed.filter((e) => e.name === info.name),
      [],
      'the dry run would not remove it',
    );
    assert.deepEqual(
      dry.kept.filter((e) => e.name === info.name),
      [{ name: info.name, pid: 1, reason: 'alive' }],
    );
    const real = await sweepCgroups();
    assert.deepEqual(
      real.kept.filter((e) => e.name === info.name),
      [{ name: info.name, pid: 1, reason: 'alive' }],
    );
    assert.ok(existsSync(join(cgroupBase, info.name)), 'the cgroup is still there');
    const procs = readFileSync(join(cgroupBase, info.name, 'cgroup.procs'), 'latin1')
      .split('\n')
      .filter(Boolean);
    assert.equal(procs.length, 1, 'its command still runs');
    sup.child.stdin.end();
    await sup.exited;
    await waitFor(() => !existsSync(join(cgroupBase, info.name)), {
      timeout: 5000,
      what: 'the supervisor to remove its cgroup',
    });
  },
);

test(
  'cgroup: a dead supervisor of a pid namespace that is gone is swept from the initial namespace, though its pid names another live process there [L3b.cgroups.namespace]',
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    if (!need(t, inInitPidns, 'a test process in the initial pid namespace')) return;
    // --kill-child: SIGKILL of unshare SIGKILLs the supervisor (pid 1: the namespace ends with it).
    const sup = supervisorInPidns(['--kill-child=SIGKILL']);
    const info = await sup.info.catch((e) => e);
    assert.ok(!(info instanceof Error), String(info));
    made.add(info.name);
    sup.child.kill('SIGKILL');
    await sup.exited;
    await waitFor(() => readFileSync(join(cgroupBase, info.name, 'cgroup.events'), 'latin1').includes('populated 0'), {
      timeout: 5000,
      what: 'the namespace to end',
    });
    assert.ok(existsSync(join(cgroupBase, info.name)), 'the dead supervisor left its cgroup');
    const report = await sweepCgroups();
    assert.deepEqual(
      report.removed.filter((e) => e.name === info.name),
      [{ name: info.name, pid: 1 }],
    );
    assert.equal(existsSync(join(cgroupBase, info.name)), false);
  },
);

// Inside one fresh pid namespace: a supervisor makes a cgroup holding a setsid daemon and is
// SIGKILLed; its pid is handed to a new `sleep` (ns_last_pid); a sweep there removes the cgroup.
const REUSE = `
  import { spawn } from 'node:child_process';
  import { existsSync, readFileSync, writeFileSync } from 'node:fs';
  import { sweepCgroups } from ${pkg};
  const supCode = \`
    import { spawnGroup } from ${pkg};
    import { readdirSync } from 'node:fs';
    import { cgroupPlace } from ${CONTAIN};
    const g = spawnGroup('sh', ['-c', 'setsid sleep 1000 </dev/null >/dev/null 2>&1 & exec sleep 1000'], { contain: 'cgroup', stdio: 'ignore' });
    const name = readdirSync(cgroupPlace().base).find((n) => n.startsWith('procpin-' + process.pid + '-'));
    console.log(JSON.stringify({ name, pid: process.pid }));
    setInterval(() => {}, 1000);\`;
  const sup = spawn(process.execPath, ['--input-type=module', '-e', supCode], { stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise((r) => { let o = ''; sup.stdout.on('data', (d) => { o += d; if (o.includes('\\n')) r(JSON.parse(o)); }); });
  const base = (await import(${CONTAIN})).cgroupPlace().base;
  const populated = () => readFileSync(base + '/' + info.name + '/cgroup.events', 'latin1').includes('populated 1');
  while (!populated()) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => { sup.on('exit', r); sup.kill('SIGKILL'); });
  let taker = null;
  for (let i = 0; i < 50 && taker === null; i++) {
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(info.pid - 1));
    const c = spawn('sleep', ['1000'], { stdio: 'ignore' });
    if (c.pid === info.pid) taker = c;
    else c.kill('SIGKILL');
  }
  const takerAlive = taker !== null;
  const report = await sweepCgroups();
  const after = { exists: existsSync(base + '/' + info.name), takerStillAlive: taker !== null && taker.exitCode === null && taker.signalCode === null };
  taker?.kill('SIGKILL');
  console.log(JSON.stringify({ info, takerAlive, report, after }));`;

test(
  "cgroup: a dead supervisor's cgroup is swept (daemon killed, directory removed) though its pid is now taken by another live process [L3b.cgroups.namespace]",
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    const { info, takerAlive, report, after } = await inNewPidns(REUSE);
    made.add(info.name);
    assert.ok(takerAlive, "another process took the dead supervisor's pid");
    assert.deepEqual(
      report.removed.filter((e) => e.name === info.name),
      [{ name: info.name, pid: info.pid }],
    );
    assert.deepEqual(
      report.kept.filter((e) => e.name === info.name),
      [],
    );
    assert.equal(after.exists, false, 'the directory is removed');
    assert.equal(after.takerStillAlive, true, 'the process that took the pid was left alone');
  },
);

test(
  'cgroup: a cgroup named by an earlier procpin (no namespace in its name) is kept unless its supervisor is provably dead [L3b.cgroups.namespace]',
  { timeout: 40000 },
  async (t) => {
    if (!need(t, ok, WHY)) return;
    if (!need(t, inInitPidns, 'a test process in the initial pid namespace')) return;
    // An earlier procpin named a cgroup procpin-PID-START-SEQ. One of this live process, one of a
    // supervisor that no live process is (start time 1: no process here started at tick 1).
    const mine = `procpin-${process.pid}-${startTicks(process.pid)}-900001`;
    const dead = `procpin-${process.pid}-1-900002`;
    for (const n of [mine, dead]) {
      mkdirSync(join(cgroupBase, n));
      made.add(n);
    }
    t.after(() => {
      for (const n of [mine, dead]) if (existsSync(join(cgroupBase, n))) rmdirSync(join(cgroupBase, n));
    });
    // From another pid namespace neither can be judged: both kept.
    const { dry } = await inNewPidns(SWEEP_TWICE(mine));
    assert.deepEqual(
      dry.removed.filter((e) => e.name === mine || e.name === dead),
      [],
    );
    assert.deepEqual(
      dry.kept.filter((e) => e.name === mine || e.name === dead).sort((a, b) => a.name.localeCompare(b.name)),
      [
        { name: mine, pid: process.pid, reason: 'namespace' },
        { name: dead, pid: process.pid, reason: 'namespace' },
      ].sort((a, b) => a.name.localeCompare(b.name)),
    );
    assert.ok(existsSync(join(cgroupBase, mine)) && existsSync(join(cgroupBase, dead)));
    // From the initial namespace every process is in view: the live one is kept, the dead removed.
    const report = await sweepCgroups();
    assert.deepEqual(
      report.kept.filter((e) => e.name === mine),
      [{ name: mine, pid: process.pid, reason: 'alive' }],
    );
    assert.deepEqual(
      report.removed.filter((e) => e.name === dead),
      [{ name: dead, pid: process.pid }],
    );
    assert.equal(existsSync(join(cgroupBase, dead)), false);
    rmdirSync(join(cgroupBase, mine));
  },
);
