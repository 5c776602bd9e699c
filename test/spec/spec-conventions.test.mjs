// SPEC Conventions: "Works from import and from require. Types ship." and the shape of the
// procpin:group diagnostics message ({ pid, phase, signal?, ms }) from a real group.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dc from 'node:diagnostics_channel';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import * as esm from 'procpin';
import { root, tmpDirFor } from '../helpers.mjs';

const require = createRequire(import.meta.url);
const cjs = require('procpin');

test('import and require give the same exports, the very same objects (no dual-package copy) [C.module.dual]', () => {
  const names = (o) =>
    Object.keys(o)
      .filter((k) => k !== '__esModule' && k !== 'default')
      .sort();
  assert.deepEqual(names(esm), names(cjs));
  for (const k of names(cjs)) assert.equal(esm[k], cjs[k], `${k} differs between import and require`);
  for (const k of [
    'spawn',
    'spawnGroup',
    'sweep',
    'claim',
    'claimPidfile',
    'openProcess',
    'waitid',
    'flock',
    'tryLock',
  ]) {
    assert.equal(typeof cjs[k], 'function', k);
  }
});

test('the type declarations package.json names exist and declare every runtime export, for import and for require [C.types.ship]', (t) => {
  const pkgJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dot = pkgJson.exports['.'];
  for (const f of [pkgJson.types, dot.import.types, dot.require.types]) {
    assert.ok(existsSync(join(root, f)), `${f} is missing`);
  }
  const names = Object.keys(cjs).filter((k) => k !== '__esModule');
  const dir = tmpDirFor(t, 'procpin-types-');
  mkdirSync(join(dir.path, 'node_modules'));
  symlinkSync(root, join(dir.path, 'node_modules', 'procpin'));
  const body = (from) => `${from}\nconst names: Array<keyof typeof p> = ${JSON.stringify(names)};\nvoid names;\n`;
  writeFileSync(join(dir.path, 'a.mts'), body("import * as p from 'procpin';"));
  writeFileSync(join(dir.path, 'b.cts'), body("import p = require('procpin');"));
  writeFileSync(
    join(dir.path, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'node16',
        moduleResolution: 'node16',
        target: 'es2022',
        noEmit: true,
        types: ['node'],
        typeRoots: [join(root, 'node_modules', '@types')],
      },
      files: ['a.mts', 'b.cts'],
    }),
  );
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir.path], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('a real group publishes { pid, phase, signal?, ms } on procpin:group, ending with released [C.diag.group]', async () => {
  const seen = [];
  const onMessage = (m) => seen.push(m);
  dc.subscribe('procpin:group', onMessage);
  try {
    const g = esm.spawnGroup('sh', ['-c', 'sleep 30 & exit 3'], { stdio: 'ignore', grace: 2000 });
    const r = await g.closed;
    assert.equal(r.exitCode, 3);
    const mine = seen.filter((m) => m.pid === g.pid);
    assert.ok(mine.length >= 3, JSON.stringify(seen));
    let last = 0;
    for (const m of mine) {
      for (const k of Object.keys(m))
        assert.ok(['pid', 'phase', 'signal', 'reason', 'ms'].includes(k), `unexpected key ${k}`);
      assert.equal(typeof m.phase, 'string');
      assert.equal(typeof m.ms, 'number');
      assert.ok(m.ms >= last, 'ms does not go back');
      last = m.ms;
      if ('signal' in m) assert.match(m.signal, /^SIG[A-Z]+$/, 'signals are reported by name');
    }
    assert.equal(mine[0].phase, 'exited');
    assert.equal(mine.at(-1).phase, 'released');
    assert.deepEqual(
      mine
        .filter((m) => m.signal)
        .map((m) => m.signal)
        .at(-1),
      'SIGKILL',
      'the last signal published is the group SIGKILL',
    );
    assert.ok(
      mine.findIndex((m) => m.phase === 'reaped') > mine.findLastIndex((m) => m.phase === 'kill'),
      'reaped after the final kill',
    );
  } finally {
    dc.unsubscribe('procpin:group', onMessage);
  }
});
