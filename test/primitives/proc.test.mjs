// readProcStat (lib/proc.ts): /proc/PID/stat read by the addon's one /proc reader
// (native/core/proc.cc, which the sweep and the group scan use too), compared with the file
// itself for real processes: live, stopped, a zombie, gone, and one whose name holds ') ('.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { procStat, procState, tmpDirFor, waitFor } from '../helpers.mjs';

const require = createRequire(import.meta.url);
const { readProcStat } = require('../../dist/proc.js');

/** Fields 22 (starttime) of the file, for comparison. */
const startTimeOf = (pid) => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop().split(' ')[19]);

test('readProcStat gives the state, parent, group, session and start time /proc/PID/stat shows [A.one-reader]', () => {
  const st = readProcStat(process.pid);
  const file = procStat(process.pid);
  assert.deepEqual(st, {
    state: file.state,
    ppid: file.ppid,
    pgid: file.pgid,
    session: file.sid,
    startTime: startTimeOf(process.pid),
  });
  assert.equal(st.state, 'R');
});

test('readProcStat reads a command name holding spaces and ") (" up to its last parenthesis [A.one-reader]', async (t) => {
  const dir = tmpDirFor(t, 'procpin-procstat-');
  const odd = join(dir.path, 'a) (b c) Z');
  copyFileSync('/bin/sleep', odd);
  const c = spawn(odd, ['30'], { stdio: 'ignore', detached: true });
  t.after(() => c.kill('SIGKILL'));
  await waitFor(() => procStat(c.pid)?.comm === 'a) (b c) Z' && procState(c.pid) === 'S', {
    what: 'the odd name asleep',
  });
  const st = readProcStat(c.pid);
  assert.equal(st.state, 'S');
  assert.equal(st.ppid, process.pid);
  assert.equal(st.pgid, c.pid, 'detached: the leader of its own group');
  assert.equal(st.session, c.pid);
  assert.equal(st.startTime, startTimeOf(c.pid));
});

test('readProcStat shows a stopped process as T, a zombie as Z, and null once it is reaped [A.one-reader]', async () => {
  const c = spawn('sleep', ['30'], { stdio: 'ignore' });
  await waitFor(() => procState(c.pid) === 'S', { what: 'sleeping' });
  c.kill('SIGSTOP');
  await waitFor(() => procState(c.pid) === 'T', { what: 'stopped' });
  assert.equal(readProcStat(c.pid).state, 'T');
  // Node's own child_process reaps at once; a zombie needs a parent that does not: a shell
  // whose child exits while the shell sleeps on (exec'd sleep is not its waiter).
  const exited = once(c, 'exit'); // emitted once libuv has reaped it
  c.kill('SIGKILL');
  await exited;
  assert.equal(readProcStat(c.pid), null);
  const sh = spawn('sh', ['-c', 'sh -c "exit 0" & exec sleep 30'], { stdio: 'ignore' });
  try {
    let zombie = 0;
    await waitFor(
      () => {
        const kids = readFileSync(`/proc/${sh.pid}/task/${sh.pid}/children`, 'utf8')
          .trim()
          .split(' ')
          .filter(Boolean)
          .map(Number);
        zombie = kids.find((k) => procState(k) === 'Z') ?? 0;
        return zombie > 0;
      },
      { what: 'a zombie child of sleep' },
    );
    assert.equal(readProcStat(zombie).state, 'Z');
    assert.equal(readProcStat(zombie).ppid, sh.pid);
  } finally {
    sh.kill('SIGKILL');
  }
});

test('readProcStat refuses a pid that is not a positive int32 with a Node-shaped error [C.args.refused-first]', () => {
  for (const bad of [0, -1, 1.5, 2 ** 31, NaN]) {
    assert.throws(() => readProcStat(bad), { code: 'ERR_OUT_OF_RANGE' }, String(bad));
  }
  for (const bad of ['1', null, undefined, 1n]) {
    // @ts-expect-error not a pid: each bad value is refused
    assert.throws(() => readProcStat(bad), { code: 'ERR_INVALID_ARG_TYPE' }, String(bad));
  }
});
