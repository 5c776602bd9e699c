// The advisory /proc scan of a group's members, against real processes started by child_process
// (detached: each is the leader of a new session and group).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { symlinkSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { procStat, tmpDir, waitFor } from './helpers.mjs';

const require = createRequire(import.meta.url);
const { scanGroup, parseStat } = require('../dist/group.js');

function startGroup(script, t) {
  const cp = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' });
  t.after(() => {
    try {
      process.kill(-cp.pid, 'SIGKILL');
    } catch {}
  });
  return cp;
}

test('parseStat takes the last ")" as the end of the command name, whatever it holds', () => {
  assert.deepEqual(parseStat('123 (a) b (c)) S 1 77 77 0 -1'), { state: 'S', ppid: 1, pgid: 77 });
  assert.deepEqual(parseStat('9 (x) Z 5 6 (y) R 4 9 9 0'), { state: 'R', ppid: 4, pgid: 9 });
  assert.deepEqual(parseStat('9 ( ) Z 2 3 4'), { state: 'Z', ppid: 2, pgid: 3 });
  assert.equal(parseStat('garbage'), null);
  assert.equal(parseStat('1 (x)'), null);
});

test('scanGroup counts the live members of a group and nothing else', async (t) => {
  const cp = startGroup('sleep 30 & sleep 30 & exec sleep 30', t);
  await waitFor(() => scanGroup(cp.pid) === 3, { what: 'three members' });
  assert.equal(scanGroup(cp.pid, 2), 2, 'stops at the limit');
  process.kill(-cp.pid, 'SIGKILL');
  await waitFor(() => scanGroup(cp.pid) === 0, { what: 'the group to empty' });
});

test('scanGroup does not count a zombie member', async (t) => {
  // `true` exits at once; its parent execs into sleep, which never reaps it.
  const cp = startGroup('/bin/true & exec sleep 30', t);
  await waitFor(
    () => {
      const kids = [];
      for (const name of require('node:fs').readdirSync('/proc')) {
        const st = /^\d+$/.test(name) && procStat(Number(name));
        if (st && st.ppid === cp.pid) kids.push(st);
      }
      return kids.length === 1 && kids[0].state === 'Z';
    },
    { what: 'a zombie member' },
  );
  assert.equal(scanGroup(cp.pid), 1);
});

test('scanGroup reads a member whose command name holds spaces and parentheses', async (t) => {
  const dir = tmpDir();
  t.after(() => dir[Symbol.dispose]());
  const odd = join(dir.path, 'a) R 1 (b');
  symlinkSync('/bin/sleep', odd);
  const cp = spawn(odd, ['30'], { detached: true, stdio: 'ignore' });
  t.after(() => {
    try {
      process.kill(cp.pid, 'SIGKILL');
    } catch {}
  });
  await waitFor(() => procStat(cp.pid)?.comm === 'a) R 1 (b', { what: 'the odd name' });
  const line = readFileSync(`/proc/${cp.pid}/stat`, 'latin1');
  assert.equal(parseStat(line).pgid, cp.pid);
  assert.equal(scanGroup(cp.pid), 1);
  assert.ok(existsSync(odd));
});
