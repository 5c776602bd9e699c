// SPEC Layer 1 against the real kernel: the parent-death signal and the child subreaper. Anything
// that changes process-wide state runs in a child process; the record is /proc/PID/stat.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isGone, procStat, root, runNode, waitFor } from '../helpers.mjs';

const pkgUrl = JSON.stringify(`${root}/dist/index.js`);
test('setParentDeathSignal round-trips through getParentDeathSignal, by name and number, and 0 clears it [L1.prctl.pdeathsig]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    const out = [p.getParentDeathSignal()];
    p.setParentDeathSignal('SIGTERM'); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal(9); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal('SIGRTMIN+2'); out.push(p.getParentDeathSignal());
    p.setParentDeathSignal(0); out.push(p.getParentDeathSignal());
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [0, 15, 9, 36, 0]);
});

test('a grandchild that set a parent-death signal dies when its parent is SIGKILLed; one that did not lives on [L1.prctl.pdeathsig]', async (t) => {
  // parent (node) spawns two grandchildren (node); only `armed` calls setParentDeathSignal. The
  // signal belongs to the grandchild and fires when the thread that forked it (the parent's main
  // thread, where libuv forks) exits.
  const grandchild = (arm) => `import * as p from ${pkgUrl};
    const ppid = process.ppid;
    ${arm ? "p.setParentDeathSignal('SIGKILL');" : ''}
    if (process.ppid !== ppid) process.exit(3);  // the parent died before the prctl: no signal will come
    console.log('ready ' + p.getParentDeathSignal());
    setInterval(() => {}, 1000);`;
  const parent = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    import { spawn } from 'node:child_process';
    const start = (code) => new Promise((resolve) => {
      const c = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
      c.stdout.once('data', (d) => resolve({ pid: c.pid, said: String(d).trim() }));
    });
    const armed = await start(${JSON.stringify(grandchild(true))});
    const control = await start(${JSON.stringify(grandchild(false))});
    console.log(JSON.stringify({ armed, control }));
    setInterval(() => {}, 1000);`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(String(d))));
  const { armed, control } = JSON.parse(line);
  t.after(() => {
    for (const pid of [armed.pid, control.pid])
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
  });
  assert.equal(armed.said, 'ready 9');
  assert.equal(control.said, 'ready 0');
  assert.equal(procStat(armed.pid).ppid, parent.pid);
  const exited = new Promise((r) => parent.once('exit', r));
  parent.kill('SIGKILL');
  await exited;
  await waitFor(() => isGone(armed.pid), { what: 'the armed grandchild to die' });
  assert.ok(!isGone(control.pid), 'the unarmed grandchild is still alive');
  assert.notEqual(procStat(control.pid).ppid, parent.pid);
});

test('setChildSubreaper round-trips, and an orphaned grandchild is re-parented to the subreaper [L1.prctl.subreaper]', async () => {
  const r = await runNode(`import * as p from ${pkgUrl};
    import { execFileSync } from 'node:child_process'; import { readFileSync } from 'node:fs';
    const ppidOf = (pid) => Number(readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[1]);
    const out = { before: p.isChildSubreaper() };
    p.setChildSubreaper(true); out.on = p.isChildSubreaper();
    // sh exits at once; its background sleep is orphaned and must come to us, not to init.
    out.orphan = Number(execFileSync('sh', ['-c', 'sleep 30 >/dev/null 2>&1 & echo $!'], { encoding: 'utf8' }));
    out.orphanPpid = ppidOf(out.orphan);
    process.kill(out.orphan, 'SIGKILL');
    out.reaped = p.waitid(p.constants.P_PID, out.orphan, p.constants.WEXITED);
    p.setChildSubreaper(false); out.off = p.isChildSubreaper();
    out.self = process.pid;
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.before, false);
  assert.equal(out.on, true);
  assert.equal(out.orphanPpid, out.self, 'the orphan was re-parented to the subreaper');
  assert.equal(out.reaped.pid, out.orphan);
  assert.equal(out.reaped.signal, 'SIGKILL');
  assert.equal(out.off, false);
});
