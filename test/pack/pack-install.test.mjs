// The tarball installed with install scripts off — `npm install --ignore-scripts`, and pnpm 10,
// which runs no dependency's install script unless allowed — loads its prebuild from both
// `import` and `require`: nothing was compiled, and the mapped addon is the shipped file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { accessSync, constants, existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { tmpDir } from '../helpers.mjs';
import { cache, checkLoads, emptyProject, npm, packedTarball, sh } from './pack-helpers.mjs';

const work = tmpDir('procpin-pack-install-');
test.after(() => work[Symbol.dispose]());

const PNPM = '10.34.8';

/** pnpm from the npm registry, installed once under test/.tmp: the path of its bin. */
async function pnpm() {
  const prefix = join(cache, `pnpm-${PNPM}`);
  const bin = join(prefix, 'bin', 'pnpm');
  if (!existsSync(bin)) {
    await npm(['install', '--global', '--prefix', prefix, `pnpm@${PNPM}`, '--no-audit', '--no-fund']);
  }
  return bin;
}

function assertPrebuildLoaded(r, installed) {
  const prebuild = realpathSync(join(installed, 'prebuilds', `linux-${process.arch}`, 'procpin.glibc.node'));
  // contain: 'pidns' execs the shipped procpin-init: it kept its executable bit.
  accessSync(join(installed, 'prebuilds', `linux-${process.arch}`, 'procpin-init'), constants.X_OK);
  assert.deepEqual(r.mapped, [prebuild]);
  assert.ok(r.names.includes('spawnGroup') && r.names.includes('claim'), r.names.join(' '));
  const named = (l) => l.filter((n) => n !== '__esModule');
  assert.deepEqual(named(r.importNames), named(r.names));
}

test('npm install --ignore-scripts of the tarball loads the prebuild from import and require, compiling nothing [P.install]', async () => {
  const { tgz } = await packedTarball();
  const project = emptyProject(work.path, 'npm-no-scripts');
  await npm(['install', tgz, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: project });
  const installed = join(project, 'node_modules', 'procpin');
  assert.ok(!existsSync(join(installed, 'build')), 'nothing was compiled');
  assert.deepEqual(readdirSync(join(installed, 'prebuilds')).sort(), ['linux-arm64', 'linux-x64']);
  const r = await checkLoads(project);
  assertPrebuildLoaded(r, installed);
  console.log(`# npm --ignore-scripts: loaded ${r.mapped[0].slice(project.length + 1)}`);
});

test('pnpm 10 installs the tarball without running its install script, and the prebuild loads from import and require [P.install]', async () => {
  const { tgz } = await packedTarball();
  const bin = await pnpm();
  const { stdout: version } = await sh(process.execPath, [bin, '--version']);
  assert.equal(version.trim(), PNPM);
  const project = emptyProject(work.path, 'pnpm');
  const store = join(work.path, 'pnpm-store');
  const { stdout, stderr } = await sh(
    process.execPath,
    [bin, 'add', tgz, '--store-dir', store, '--config.cache-dir=' + join(work.path, 'pnpm-cache')],
    { cwd: project },
  );
  console.log(
    `# pnpm ${PNPM} add: ${(stdout + stderr)
      .replace(/[│╭╮╰╯─]/g, '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' ')}`,
  );
  // pnpm 10 tells which dependencies' build scripts it did not run: procpin's is one.
  assert.match(stdout + stderr, /Ignored build scripts: .*procpin/s);
  const installed = realpathSync(join(project, 'node_modules', 'procpin'));
  assert.ok(installed.includes(`${join('node_modules', '.pnpm')}`), installed);
  assert.ok(!existsSync(join(installed, 'build')), 'nothing was compiled');
  const r = await checkLoads(project);
  assertPrebuildLoaded(r, installed);
  console.log(`# pnpm: loaded ${r.mapped[0].slice(project.length + 1)}`);
});
