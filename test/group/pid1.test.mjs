// A supervisor that is PID 1 of a pid namespace (a container's init): the members of its groups
// are re-parented to it, and nobody else will ever reap them. However a group ends (stop(), the
// leader's own exit, SIGTERM to the supervisor) no member survives and no zombie is left, read
// from /proc inside the namespace; the exit statuses are exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { need, root } from '../helpers.mjs';
import { canPidNs, runCmd } from '../fixtures/reliab-lib.mjs';

const pkgPath = join(root, 'dist', 'index.js');
const script = join(root, 'test', 'fixtures', 'pid1-supervisor.mjs');
const unshare = ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, script, pkgPath];
const lines = (out) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));

/** Runs the supervisor as PID 1 in `mode`; its report, once no member and no zombie is left. */
async function asPid1(mode) {
  const r = await runCmd('unshare', [...unshare, mode], { timeout: 60000 });
  assert.equal(r.code, 0, `the supervisor failed: ${r.stderr}`);
  const [o] = lines(r.stdout);
  assert.ok(o, `no report: ${r.stdout}${r.stderr}`);
  assert.deepEqual(o.live, [], 'members survived');
  assert.deepEqual(o.zombies, [], 'zombies left in the namespace');
  return o;
}

/** A test's body: the supervisor run as PID 1 in `mode` (asPid1 checks what it leaves), then `check` on its report. */
const pid1Run = (mode, check) => async (t) => {
  if (!need(t, canPidNs, 'needs root and unshare --pid')) return;
  check(await asPid1(mode));
};

test(
  'a PID 1 supervisor that stops its groups leaves no member alive and no zombie, each leader ended by SIGTERM [L3a.subreaper]',
  { timeout: 90000 },
  pid1Run('stop', (o) => {
    assert.equal(o.up, 15, 'leaders and members were running');
    assert.deepEqual(o.results, Array(5).fill([null, 'SIGTERM', true]));
  }),
);

test(
  'a PID 1 supervisor whose leaders exit on their own leaves no member alive and no zombie, each exit status exact [L3a.subreaper]',
  { timeout: 90000 },
  pid1Run('exit', (o) => assert.deepEqual(o.results, Array(5).fill([7, null, false]))),
);

test(
  'a PID 1 supervisor ended by SIGTERM kills its groups before it ends and ends by the signal [L3a.subreaper]',
  { timeout: 90000 },
  async (t) => {
    if (!need(t, canPidNs, 'needs root and unshare --pid')) return;
    const u = spawn('unshare', [...unshare, 'sigterm'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    u.stdout.on('data', (d) => (out += d));
    u.stderr.on('data', (d) => (err += d));
    const ended = new Promise((r) => u.on('close', (code, signal) => r({ code, signal })));
    const end = Date.now() + 30000;
    while (!out.includes('"ready"') && Date.now() < end && u.exitCode === null)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(out.includes('"ready"'), `the supervisor did not start: ${out}${err}`);
    // The supervisor is unshare's one child (its pid in our namespace).
    const sup = Number(readFileSync(`/proc/${u.pid}/task/${u.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    assert.ok(sup > 0);
    process.kill(sup, 'SIGTERM');
    const timer = setTimeout(() => u.kill('SIGKILL'), 20000);
    const r = await ended;
    clearTimeout(timer);
    const report = lines(out);
    assert.equal(report[0].up, 15, 'leaders and members were running');
    // unshare --fork passes its child's death by a signal on as its own.
    assert.ok(r.signal === 'SIGTERM' || r.code === 143, `the supervisor ended with ${r.code} / ${r.signal}: ${err}`);
    // Read inside the namespace as the supervisor ends (after it the kernel kills what is left of
    // the namespace anyway: only this line tells that procpin killed the groups).
    const atExit = report.find((l) => l.step === 'exit-event');
    assert.ok(atExit, `no report from the ending supervisor: ${out}${err}`);
    assert.deepEqual(atExit.live, [], 'members alive when the supervisor ended');
  },
);
