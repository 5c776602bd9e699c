// Identity is the pidfd, never the number (SPEC Layer 2 and 3a): a child that someone else reaped
// is reported as lost, never as a normal exit; a traced child that exited does not spin the event
// loop; a pidfd closed behind procpin's back neither crashes it nor makes it act on the descriptor
// that got the number; a leader that left its group still dies at stop(); a subreaper reaps the
// members re-parented to it; Child[Symbol.dispose] leaves nothing running.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn, spawnSync } from 'node:child_process';
import * as procpin from '../../dist/index.js';
import { isGone, need, pkg, procLib, procState, runNode, waitFor } from '../helpers.mjs';
import { compileC } from '../oldkernel.mjs';

const { spawn, spawnGroup } = procpin;
const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const LOST = 'ERR_PROCPIN_CHILD_LOST';

function lastJson(r) {
  const line = r.stdout.trim().split('\n').at(-1);
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`no result (status ${r.code ?? r.signal}): ${r.stdout}\n${r.stderr}`);
  }
}

test("a child reaped by another library's waitpid(-1) thread is lost: exited, poll and reap say ERR_PROCPIN_CHILD_LOST, and a lost leader's group still dies [L2.identity.lost]", async (t) => {
  const so = compileC('foreign_reaper', { output: 'foreign_reaper.so', shared: true });
  if (!need(t, so, `cc for the foreign reaper: ${compileC.lastError}`)) return;
  const r = await runNode(`
    import * as p from ${pkg};
    import { readdirSync, readFileSync } from 'node:fs';
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    const c = p.spawn('sleep', ['0.05'], { stdio: 'ignore' });
    // The event loop is held while the child exits: the foreign thread reaps it first.
    const t0 = Date.now();
    while (Date.now() - t0 < 400) {}
    const exited = await c.exited.then(() => 'resolved', (e) => e.code);
    const codes = [];
    for (const f of [() => c.poll(), () => c.reap()]) { try { f(); codes.push('none'); } catch (e) { codes.push(e.code); } }
    const killed = c.kill('SIGTERM');
    const g = p.spawnGroup('sh', ['-c', 'sleep 1000 & echo $!; sleep 0.1; exit 0'], { stdio: ['ignore', 'pipe', 'ignore'], grace: 500 });
    let member = '';
    for await (const d of g.leader.stdout) { member += d; break; }
    // The leader exits 100 ms after the echo, while the loop is held again: the foreign thread,
    // not procpin, reaps it (procpin reading the exit first would be a normal cleanup).
    const t1 = Date.now();
    while (Date.now() - t1 < 400) {}
    const closed = await g.closed.then(() => 'resolved', (e) => e.code);
    const { procState: st } = await import(${procLib});
    const m = Number(member.trim());
    const end = Date.now() + 3000;
    while (st(m) !== null && st(m) !== 'Z' && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    const memberGone = st(m) === null || st(m) === 'Z';
    if (!memberGone) process.kill(m, 'SIGKILL');
    console.log(JSON.stringify({ exited, codes, killed, closed, memberGone, viaPidfd: p.groupSignalsUsePidfd() }));
    process.exit(0);`);
  const o = lastJson(r);
  t.diagnostic(JSON.stringify(o));
  assert.equal(o.exited, LOST);
  assert.deepEqual(o.codes, [LOST, LOST]);
  assert.equal(o.killed, false);
  assert.equal(o.closed, LOST, 'closed rejects: never a result that looks normal');
  assert.equal(o.memberGone, o.viaPidfd, "the lost leader's member dies through its pidfd where the kernel has it");
});

test('a child reaped by someone else after its exit was read is lost for every later poll and reap, the first and the next alike [L2.identity.lost]', async () => {
  const c = spawn('true', [], { stdio: 'ignore' });
  const info = await c.exited;
  assert.equal(info.code, 'CLD_EXITED');
  // Another library's reap, by number, of the zombie procpin was keeping.
  const r = procpin.waitid(procpin.constants.P_PID, c.pid, procpin.constants.WEXITED);
  assert.equal(r.pid, c.pid);
  const codes = [];
  for (const f of [() => c.poll(), () => c.reap(), () => c.poll(), () => c.reap()]) {
    try {
      f();
      codes.push('none');
    } catch (e) {
      codes.push(e.code);
    }
  }
  assert.deepEqual(codes, [LOST, LOST, LOST, LOST]);
  assert.equal(c.kill('SIGKILL'), false);
});

test('SIGCHLD set to ignored after the spawn: the auto-reaped child is reported lost [L2.identity.lost]', async (t) => {
  const so = compileC('sigchld_ignore', { output: 'sigchld_ignore.so', shared: true });
  if (!need(t, so, `cc for the SIGCHLD helper: ${compileC.lastError}`)) return;
  const r = await runNode(`
    import * as p from ${pkg};
    const c = p.spawn('sleep', ['1000'], { stdio: 'ignore' });
    try { process.dlopen({ exports: {} }, ${JSON.stringify(so)}); } catch {}
    process.kill(c.pid, 'SIGKILL');
    const exited = await c.exited.then(() => 'resolved', (e) => e.code);
    let reap; try { c.reap(); reap = 'none'; } catch (e) { reap = e.code; }
    console.log(JSON.stringify({ exited, reap }));`);
  assert.deepEqual(lastJson(r), { exited: LOST, reap: LOST });
});

test('an exited child traced by a debugger that has not waited does not spin the event loop [L2.identity.traced]', async (t) => {
  const tracer = compileC('tracer');
  if (!need(t, tracer, `cc for the tracer: ${compileC.lastError}`)) return;
  const c = spawn('sleep', ['1000'], { stdio: 'ignore' });
  const tr = cpSpawn(tracer, [String(c.pid)], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => tr.kill('SIGKILL'));
  let out = '';
  tr.stdout.on('data', (d) => (out += d));
  tr.stderr.on('data', (d) => (out += d));
  await waitFor(() => out.includes('seized') || tr.exitCode !== null, { timeout: 5000, what: 'the tracer to attach' });
  if (!need(t, out.includes('seized'), `ptrace not permitted here: ${out}`)) return;
  let seen = false;
  void c.exited.then(() => (seen = true));
  process.kill(c.pid, 'SIGKILL');
  await waitFor(() => procState(c.pid) === 'Z', { timeout: 5000, what: 'the traced child to be a zombie' });
  // An idle second: the pidfd is readable, nothing can be waited for yet.
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  const cpu = process.cpuUsage(cpu0);
  const ms = (cpu.user + cpu.system) / 1000;
  t.diagnostic(
    `CPU over an idle ${(performance.now() - wall0).toFixed(0)} ms with a traced zombie: ${ms.toFixed(1)} ms`,
  );
  assert.equal(seen, false, 'the exit is not visible to the parent before the tracer lets go');
  assert.ok(ms < 150, `the event loop spun: ${ms} ms of CPU in an idle second`);
  tr.kill('SIGKILL'); // the tracer's end hands the zombie back to its parent
  const info = await c.exited;
  assert.equal(info.signal, 'SIGKILL');
  c.reap();
});

test("closing child.pidfd behind procpin's back neither crashes nor makes procpin act on the descriptor that got the number [L2.identity.pidfd-closed]", async () => {
  const r = await runNode(`
    import * as p from ${pkg};
    import { closeSync, readlinkSync } from 'node:fs';
    import { spawn as cp } from 'node:child_process';
    const other = cp('sleep', ['1000'], { stdio: 'ignore' });
    await new Promise((r) => other.once('spawn', r));
    const c = p.spawn('sleep', ['1000'], { stdio: 'ignore' });
    const n = c.pidfd;
    closeSync(n); // in the spawn's own tick
    const h = p.openProcess(other.pid); // likely takes the number n
    const took = h.pidfd === n;
    const killed = c.kill('SIGKILL');
    const info = await c.exited;
    c.reap();
    let otherFd; try { otherFd = readlinkSync('/proc/self/fd/' + h.pidfd); } catch { otherFd = null; }
    const otherAlive = h.kill(0);
    h.close();
    other.kill('SIGKILL');
    console.log(JSON.stringify({ took, killed, signal: info.signal, otherFd: otherFd !== null, otherAlive }));`);
  const o = lastJson(r);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(o, { took: o.took, killed: true, signal: 'SIGKILL', otherFd: true, otherAlive: true });
});

test("an application's own pidfd of the child that took the number of a closed child.pidfd is not closed by reap or close [L2.identity.pidfd-closed]", async () => {
  const r = await runNode(`
    import * as p from ${pkg};
    import { closeSync, existsSync, fstatSync } from 'node:fs';
    const open = (fd) => { try { fstatSync(fd); return true; } catch { return false; } };
    const out = {};
    for (const end of ['reap', 'close']) {
      const c = p.spawn('sleep', ['1000'], { stdio: 'ignore' });
      const n = c.pidfd;
      closeSync(n);
      // The application opens its own pidfd of the same child: the lowest free number, so fill
      // the lower ones first until it is n.
      const filler = [];
      let mine;
      while ((mine = p.pidfdOpen(c.pid)) !== n) filler.push(mine);
      for (const f of filler) closeSync(f);
      if (end === 'reap') {
        c.kill('SIGKILL');
        await c.exited;
        c.reap();
      } else {
        // Let go while it runs: procpin reaps it the moment it exits, and lets go of its pidfds.
        c.close();
        p.pidfdSendSignal(mine, 9);
        const t0 = Date.now();
        while (existsSync('/proc/' + c.pid) && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 10));
      }
      out[end] = open(mine);
      if (open(mine)) closeSync(mine);
    }
    console.log(JSON.stringify(out));`);
  const o = lastJson(r);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(o, { reap: true, close: true });
});

test('stop() settles for a leader that left its group and ignores SIGTERM: it dies at SIGKILL after the grace [L3a.stop.settles]', async (t) => {
  if (!need(t, has('python3'), 'python3')) return;
  // The leader moves into its parent's group (ours), so its own group is empty and a group
  // signal gets ESRCH: only its own pidfd still reaches it.
  const g = spawnGroup(
    'python3',
    [
      '-c',
      'import os,signal,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); os.setpgid(0, os.getpgid(os.getppid())); print("moved", flush=True); time.sleep(1000)',
    ],
    { grace: 300, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  g.leader.stdout.on('data', (d) => (out += d));
  await waitFor(() => out.includes('moved'), { timeout: 10000, what: 'the leader to leave its group' });
  let timer;
  const bound = new Promise(
    (_, reject) => (timer = setTimeout(() => reject(new Error('stop() did not settle in 10 s')), 10000)),
  );
  t.after(() => {
    clearTimeout(timer);
    if (!isGone(g.pid)) process.kill(g.pid, 'SIGKILL');
  });
  const result = await Promise.race([g.stop(), bound]);
  assert.equal(result.signal, 'SIGKILL');
  assert.equal(result.stoppedWhileRunning, true);
  assert.equal(g.state, 'released');
});

test('a supervisor that is a subreaper reaps the members re-parented to it once each group is cleaned [L3a.subreaper]', async () => {
  const r = await runNode(`
    import * as p from ${pkg};
    import { readdirSync, readFileSync } from 'node:fs';
    p.setChildSubreaper(true);
    const { ourZombies } = await import(${procLib});
    const zombies = () => ourZombies().length;
    const groups = [];
    for (let i = 0; i < 10; i++) {
      // Leaders that exit at once (members re-parented to us while running), and ones we stop.
      groups.push(p.spawnGroup('sh', ['-c', 'sleep 1000 & sleep 1000 & exit 0'], { stdio: 'ignore', grace: 200 }));
      const g = p.spawnGroup('sh', ['-c', 'sleep 1000 & sleep 1000 & wait'], { stdio: 'ignore', grace: 200 });
      groups.push(g);
    }
    await new Promise((r) => setTimeout(r, 50));
    await Promise.all(groups.map((g) => g.stop()));
    console.log(JSON.stringify({ groups: groups.length, zombies: zombies() }));`);
  const o = lastJson(r);
  assert.deepEqual(o, { groups: 20, zombies: 0 });
});

test('Child[Symbol.dispose] on a running child SIGKILLs it, reaps it and closes it [L2.dispose]', () => {
  const c = spawn('sleep', ['1000'], { stdio: 'ignore' });
  const pid = c.pid;
  c[Symbol.dispose]();
  assert.equal(c.reaped, true);
  assert.equal(c.poll().signal, 'SIGKILL');
  assert.equal(procState(pid), null, 'reaped: no zombie left');
  assert.equal(c.pidfd, -1);
  c[Symbol.dispose](); // idempotent
});

test("Child[Symbol.dispose] refuses a group's leader as close() does [L3a.leader.owned]", async () => {
  const g = spawnGroup('sleep', ['1000'], { stdio: 'ignore', grace: 100 });
  assert.throws(() => g.leader[Symbol.dispose](), { code: 'ERR_PROCPIN_GROUP_LEADER' });
  await g.stop();
});
