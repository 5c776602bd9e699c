// However the supervisor ends, its groups die also when procpin is not alone in handling the
// ending signals: a signal-exit style library (which, like procpin, takes the signal over only
// when nobody else listens), or a second installed copy of procpin (a dependency's own nested
// copy, with its own addon). Neither may read the other as the application deciding to go on.
import { test } from 'node:test';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { pkg, root } from '../helpers.mjs';
import { endAndCount, idle, supervisorCode } from './supervisor-helpers.mjs';

// signal-exit's onExit: its handler runs, then the process still dies by the signal.
const withSignalExit = `
  const { onExit } = await import('signal-exit');
  onExit((code, signal) => { process.stderr.write('onExit ' + signal + '\\n'); });`;

for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGTERM', 'SIGINT', 'SIGHUP'])) {
  for (const order of ['before', 'after']) {
    test(`with signal-exit loaded ${order} procpin, ${sig} still kills every group, runs signal-exit's handler and ends the supervisor by ${sig} [L3a.end.signal]`, async (t) => {
      const code =
        order === 'before'
          ? supervisorCode(idle, { before: withSignalExit })
          : supervisorCode(`${withSignalExit} ${idle}`);
      const out = await endAndCount(t, {
        code,
        end: (sup) => sup.kill(sig),
        expect: { code: null, signal: sig },
      });
      assert.match(out, new RegExp(`onExit ${sig}`));
    });
  }
}

// A second copy of the package (its own dist and its own addon file) in the same process.
function secondCopy(t) {
  const dir = join(root, 'test', '.tmp', `copy-${process.pid}-${Date.now()}`);
  mkdirSync(join(dir, 'build', 'Release'), { recursive: true });
  for (const f of ['package.json', 'binding.gyp']) cpSync(join(root, f), join(dir, f));
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  cpSync(join(root, 'build', 'Release', 'procpin.node'), join(dir, 'build', 'Release', 'procpin.node'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return JSON.stringify(join(dir, 'dist', 'index.js'));
}

for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGTERM', 'SIGINT', 'SIGUSR2', 'SIGALRM'])) {
  test(`with two installed copies of procpin, each with a group, ${sig} kills both copies' groups and ends the supervisor by ${sig} [L3a.end.signal]`, async (t) => {
    const code = supervisorCode(idle, { from: [pkg, secondCopy(t)] });
    await endAndCount(t, { code, end: (sup) => sup.kill(sig), expect: { code: null, signal: sig } });
  });
}
