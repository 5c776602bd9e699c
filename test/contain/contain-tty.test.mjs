// `foreground: true` with containment, on a real pseudo-terminal (script(1)): the contained
// command gets the terminal as without containment. It may set the terminal's modes from its
// first instruction (a stop by SIGTTOU in the moment before the handover is undone, as for a plain
// group), ^C reaches it, ^Z stops it and the supervisor sees the stop (here, with nobody to stop
// the supervisor's own session, the job simply goes on), the terminal comes back to the
// supervisor with its modes, and nothing of the command survives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRoot, need, onTerminal, procLib, root, tmpDirFor, waitFor } from '../helpers.mjs';
import { bin } from '../cli/cli-helpers.mjs';
import { cgroupBase, cgroupsOf, marked } from './contain-helpers.mjs';

const hasScript = spawnSync('sh', ['-c', 'command -v script && command -v stty']).status === 0;

function available(mode) {
  if (mode === 'cgroup') return isRoot && cgroupBase !== null;
  return isRoot || existsSync('/proc/sys/user/max_user_namespaces');
}

test.after(() => {
  assert.deepEqual(cgroupsOf(process.pid), []);
});

for (const mode of ['pidns', 'cgroup']) {
  test(`${mode}: foreground: true on a terminal: stty at once works every time, ^C and ^Z reach the command, the terminal comes back and nothing survives [L3a.foreground]`, async (t) => {
    if (!need(t, hasScript && available(mode), `${mode} on a terminal needs script(1), stty and ${mode}`)) return;
    const tok = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const dir = tmpDirFor(t, 'procpin-fgc-');
    const prog = join(dir.path, 'fg.cjs');
    const script =
      `trap 'echo got-INT; exit 7' INT; ` +
      `(setsid sleep 1000.${tok} </dev/null >/dev/null 2>&1 &); sleep 1000.${tok} </dev/null >/dev/null 2>&1 & ` +
      // The trap comes after the stty: a SIGCONT that ended a stop by SIGTTOU before the handover
      // is not the one looked for.
      // The shell waits in wait(2), where ^Z stops it (a vfork'd child in a loop could be stopped
      // while the shell sits in vfork, which no stop reaches: the job would not look stopped).
      `stty -echo; trap 'echo got-CONT' CONT; echo READY; sleep 1000 & while :; do wait; done`;
    writeFileSync(
      prog,
      `const { spawnGroup } = require(${JSON.stringify(join(root, 'dist', 'index.js'))});
      const modes = () => require('node:child_process').execFileSync('stty', ['-g'], { stdio: ['inherit', 'pipe', 'inherit'] }).toString();
      const opts = { contain: ${JSON.stringify(mode)}, foreground: true, stdio: 'inherit', grace: 500 };
      require('node:fs').writeFileSync(process.argv[2] + '/pid', String(process.pid));
      (async () => {
        const { procStat } = await import(${procLib});
        const before = modes();
        const fg = () => { const me = procStat('self'); return me.tpgid === me.pgid ? 'fg-back' : 'fg-lost'; };
        // The command sets the terminal's modes from its first instruction: 10 times.
        const quick = [];
        for (let i = 0; i < 10; i++) {
          const r = await spawnGroup('stty', ['-echo'], { ...opts, timeout: 5000 }).closed;
          quick.push(r.timedOut ? 'timeout' : r.exitCode);
        }
        console.log('QUICK', quick.join(','), fg(), modes() === before ? 'modes-back' : 'modes-changed');
        const r = await spawnGroup('sh', ['-c', ${JSON.stringify(script)}], { ...opts, timeout: 20000 }).closed;
        console.log('RESULT', r.exitCode, r.signal, r.timedOut, fg(), modes() === before ? 'modes-back' : 'modes-changed');
      })();`,
    );
    // A supervisor that hangs is not left behind when script(1) is killed.
    t.after(() => {
      try {
        process.kill(Number(readFileSync(join(dir.path, 'pid'), 'utf8')), 'SIGKILL');
      } catch {}
    });
    const r = await onTerminal(`${process.execPath} ${prog} ${dir.path}`, {
      steps: [
        ['READY\n', '\x1a'],
        ['got-CONT\n', '\x03'],
      ],
      timeout: 30000,
    });
    assert.match(r.out, /QUICK 0,0,0,0,0,0,0,0,0,0 fg-back modes-back/, r.out);
    assert.match(r.out, /got-CONT\n/, r.out);
    assert.match(r.out, /got-INT\n/, r.out);
    assert.match(r.out, /RESULT 7 null false fg-back modes-back/, r.out);
    await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no process of the command alive' });
  });
}

test('procpin run --contain=pidns on a terminal: the command has the foreground, ^C reaches it, and the terminal comes back [CLI.run.contain]', async (t) => {
  if (!need(t, hasScript && available('pidns'), 'needs script(1), stty and pidns')) return;
  const tok = `${process.pid}${Math.floor(Math.random() * 1e6)}`;
  const cmd =
    `${process.execPath} ${bin} run --contain=pidns -- sh -c ` +
    `'trap "echo got-INT; exit 7" INT; (setsid sleep 1000.${tok} </dev/null >/dev/null 2>&1 &); ` +
    `stty -echo; stty -a | grep -o -- " -echo " ; echo READY; while :; do sleep 0.05; done'; ` +
    `echo "rc=$?"; set -- $(cat /proc/$$/stat); [ "$5" = "$8" ] && echo fg-back; stty -a | grep -o -- " echo "`;
  const r = await onTerminal(cmd, { steps: [['READY\n', '\x03']], timeout: 30000 });
  assert.match(r.out, / -echo \nREADY\n/, r.out);
  assert.match(r.out, /got-INT\nrc=7\nfg-back\n echo \n/, r.out);
  await waitFor(() => marked(tok).length === 0, { timeout: 3000, what: 'no process of the command alive' });
});
