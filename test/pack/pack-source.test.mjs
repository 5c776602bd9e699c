// Where no prebuild fits (musl, as on Alpine, or another architecture), a consumer's install
// builds the addon from the tarball's sources: the tarball with its prebuilds removed installs
// with its install script (node-gyp-build, then node-gyp), and the addon it built loads from
// both `import` and `require` and runs a child.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpDir } from '../helpers.mjs';
import { checkLoads, emptyProject, npm, packedTarball, sh } from './pack-helpers.mjs';

const work = tmpDir('procpin-pack-source-');
test.after(() => work[Symbol.dispose]());

test('the tarball without its prebuilds builds the addon from source at install, and that build loads and runs a child [P.install]', async () => {
  const { tgz } = await packedTarball();
  const unpacked = join(work.path, 'unpacked');
  mkdirSync(unpacked);
  await sh('tar', ['xzf', tgz, '-C', unpacked]);
  rmSync(join(unpacked, 'package', 'prebuilds'), { recursive: true });
  const bare = join(work.path, 'procpin-no-prebuilds.tgz');
  await sh('tar', ['czf', bare, '-C', unpacked, 'package']);

  const project = emptyProject(work.path, 'source');
  const started = Date.now();
  await npm(['install', bare, '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'], { cwd: project });
  console.log(`# install with a source build: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const installed = join(project, 'node_modules', 'procpin');
  assert.ok(!existsSync(join(installed, 'prebuilds')));
  const built = join(installed, 'build', 'Release', 'procpin.node');
  assert.ok(existsSync(built), 'node-gyp built the addon at install');

  const r = await checkLoads(project);
  assert.deepEqual(r.mapped, [built]);
  const { stdout } = await sh(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('procpin');
    const c = spawn('sh', ['-c', 'exit 4']); c.exited.then((i) => { c.reap(); console.log(i.exitCode); });`,
    ],
    { cwd: project, env: { ...process.env, PROCPIN_BINDING: '' } },
  );
  assert.equal(stdout.trim(), '4');
});
