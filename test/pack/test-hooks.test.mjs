// The test-only hooks (native code a test steers: sweepTestHook, scanTestHook, scanGroupSync,
// closeRangeLoop) are compiled into the test build alone (PROCPIN_TEST_HOOKS,
// scripts/build-test.sh): the addon that `require('procpin')` loads has none of them, nor has
// either prebuild in the packed tarball, while the test build has them all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root, testBinding } from '../helpers.mjs';
import { packedTarball } from './pack-helpers.mjs';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const HOOKS = ['sweepTestHook', 'scanTestHook', 'scanGroupSync', 'closeRangeLoop'];
/** The hook names that appear anywhere in a binary's bytes (an export's name is a string in it). */
const namesIn = (file) => {
  const bytes = readFileSync(file);
  return HOOKS.filter((h) => bytes.includes(h));
};

test('the addon require("procpin") loads exports no test hook and holds none of their names; the test build exports them all [A.test-hooks]', async () => {
  const { stdout } = await run(
    process.execPath,
    [
      '-e',
      `require('procpin');
    const fs = require('fs');
    const mapped = [...new Set(fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).map((l) => l.split(/\\s+/).pop()))];
    console.log(JSON.stringify({ mapped, names: Object.keys(require(mapped[0])) }));`,
    ],
    { cwd: root, env: { ...process.env, PROCPIN_BINDING: '' } },
  );
  const { mapped, names } = JSON.parse(stdout);
  const production = join(root, 'build', 'Release', 'procpin.node');
  assert.deepEqual(mapped, [production]);
  assert.ok(names.includes('sweepDirectory') && names.includes('scanGroup'), names.join());
  assert.deepEqual(
    HOOKS.filter((h) => names.includes(h)),
    [],
    'hooks exported by the production addon',
  );
  assert.deepEqual(namesIn(production), [], 'hook names in the production binary');
  const hooked = Object.keys(require(testBinding));
  assert.deepEqual(
    HOOKS.filter((h) => !hooked.includes(h)),
    [],
    `hooks missing from the test build ${testBinding}`,
  );
});

test('neither prebuild in the packed tarball holds a test hook (linux-x64 loaded and listed, linux-arm64 by its bytes) [A.test-hooks]', async () => {
  const pack = await packedTarball();
  const prebuilds = join(pack.dir, 'prebuilds');
  const arches = readdirSync(prebuilds).sort();
  assert.deepEqual(arches, ['linux-arm64', 'linux-x64']);
  for (const arch of arches) {
    assert.deepEqual(namesIn(join(prebuilds, arch, 'procpin.glibc.node')), [], `hook names in the ${arch} prebuild`);
  }
  const { stdout: listing } = await run('tar', ['tzf', pack.tgz]);
  assert.ok(listing.split('\n').includes(`package/prebuilds/${`linux-${process.arch}`}/procpin.glibc.node`));
  const names = Object.keys(require(join(prebuilds, `linux-${process.arch}`, 'procpin.glibc.node')));
  assert.ok(names.includes('sweepDirectory'), names.join());
  assert.deepEqual(
    HOOKS.filter((h) => names.includes(h)),
    [],
  );
});
