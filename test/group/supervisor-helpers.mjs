// The supervisor of the supervisor-end tests: a child node process with two groups of three live
// members each (a shell leader and two background sleeps that nothing but a group signal
// reaches), ended by the test in one way; then its exit status and the members left are read.
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { liveMembers, pkg, procLib, waitFor } from '../helpers.mjs';

export const idle = 'setInterval(() => {}, 1000);';

// Two groups (`from`: the module each is spawned with, as string literals); prints READY <pgids> once every member runs, then (with `go`, once a line comes
// on stdin) runs `then`.
export function supervisorCode(then, { before = '', go = false, from = [pkg, pkg] } = {}) {
  return `
    ${before}
    const froms = [${from.join(', ')}];
    const groups = [];
    for (const f of froms) groups.push((await import(f)).spawnGroup('sh', ['-c', 'sleep 1000 & sleep 1000 & wait'], { stdio: 'ignore' }));
    const { liveMembers } = await import(${procLib});
    const count = (pgid) => liveMembers(pgid).length;
    const t0 = Date.now();
    while (groups.some((g) => count(g.pgid) < 3) && Date.now() - t0 < 10000) await new Promise((r) => setTimeout(r, 5));
    if (${JSON.stringify(!then.includes('parentPort'))}) process.stdout.write('READY ' + JSON.stringify(groups.map((g) => g.pgid)) + '\\n');
    ${go ? "await new Promise((r) => process.stdin.once('data', r)); process.stdin.pause(); process.stdin.unref?.();" : ''}
    ${then}`;
}

// Starts the supervisor (through sh for `ulimit -c 0`: no core files for SIGABRT and SIGQUIT).
export function startSupervisor(code, { nodeArgs = [], groups = true, prefix = '' } = {}) {
  const args = [...nodeArgs, '--input-type=module', '-e', code].map((a) => `'${a.replace(/'/g, `'\\''`)}'`);
  const sup = cpSpawn('sh', ['-c', `ulimit -c 0; ${prefix} exec ${process.execPath} ${args.join(' ')}`], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  sup.stdout.on('data', (d) => (out += d));
  sup.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) => sup.on('close', (code, signal) => resolve({ code, signal })));
  const ready = !groups
    ? null
    : waitFor(() => /READY (\[.*\])/.exec(out)?.[1], { timeout: 15000, what: 'the supervisor to start its groups' })
        .then((s) => JSON.parse(s))
        .catch((e) => {
          throw new Error(`${e.message}\n${err}`);
        });
  return { sup, ready, done, output: () => out + err };
}

// Members still alive (not zombies) of the given groups, after waiting (bounded) for them to go.
export async function survivors(pgids, ms = 3000) {
  const alive = () => pgids.flatMap((g) => liveMembers(g).map((m) => m.pid));
  await waitFor(() => alive().length === 0, { timeout: ms, what: 'every member gone' }).catch(() => {});
  return alive();
}

// Test cleanup: kill what survived, by pid, while it still is what we saw.
export function killLeft(pgids) {
  for (const g of pgids) {
    for (const m of liveMembers(g)) {
      try {
        process.kill(m.pid, 'SIGKILL');
      } catch {}
    }
  }
}

/**
 * Starts a supervisor running `code`, lets it go, ends it (`end`, or by itself) and checks that no
 * member of its groups is left and that it ended with `expect`.
 * @param {import('node:test').TestContext} t
 * @param {{ code: string, nodeArgs?: string[], end?: (sup: import('node:child_process').ChildProcess) => void, expect: object, prefix?: string }} how
 */
export async function endAndCount(t, { code, nodeArgs, end, expect, prefix }) {
  const s = startSupervisor(code, { nodeArgs, prefix });
  const pgids = await s.ready;
  t.after(() => killLeft(pgids));
  assert.equal(pgids.flatMap((g) => liveMembers(g)).length, 6);
  s.sup.stdin.write('go\n');
  end?.(s.sup);
  const status = await s.done;
  const left = await survivors(pgids);
  t.diagnostic(`status ${JSON.stringify(status)}, ${left.length} of 6 members alive afterwards`);
  assert.deepEqual(left, [], `members alive after the supervisor ended: ${s.output()}`);
  assert.deepEqual(status, expect, s.output());
  return s.output();
}
