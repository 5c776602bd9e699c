// SPEC Layer 3a "Containment: contain" and Layer 3b sweepCgroups, with real processes: daemons
// that leave their process group (setsid, setpgid, a double fork) do not outlive the group under
// 'pidns' or 'cgroup', whether the group is stopped, its leader exits, or the supervisor is
// SIGKILLed (pidns: the kernel ends the namespace; cgroup: a successor's sweepCgroups ends it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { compileC } from '../oldkernel.mjs';
import { CI, isRoot, need, pkg, procStat, runCmd, tmpDirFor, waitFor, waitForJson } from '../helpers.mjs';
import { cgroupBase, cgroupsOf as ourCgroups, marked } from './contain-helpers.mjs';

const { spawnGroup, sweepCgroups } = procpin;
/** @type {procpin.ContainMode[]} */
const MODES = ['pidns', 'cgroup'];

let seq = 0;
function token() {
  return `${process.pid}${++seq}${Math.floor(Math.random() * 1e6)}`;
}

// A setsid daemon, a setpgid escaper and a double-forked daemon, each a `sleep 1000.TOKEN`;
// then `tail` (the leader's own ending).
function attack(tok, tail) {
  const s = `1000.${tok}`;
  return [
    '-c',
    `setsid sleep ${s} </dev/null >/dev/null 2>&1 &
     perl -e 'setpgrp(0, 0); exec "sleep", $ARGV[0]' ${s} </dev/null >/dev/null 2>&1 &
     (sleep ${s} </dev/null >/dev/null 2>&1 &)
     ${tail}`,
  ];
}

function available(mode) {
  if (mode === 'cgroup') return isRoot && cgroupBase !== null;
  return isRoot || existsSync('/proc/sys/user/max_user_namespaces');
}

async function noSurvivors(tok, ms = 2000) {
  await waitFor(() => marked(tok).length === 0, { timeout: ms, interval: 5, what: `no process of ${tok} alive` });
}

test.after(() => {
  // Every cgroup this file made is removed.
  assert.deepEqual(ourCgroups(), []);
});

for (const mode of MODES) {
  test(`${mode}: a setsid daemon, a setpgid escaper and a double-fork daemon do not outlive stop() [L3a.contain.escape]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const tok = token();
    const g = spawnGroup('sh', attack(tok, 'exec sleep 1001'), { contain: mode, stdio: 'ignore', grace: 2000 });
    assert.equal(g.containment, mode);
    await waitFor(() => marked(tok).length === 3, { timeout: 5000, what: 'three daemons' });
    const r = await g.stop();
    assert.equal(r.stoppedWhileRunning, true);
    await noSurvivors(tok);
    if (mode === 'cgroup') assert.deepEqual(ourCgroups(), []);
  });

  test(`${mode}: the daemons do not outlive the leader's own exit [L3a.contain.escape]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const tok = token();
    const dir = tmpDirFor(t, 'procpin-contain-');
    const go = join(dir.path, 'go');
    const g = spawnGroup('sh', attack(tok, `while [ ! -e ${go} ]; do sleep 0.01; done; exit 5`), {
      contain: mode,
      stdio: 'ignore',
      grace: 2000,
    });
    await waitFor(() => marked(tok).length === 3, { timeout: 5000, what: 'three daemons' });
    writeFileSync(go, '');
    const r = await g.closed;
    assert.equal(r.exitCode, 5);
    assert.equal(r.stoppedWhileRunning, false);
    await noSurvivors(tok);
  });

  test(`${mode}: a command without a SIGTERM handler dies by stop()'s SIGTERM before the grace ends [L3a.contain.transparent]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const g = spawnGroup('sleep', ['1000'], { contain: mode, stdio: 'ignore', grace: 20000 });
    const t0 = performance.now();
    const r = await g.stop();
    assert.ok(performance.now() - t0 < 10000, 'ended well before the grace');
    assert.equal(r.signal, 'SIGTERM');
    assert.equal(r.killed, false);
  });

  test(`${mode}: exit codes and signal deaths are reported exactly [L3a.contain.transparent]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const a = await spawnGroup('sh', ['-c', 'exit 42'], { contain: mode, stdio: 'ignore' }).closed;
    assert.equal(a.exitCode, 42);
    assert.equal(a.signal, null);
    const b = await spawnGroup('sh', ['-c', 'kill -USR1 $$'], { contain: mode, stdio: 'ignore' }).closed;
    assert.equal(b.exitCode, null);
    assert.equal(b.signal, 'SIGUSR1');
    const c = await spawnGroup('sh', ['-c', 'kill -SEGV $$'], { contain: mode, stdio: 'ignore' }).closed;
    assert.equal(c.signal, 'SIGSEGV');
  });

  test(`${mode}: stdio, cwd and env are the command's own; a command not found throws ENOENT [L3a.contain.transparent]`, async (t) => {
    if (!need(t, available(mode), `${mode} needs root here`)) return;
    const g = spawnGroup('sh', ['-c', 'read x; echo "$x $(pwd) $FOO"; echo err >&2'], {
      contain: mode,
      cwd: '/tmp',
      env: { FOO: 'bar', PATH: process.env.PATH },
    });
    g.leader.stdin.end('hello\n');
    let out = '';
    let err = '';
    g.leader.stdout.on('data', (d) => (out += d));
    g.leader.stderr.on('data', (d) => (err += d));
    const r = await g.closed;
    await waitFor(() => out.includes('\n') && err.includes('\n'), { timeout: 2000, what: 'output' });
    assert.equal(r.exitCode, 0);
    assert.equal(out, 'hello /tmp bar\n');
    assert.equal(err, 'err\n');
    assert.throws(() => spawnGroup('no-such-command-procpin', [], { contain: mode, stdio: 'ignore' }), {
      code: 'ENOENT',
    });
    if (mode === 'cgroup') assert.deepEqual(ourCgroups(), []);
  });
}

test("pidns: /proc inside is the namespace's own, and the supervisor's /proc is left alone [L3a.contain.transparent]", async (t) => {
  if (!need(t, available('pidns'), 'pidns')) return;
  const g = spawnGroup('sh', ['-c', 'read s _ < /proc/self/stat; echo $$ $s $(cut -d" " -f1 /proc/$$/stat)'], {
    contain: 'pidns',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  g.leader.stdout.on('data', (d) => (out += d));
  await g.closed;
  await waitFor(() => out.includes('\n'), { timeout: 2000, what: 'output' });
  const [self, link, stat] = out.trim().split(' ').map(Number);
  assert.equal(self, 2, 'the command is pid 2, its init pid 1');
  assert.equal(link, self);
  assert.equal(stat, self);
  assert.equal(Number(readlinkSync('/proc/self')), process.pid);
});

test('pidns: 50 orphans inside leave no zombie [L3a.contain.transparent]', async (t) => {
  if (!need(t, available('pidns'), 'pidns')) return;
  // 50 double-forked children that exit at once; then, until none is left unreaped (bounded),
  // count the zombies the namespace's /proc shows.
  const script = `for i in $(seq 50); do (sh -c 'exit 0' &); done
    n=0; while [ $n -lt 500 ]; do z=$(grep -l '^State:.*Z' /proc/[0-9]*/status 2>/dev/null | wc -l); [ "$z" -eq 0 ] && break; n=$((n+1)); sleep 0.01; done
    echo "$z"`;
  const g = spawnGroup('sh', ['-c', script], { contain: 'pidns', stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  g.leader.stdout.on('data', (d) => (out += d));
  const r = await g.closed;
  await waitFor(() => out.includes('\n'), { timeout: 2000, what: 'output' });
  assert.equal(r.exitCode, 0);
  assert.equal(out.trim(), '0');
});

test('pidns: a signal to the group reaches every process of the namespace; pid names procpin-init [L3a.contain.transparent]', async (t) => {
  if (!need(t, available('pidns'), 'pidns')) return;
  const tok = token();
  const g = spawnGroup('sh', attack(tok, "trap 'exit 9' USR1; while :; do sleep 0.05; done"), {
    contain: 'pidns',
    stdio: 'ignore',
  });
  await waitFor(() => marked(tok).length === 3, { timeout: 5000, what: 'three daemons' });
  const st = procStat(marked(tok)[0]);
  assert.ok(st, 'a daemon');
  assert.equal(procStat(g.pid).ppid, process.pid, 'pid is our direct child');
  assert.ok(readFileSync(`/proc/${g.pid}/cmdline`, 'latin1').includes('procpin-init'));
  assert.equal(g.signal('SIGUSR1'), true);
  const r = await g.closed;
  assert.equal(r.exitCode, 9);
  await noSurvivors(tok);
});

async function supervisor(t, mode, tok) {
  const out = join(tmpDirFor(t, 'procpin-contain-').path, 'info');
  const code = `
    import { spawnGroup } from ${pkg};
    import { writeFileSync } from 'node:fs';
    const g = spawnGroup('sh', ${JSON.stringify(attack(tok, 'exec sleep 1001'))}, { contain: ${JSON.stringify(mode)}, stdio: 'ignore' });
    writeFileSync(${JSON.stringify(out)}, JSON.stringify({ containment: g.containment, pid: g.pid }));
    setInterval(() => {}, 1000);`;
  const sup = cpSpawn(process.execPath, ['--input-type=module', '-e', code], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const info = await waitForJson(out, { what: 'the supervisor to start its group' });
  await waitFor(() => marked(tok).length === 3, { timeout: 5000, what: 'three daemons' });
  return { sup, info };
}

test('pidns: nothing of the command lives 2 s after its supervisor is SIGKILLed [L3a.contain.pidns-sigkill]', async (t) => {
  if (!need(t, available('pidns'), 'pidns')) return;
  const tok = token();
  const { sup, info } = await supervisor(t, 'pidns', tok);
  assert.equal(info.containment, 'pidns');
  sup.kill('SIGKILL');
  await noSurvivors(tok, 2000);
});

test("cgroup: a SIGKILLed supervisor's cgroup lives until a successor's sweepCgroups ends and removes it; a live supervisor's is kept [L3b.cgroups.sweep]", async (t) => {
  if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
  const tok = token();
  const { sup, info } = await supervisor(t, 'cgroup', tok);
  assert.equal(info.containment, 'cgroup');
  const live = spawnGroup('sleep', ['1000'], { contain: 'cgroup', stdio: 'ignore' });
  const [name] = ourCgroups(sup.pid);
  assert.ok(name, "the supervisor's cgroup");
  const exitSeen = new Promise((r) => sup.on('exit', r));
  sup.kill('SIGKILL');
  await exitSeen;
  // The daemons and the leader (which died by its parent-death signal) are beyond the supervisor.
  await waitFor(() => isGoneOrZombie(info.pid), { timeout: 2000, what: 'the leader to die' });
  assert.equal(marked(tok).length, 3, 'all three daemons live on in the cgroup');
  const report = await sweepCgroups();
  // Other dead supervisors' cgroups (another test run on this machine) may be swept as well.
  assert.deepEqual(
    report.removed.filter((e) => e.pid === sup.pid).map((e) => e.name),
    [name],
  );
  const mine = report.kept.filter((e) => e.pid === process.pid);
  assert.equal(mine.length, 1);
  assert.equal(mine[0].reason, 'alive');
  assert.equal(existsSync(join(cgroupBase, name)), false);
  await noSurvivors(tok);
  await live.stop();
  assert.deepEqual(ourCgroups(), []);
});

function isGoneOrZombie(pid) {
  const st = procStat(pid);
  return !st || st.state === 'Z' || st.state === 'X';
}

test("contain: 'auto' says which holds the group; a bad contain value is refused before anything starts [L3a.contain.auto]", async (t) => {
  if (!need(t, available('pidns'), 'pidns')) return;
  const g = spawnGroup('true', [], { contain: 'auto', stdio: 'ignore' });
  assert.equal(g.containment, 'pidns');
  await g.closed;
  assert.equal(spawnGroup('true', [], { stdio: 'ignore' }).containment, 'group');
  // @ts-expect-error not a containment mode
  assert.throws(() => spawnGroup('true', [], { contain: 'jail' }), { code: 'ERR_INVALID_ARG_VALUE' });
  assert.throws(() => spawnGroup('true', [], { contain: 'pidns', parentDeathSignal: null }), {
    code: 'ERR_PROCPIN_CONTAINMENT_UNAVAILABLE',
  });
});

// Unprivileged: uid 65534 through setpriv.
const setpriv = existsSync('/usr/bin/setpriv') ? '/usr/bin/setpriv' : null;
function asNobody(code, { wrap = [] } = {}) {
  return runCmd(
    setpriv,
    [
      '--reuid',
      '65534',
      '--regid',
      '65534',
      '--clear-groups',
      ...wrap,
      process.execPath,
      '--input-type=module',
      '-e',
      code,
    ],
    { timeout: 20000 },
  );
}

test('unprivileged pidns: a user namespace of its own, the uid it would have had, and no daemon outlives stop() [L3a.contain.userns]', async (t) => {
  if (!need(t, isRoot && setpriv !== null, 'root and setpriv to become uid 65534')) return;
  const tok = token();
  const code = `
    import { spawnGroup } from ${pkg};
    import { readdirSync, readFileSync } from 'node:fs';
    const marked = () => readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).filter((n) => { try { return readFileSync('/proc/' + n + '/cmdline', 'latin1') === ${JSON.stringify(`sleep\0${'1000.'}${tok}\0`)} && !/\\) [ZX] /.test(readFileSync('/proc/' + n + '/stat', 'latin1')); } catch { return false; } });
    const g = spawnGroup('sh', ${JSON.stringify(attack(tok, 'id -u; exec sleep 1001'))}, { contain: 'pidns', stdio: ['ignore', 'pipe', 'inherit'] });
    let out = ''; g.leader.stdout.on('data', (d) => (out += d));
    const end = Date.now() + 5000;
    while (marked().length < 3 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    const before = marked().length;
    while (!out.includes('\\n') && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    await g.stop();
    const end2 = Date.now() + 2000;
    while (marked().length > 0 && Date.now() < end2) await new Promise((r) => setTimeout(r, 5));
    console.log(JSON.stringify({ containment: g.containment, before, after: marked().length, out }));`;
  const r = await asNobody(code);
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout);
  assert.deepEqual(res, { containment: 'pidns', before: 3, after: 0, out: '65534\n' });
});

test("unprivileged, user namespaces refused: 'auto' falls back and says why; explicit 'pidns' and 'cgroup' throw and start nothing [L3a.contain.auto]", async (t) => {
  if (!need(t, isRoot && setpriv !== null, 'root and setpriv to become uid 65534')) return;
  const bin = compileC('nouserns');
  if (!need(t, bin !== null, `cc: ${compileC.lastError}`)) return;
  tmpDirFor(t, 'procpin-contain-');
  const mark = join('/tmp', `procpin-nouserns-${token()}`);
  const code = `
    import { spawnGroup } from ${pkg};
    const res = {};
    for (const mode of ['pidns', 'cgroup']) {
      try { spawnGroup('touch', [${JSON.stringify(mark)}], { contain: mode, stdio: 'ignore' }); res[mode] = 'started'; }
      catch (e) { res[mode] = e.code + ': ' + e.message; }
    }
    const g = spawnGroup('sh', ['-c', 'exit 3'], { contain: 'auto', stdio: 'ignore' });
    res.auto = g.containment; res.fallback = g.containmentFallback;
    res.exit = (await g.closed).exitCode;
    console.log(JSON.stringify(res));`;
  const r = await asNobody(code, { wrap: [bin] });
  assert.equal(r.code, 0, r.stderr);
  const res = JSON.parse(r.stdout);
  assert.match(res.pidns, /^ERR_PROCPIN_CONTAINMENT_UNAVAILABLE: .*user namespace was refused .*EPERM/);
  assert.match(res.cgroup, /^ERR_PROCPIN_CONTAINMENT_UNAVAILABLE: .*not delegated|not writable/);
  assert.equal(res.auto, 'group');
  assert.equal(res.exit, 3);
  assert.equal(res.fallback.length, 2);
  assert.match(res.fallback[0], /^pidns: a user namespace was refused/);
  assert.match(res.fallback[1], /^cgroup: /);
  assert.equal(existsSync(mark), false, 'nothing was started');
});

test('sweepCgroups reports nothing to do where there is nothing of dead supervisors [L3b.cgroups.sweep]', async (t) => {
  if (!need(t, available('cgroup'), 'cgroup needs root here')) return;
  const r = await sweepCgroups();
  assert.equal(r.removed.filter((e) => e.pid === process.pid).length, 0);
  // @ts-expect-error dryRun takes a boolean
  await assert.rejects(() => sweepCgroups({ dryRun: 'yes' }), { code: 'ERR_INVALID_ARG_VALUE' });
});

void CI;

test('procpin run --contain[=MODE] uses it and --verbose says which; a bad MODE is a usage error [CLI.run.contain]', async (t) => {
  if (!need(t, available('pidns') && available('cgroup'), 'pidns and cgroup')) return;
  const { procpin: cli } = await import('../cli/cli-helpers.mjs');
  const a = await cli(['run', '--contain', '-v', '--', 'sh', '-c', 'echo $$; exit 4']);
  assert.equal(a.code, 4);
  assert.equal(a.stdout, '2\n', 'the command is pid 2 of its namespace');
  assert.match(a.stderr, /containment: pidns/);
  const b = await cli([
    'run',
    '--contain=cgroup',
    '--verbose',
    'sh',
    '-c',
    'grep -c "^0::/.*procpin-" /proc/self/cgroup; kill -9 $$',
  ]);
  assert.equal(b.code, 137);
  assert.equal(b.stdout, '1\n');
  assert.match(b.stderr, /containment: cgroup/);
  const c = await cli(['run', '--contain=jail', 'true']);
  assert.equal(c.code, 2);
  const d = await cli(['sweep', '--cgroups', '--json']);
  assert.equal(d.code, 0, d.stderr);
  assert.ok(Array.isArray(JSON.parse(d.stdout).removed));
  assert.equal((await cli(['sweep', '--cgroups', '--prefix', 'x'])).code, 2);
});
