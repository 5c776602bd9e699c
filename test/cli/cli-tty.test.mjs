// `procpin run` on a real pseudo-terminal: the group gets the terminal's foreground, the terminal's
// foreground and modes come back when the leader exits, ^Z stops the job the way a shell expects
// and `fg` resumes it, ^C reaches the group and not procpin, and a stop with nobody to continue
// procpin does not hang it. `script` provides a terminal with a non-interactive shell; tmux one
// with an interactive bash that does job control.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isGone, need, onTerminal, parseStat, procStat, procState, tmpDirFor, waitFor } from '../helpers.mjs';
import { bin } from './cli-helpers.mjs';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const node = process.execPath;
const procpinCmd = `${node} ${bin}`;

// For sh -c '...': waits (bounded, about 2 s) until the shell's group is the terminal's foreground.
// The command runs from the moment it is spawned and the foreground is handed over right after.
const untilForeground =
  'i=0; while [ $i -lt 200 ]; do set -- $(cat /proc/$$/stat); [ "$5" = "$8" ] && break; i=$((i+1)); sleep 0.01; done';

/**
 * Waits for procpin (its pid) to exit, then for bash to report `rc` as its exit status.
 * @param {{ run: (line: string) => void, pane: () => string }} sh
 * @param {number} procpin
 * @param {number} rc
 */
async function exitStatusIs(sh, procpin, rc) {
  await waitFor(() => isGone(procpin), { what: 'procpin exited' });
  sh.run('echo "rc=$?"');
  await waitFor(() => new RegExp(`rc=${rc}`).test(sh.pane()), { what: `exit status ${rc}` });
}

test('on a terminal the group gets the foreground, and procpin takes it back at the end [CLI.run.tty]', async (t) => {
  if (!need(t, has('script'), 'script(1) (util-linux) is needed for a pseudo-terminal')) return;
  const r = await onTerminal(
    `${procpinCmd} run -- sh -c '${untilForeground}; cat /proc/$$/stat; exit 5'; echo "rc=$?"; cat /proc/$$/stat`,
  );
  const [inner, rc, outer] = r.out.trim().split('\n');
  assert.equal(rc, 'rc=5', r.out);
  const g = parseStat(inner);
  assert.equal(g.pgid, g.pid, 'the command leads its own group');
  assert.equal(g.tpgid, g.pgid, "the command's group is the terminal's foreground");
  const o = parseStat(outer);
  assert.notEqual(o.pgid, g.pgid);
  assert.equal(o.tpgid, o.pgid, "the shell's group has the foreground again");
});

test("the terminal's foreground and modes come back when the leader exits, while the group is cleaned [CLI.run.tty]", async (t) => {
  if (!need(t, has('script') && has('stty'), 'script(1) and stty are needed')) return;
  const dir = tmpDirFor(t);
  const f = (name) => join(dir.path, name);
  // procpin execs in place of the shell, so its pid and group are the shell's; a member that
  // ignores SIGTERM keeps the cleanup busy for the grace period.
  const running = onTerminal(
    `tty > ${f('tty')}; stty -g > ${f('modes')}; echo $$ > ${f('procpin')}; ` +
      `exec ${procpinCmd} run --grace 3s -- sh -c ` +
      `'stty raw -echo; sh -c "trap \\"\\" TERM; echo \\$\\$ > ${f('member')}; exec sleep 30" & ` +
      `while [ ! -s ${f('member')} ]; do sleep 0.01; done; exit 0'`,
  );
  await waitFor(() => existsSync(f('member')) && readFileSync(f('member'), 'utf8').endsWith('\n'), {
    what: 'the member started',
  });
  const tty = readFileSync(f('tty'), 'utf8').trim();
  const modes = readFileSync(f('modes'), 'utf8').trim();
  const procpin = Number(readFileSync(f('procpin'), 'utf8'));
  const member = Number(readFileSync(f('member'), 'utf8'));
  const ttyModes = () => spawnSync('stty', ['-F', tty, '-g'], { encoding: 'utf8' }).stdout.trim();
  await waitFor(() => procStat(procpin)?.tpgid === procpin && ttyModes() === modes, {
    timeout: 2000,
    what: "procpin's group in the foreground with the original modes",
  });
  assert.ok(!isGone(member), 'the group is still being cleaned');
  const r = await running;
  assert.equal(r.code, 0, r.out);
  assert.ok(isGone(member));
});

test('a stop of the job with nobody to continue procpin does not hang it: the job goes on [CLI.run.tty]', async (t) => {
  if (!need(t, has('script'), 'script(1) (util-linux) is needed for a pseudo-terminal')) return;
  // Under script, procpin's group is orphaned (its parent is in another session), so the stop it
  // passes on to itself is discarded by the kernel, and the job must be continued.
  const r = await onTerminal(
    `exec ${procpinCmd} run -- sh -c '${untilForeground}; kill -TSTP $$; echo resumed; exit 4'`,
    {
      timeout: 10000,
    },
  );
  assert.equal(r.signal, null, 'procpin was not left hanging');
  assert.match(r.out, /resumed/);
  assert.equal(r.code, 4);
});

/**
 * Runs `fn({ sh, dir })` with an interactive shell named `name` and a scratch directory of test
 * `t`; closes the shell after. Needs tmux and bash (under CI=true their absence fails).
 */
async function withShell(t, name, fn) {
  if (!need(t, has('tmux') && has('bash'), 'tmux and bash are needed')) return;
  const dir = tmpDirFor(t);
  const sh = await interactiveShell(name);
  try {
    await fn({ sh, dir });
  } finally {
    sh.close();
  }
}

/** An interactive bash (with job control) on a tmux terminal; `close()` ends it. */
async function interactiveShell(name) {
  const sock = `procpin-test-${process.pid}-${name}`;
  const tmux = (...args) => spawnSync('tmux', ['-L', sock, ...args], { encoding: 'utf8' });
  const started = tmux(
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    't',
    '-x',
    '160',
    '-y',
    '40',
    `env -i PATH=${process.env.PATH} TERM=xterm PS1='prompt> ' bash --norc --noprofile -i`,
  );
  assert.equal(started.status, 0, started.stderr);
  const sh = {
    pane: () => tmux('capture-pane', '-p', '-t', 't', '-S', '-200').stdout,
    /** Types `line` and Enter. */
    run: (line) => {
      tmux('send-keys', '-t', 't', '-l', line);
      tmux('send-keys', '-t', 't', 'Enter');
    },
    key: (k) => tmux('send-keys', '-t', 't', k),
    close: () => tmux('kill-server'),
  };
  await waitFor(() => sh.pane().includes('prompt>'), { what: 'prompt' });
  return sh;
}

/** Waits for `file` to hold a line, and returns it as a number. */
async function pidFrom(file) {
  await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').endsWith('\n'), { what: file });
  return Number(readFileSync(file, 'utf8'));
}

const ppidOf = (pid) => procStat(pid).ppid;

test('in an interactive shell ^Z stops the job, bg and fg continue it, ^C reaches the group (not procpin) [CLI.run.tty]', async (t) => {
  await withShell(t, 'stop', async ({ sh, dir }) => {
    const leaderFile = join(dir.path, 'leader');
    sh.run(`${procpinCmd} run --verbose -- sh -c 'echo $$ > ${leaderFile}; while read x; do echo "got=$x"; done'`);
    const leader = await pidFrom(leaderFile);
    const procpin = ppidOf(leader);
    await waitFor(() => procStat(leader)?.tpgid === leader, { what: 'the group in the foreground' });
    sh.run('one');
    await waitFor(() => /got=one/.test(sh.pane()), { what: 'the command reading the terminal' });

    sh.key('C-z');
    await waitFor(() => procState(leader) === 'T' && procState(procpin) === 'T', {
      what: 'the job and procpin stopped',
    });
    await waitFor(() => /Stopped/.test(sh.pane()), { what: "bash's Stopped report" });
    assert.notEqual(procStat(procpin).tpgid, leader, 'bash has the terminal back');

    // In the background the command's next read stops it again, and procpin with it.
    sh.run('bg');
    await waitFor(() => /\[1\]\+ .*&/.test(sh.pane()), { what: "bash's bg report" });
    sh.run('jobs -l');
    await waitFor(() => /Stopped \(tty input\)/.test(sh.pane()), { what: 'stopped for terminal input' });
    assert.equal(procState(leader), 'T');

    sh.run('fg');
    await waitFor(() => procStat(leader)?.tpgid === leader, { what: 'the job in the foreground again' });
    sh.run('two');
    await waitFor(() => /got=two/.test(sh.pane()), { what: 'the command reading the terminal again' });

    sh.key('C-c');
    await exitStatusIs(sh, procpin, 130);
    assert.doesNotMatch(sh.pane(), /received SIGINT/, '^C went to the group, not to procpin');
    assert.ok(isGone(leader));
  });
});

test('started in the background, a command that reads the terminal stops the job until fg gives it the terminal [CLI.run.tty]', async (t) => {
  await withShell(t, 'ttin', async ({ sh, dir }) => {
    const leaderFile = join(dir.path, 'leader');
    sh.run(`${procpinCmd} run -- sh -c 'echo $$ > ${leaderFile}; read x; echo "got=$x"; exit 3' &`);
    const leader = await pidFrom(leaderFile);
    const procpin = ppidOf(leader);
    await waitFor(() => procState(leader) === 'T' && procState(procpin) === 'T', {
      what: 'the job stopped for terminal input',
    });
    sh.run('jobs -l');
    await waitFor(() => /Stopped \(tty input\)/.test(sh.pane()), { what: "bash's report" });
    sh.run('fg');
    await waitFor(() => procStat(leader)?.tpgid === leader, { what: 'the command in the foreground' });
    sh.run('hello');
    await exitStatusIs(sh, procpin, 3);
    assert.match(sh.pane(), /got=hello/);
  });
});

test('a job brought to the foreground while running gets the terminal when it first reads it [CLI.run.tty]', async (t) => {
  await withShell(t, 'fg', async ({ sh, dir }) => {
    const leaderFile = join(dir.path, 'leader');
    const go = join(dir.path, 'go');
    sh.run(
      `${procpinCmd} run -- sh -c 'echo $$ > ${leaderFile}; ` +
        `while [ ! -e ${go} ]; do sleep 0.02; done; read x; echo "got=$x"; exit 3' &`,
    );
    const leader = await pidFrom(leaderFile);
    const procpin = ppidOf(leader);
    // bash's fg sends no SIGCONT to a job that runs: only the terminal's foreground changes.
    sh.run('fg');
    await waitFor(() => procStat(procpin)?.tpgid === procpin, { what: "procpin's group in the foreground" });
    writeFileSync(go, '');
    await waitFor(() => procStat(leader)?.tpgid === leader, { what: 'the command given the terminal' });
    sh.run('three');
    await exitStatusIs(sh, procpin, 3);
    assert.match(sh.pane(), /got=three/);
    assert.doesNotMatch(sh.pane(), /Stopped/);
  });
});
