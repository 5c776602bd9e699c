// A sweep removes a dead owner's directory however deep it is (and a claim is released however
// deep its directory grew), reports names exactly when they are not UTF-8, and reads liveness
// through the kernel when /proc belongs to another pid namespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as procpin from '../../dist/index.js';
import { isRoot, need, pkg, procLib, runCmd } from '../helpers.mjs';
import { deadPid, scratch } from './sweep-fixtures.mjs';

const P = 'app-';

/** Makes `depth` nested directories `d` below `top`, with a file at the bottom. */
function deepTree(top, depth) {
  let p = top;
  mkdirSync(p);
  for (let i = 0; i < depth; i++) {
    p = join(p, 'd');
    mkdirSync(p);
  }
  writeFileSync(join(p, 'data'), 'x');
}

for (const depth of [150, 1500]) {
  test(`a dead owner's directory ${depth} levels deep is removed, not kept with ELOOP [L3b.sweep.exact]`, async (t) => {
    const d = scratch(t);
    const dead = await deadPid();
    deepTree(join(d.path, `${P}${dead}`), depth);
    const r = await procpin.sweep(d.path, { prefix: P });
    assert.deepEqual(
      r.kept.map((e) => [e.reason, e.error?.code]),
      [],
    );
    assert.deepEqual(
      r.removed.map((e) => e.name),
      [`${P}${dead}`],
    );
    assert.deepEqual(readdirSync(d.path), []);
  });
}

test('a claim whose directory grew past 128 levels is released: the entry is gone [L3b.sweep.exact]', async (t) => {
  const d = scratch(t);
  const c = await procpin.claim(d.path, P);
  let p = c.path;
  for (let i = 0; i < 200; i++) {
    p = join(p, 'd');
    mkdirSync(p);
  }
  await c.release();
  assert.deepEqual(readdirSync(d.path), []);
});

test('a name that is not UTF-8 is reported as a Buffer of its exact bytes, and removed [L3b.sweep.exact]', async (t) => {
  const d = scratch(t);
  const dead = await deadPid();
  const bytes = Buffer.concat([Buffer.from(`${P}${dead}-`), Buffer.from([0xff, 0xfe, 0x80]), Buffer.from('.tmp')]);
  mkdirSync(Buffer.concat([Buffer.from(`${d.path}/`), bytes]));
  const utf8 = `${P}${dead}-é.tmp`;
  mkdirSync(join(d.path, utf8));
  const seen = [];
  const dc = await import('node:diagnostics_channel');
  const onMsg = (m) => seen.push(m.name);
  dc.subscribe('procpin:sweep', onMsg);
  t.after(() => dc.unsubscribe('procpin:sweep', onMsg));
  const r = await procpin.sweep(d.path, { prefix: P });
  const names = r.removed.map((e) => e.name);
  assert.equal(names.length, 2);
  const raw = names.find((n) => Buffer.isBuffer(n));
  assert.ok(raw, 'the non-UTF-8 name is a Buffer');
  assert.ok(raw.equals(bytes), `exact bytes: ${raw.toString('hex')}`);
  assert.ok(names.includes(utf8), 'a UTF-8 name stays a string');
  assert.ok(
    seen.some((n) => Buffer.isBuffer(n) && n.equals(bytes)),
    'the channel has the exact name too',
  );
  assert.deepEqual(readdirSync(d.path), []);
});

/** Runs a node module inside `unshare --pid --fork` without remounting /proc. */
function inSandbox(code, timeout = 30000) {
  return runCmd('unshare', ['--pid', '--fork', process.execPath, '--input-type=module', '-e', code], { timeout });
}
const unshareOk = () => isRoot && spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;

test("with /proc of another pid namespace, a sweep keeps a live owner's entry and its data [L3b.sweep.foreign-proc]", async (t) => {
  if (!need(t, unshareOk(), 'root and unshare --pid --fork')) return;
  const d = scratch(t);
  const r = await inSandbox(`
    import * as procpin from ${pkg};
    import { spawn } from 'node:child_process';
    import { existsSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
    // A pid number that the host's /proc does not show: a live process here, "no such pid" there.
    let n = 20000;
    while (existsSync('/proc/' + (n + 1))) n++;
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(n));
    const owner = spawn('sleep', ['30'], { stdio: 'ignore' });
    const { procStat } = await import(${procLib});
    const out = { procSelf: String(procStat('self').pid), pid: owner.pid, hostHasIt: existsSync('/proc/' + owner.pid) };
    const entry = ${JSON.stringify(d.path)} + '/${P}' + owner.pid;
    mkdirSync(entry);
    writeFileSync(entry + '/data', 'precious');
    const report = await procpin.sweep(${JSON.stringify(d.path)}, { prefix: '${P}' });
    out.kept = report.kept.map((e) => [e.name, e.reason]);
    out.removed = report.removed.map((e) => e.name);
    out.data = existsSync(entry + '/data');
    owner.kill('SIGKILL');
    await new Promise((r) => owner.once('exit', r));
    // Now dead: taken through the kernel's answer, not /proc's.
    const again = await procpin.sweep(${JSON.stringify(d.path)}, { prefix: '${P}' });
    out.removedAfterDeath = again.removed.map((e) => e.name);
    console.log(JSON.stringify(out));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.notEqual(out.procSelf, '1', "/proc is the host's, not the sandbox's");
  assert.equal(out.hostHasIt, false);
  assert.deepEqual(out.kept, [[`${P}${out.pid}`, 'alive']]);
  assert.deepEqual(out.removed, []);
  assert.equal(out.data, true);
  assert.deepEqual(out.removedAfterDeath, [`${P}${out.pid}`]);
});

test("with /proc of another pid namespace, a group's grace is not cut short: a member that needs 300 ms is not SIGKILLed [L3a.scan.advisory]", async (t) => {
  if (!need(t, unshareOk(), 'root and unshare --pid --fork')) return;
  const d = scratch(t);
  const marker = join(d.path, 'done');
  const member = join(d.path, 'member.sh');
  writeFileSync(member, `trap 'sleep 0.3; touch ${marker}; exit 0' TERM\necho started\nwhile :; do sleep 0.05; done\n`);
  const r = await inSandbox(`
    import * as procpin from ${pkg};
    import { existsSync, writeFileSync } from 'node:fs';
    // Numbers that the host's /proc does not list: a scan of it finds no member by luck.
    let n = 20000;
    while ([1, 2, 3, 4, 5, 6].some((k) => existsSync('/proc/' + (n + k)))) n += 7;
    writeFileSync('/proc/sys/kernel/ns_last_pid', String(n));
    const g = procpin.spawnGroup('sh', ['-c', 'sh ${member} & wait'], { stdio: ['ignore', 'pipe', 'ignore'], grace: 3000 });
    await new Promise((r) => g.leader.stdout.once('data', r));
    const t0 = performance.now();
    const result = await g.stop();
    console.log(JSON.stringify({ ms: Math.round(performance.now() - t0), finished: existsSync(${JSON.stringify(marker)}), killed: result.killed }));`);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.finished, true, `the member's 300 ms handler ran to the end (stop took ${out.ms} ms)`);
  assert.ok(out.ms >= 250, `the grace was not cut short: ${out.ms} ms`);
});
