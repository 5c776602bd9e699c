// The addon built the three ways the ecosystem builds addons, each checked in a copy of the
// package (the main build/ that the other tests load is never touched):
//  - cmake-js builds it with the warnings-as-errors flags, it loads, and the Layer 1 test files
//    pass against it (PROCPIN_BINDING);
//  - `npm pack` (prepack: scripts/prebuild.sh + tsc, the tarball pack-helpers.mjs makes once)
//    gives a tarball holding prebuilds/linux-x64/procpin.glibc.node; it installs into an empty
//    project on a machine without a compiler (no build/ appears: the prebuild is what loads,
//    classic-level's PREBUILDS_ONLY idea) and loads from both `import` and `require`;
//  - node-gyp's compile lines carry -Wall -Wextra -Werror; no built binary needs a glibc symbol
//    newer than GLIBC_2.28.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { need, root, tmpDir } from '../helpers.mjs';
import { copyPackage as copyInto, packedTarball, sh } from './pack-helpers.mjs';

const work = tmpDir('procpin-build-');
test.after(() => work[Symbol.dispose]());

const sources = JSON.parse(readFileSync(join(root, 'binding.gyp'), 'utf8').replace(/#.*$/gm, '')).targets.flatMap(
  (t) => t.sources,
);
const copyPackage = (name) => copyInto(join(work.path, name));

/** The glibc-versioned symbols a binary needs: [{ symbol, major, minor }]. */
async function glibcSymbols(file) {
  const { stdout } = await sh('objdump', ['-T', file]);
  return [...stdout.matchAll(/\(GLIBC_(\d+)\.(\d+)\)\s+(\S+)/g)].map((m) => ({
    symbol: m[3],
    major: Number(m[1]),
    minor: Number(m[2]),
  }));
}
const newerThan228 = (syms) =>
  syms
    .filter(({ major, minor }) => major > 2 || (major === 2 && minor > 28))
    .map(({ symbol, major, minor }) => `${symbol}@GLIBC_${major}.${minor}`);

function runTests(files, env) {
  // A test runner inside a test file would otherwise report to ours instead of printing.
  const { NODE_TEST_CONTEXT, ...outer } = process.env;
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [join(root, 'test', 'run.mjs'), ...files], {
      cwd: root,
      env: { ...outer, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (out += d));
    c.on('close', (code) => resolve({ code, out }));
  });
}

// Both builds start at once (they take most of the time), each in its own copy.
const cmakeDir = copyPackage('cmake');
const cmakeBuild = sh(
  'npm',
  ['exec', '--offline', '--', 'cmake-js', 'rebuild', '--out', 'build-cmake', '--CDCMAKE_EXPORT_COMPILE_COMMANDS=ON'],
  { cwd: cmakeDir },
).then(
  () => null,
  (e) => e,
);
const packBuild = packedTarball().then(
  (r) => r,
  (e) => e,
);

test('the cmake-js build compiles every source with -Wall -Wextra -Werror and passes the Layer 1 tests [P.build.flags]', async (t) => {
  const err = await cmakeBuild;
  if (err) need(t, false, `cmake-js build failed (cmake installed?): ${err.stderr || err.message}`);
  if (err) return;
  const node = join(cmakeDir, 'build-cmake', 'Release', 'procpin.node');
  assert.ok(existsSync(node));
  const commands = JSON.parse(readFileSync(join(cmakeDir, 'build-cmake', 'compile_commands.json'), 'utf8'));
  assert.deepEqual(commands.map((c) => c.file.slice(cmakeDir.length + 1)).sort(), [...sources].sort());
  for (const c of commands) {
    // procpin-init is an executable of C, with the same warnings and hardening.
    const own = c.file.includes('/native/init/') ? ['-Wall', '-Wextra', '-Werror', '-fstack-protector-strong'] : null;
    for (const flag of own ?? ['-Wall', '-Wextra', '-Werror', '-fvisibility=hidden', '-fno-exceptions']) {
      assert.ok(c.command.split(' ').includes(flag), `${flag} in ${c.command}`);
    }
  }
  // PROCPIN_BINDING makes the package load exactly this build: check in /proc/self/maps.
  const maps = await sh(
    process.execPath,
    [
      '-e',
      `require(${JSON.stringify(join(root, 'dist', 'index.js'))});
    process.stdout.write(require('fs').readFileSync('/proc/self/maps', 'utf8'))`,
    ],
    { env: { ...process.env, PROCPIN_BINDING: node } },
  );
  const loaded = [
    ...new Set(
      maps.stdout
        .split('\n')
        .filter((l) => l.endsWith('.node'))
        .map((l) => l.split(/\s+/).pop()),
    ),
  ];
  assert.deepEqual(loaded, [node]);
  const r = await runTests(
    [
      'test/primitives/primitives.test.mjs',
      'test/primitives/close-range.test.mjs',
      'test/primitives/prctl.test.mjs',
      'test/primitives/flock.test.mjs',
      'test/primitives/errors.test.mjs',
    ],
    { PROCPIN_BINDING: node },
  );
  assert.equal(r.code, 0, r.out.slice(-4000));
  const passed = Number(r.out.match(/ℹ pass (\d+)/)?.[1]);
  console.log(`# ${passed} Layer 1 tests passed against the cmake-js build`);
  assert.ok(passed > 30);
});

test('node-gyp compile lines carry -Wall -Wextra -Werror, -fstack-protector-strong and -fvisibility=hidden [P.build.flags]', async () => {
  // The Makefile node-gyp generated for prebuildify's linux-x64 build in the pack copy:
  // `make -Bn V=1` prints every compile command it would run.
  const pack = await packBuild;
  assert.ok(pack.tgz, String(pack?.stderr || pack));
  const { stdout } = await sh('make', ['-C', join(pack.dir, 'build-prebuild', 'linux-x64', 'build'), '-Bn', 'V=1']);
  const compiles = stdout
    .split('\n')
    .filter((l) => /^\s*\S*(g\+\+|c\+\+|gcc|cc) -o \S*obj\.target\/procpin(-init)?\/native\//.test(l));
  assert.equal(compiles.length, sources.length, stdout);
  for (const line of compiles) {
    const words = line.split(/\s+/);
    // procpin-init is an executable of C: the same warnings and hardening, no symbol visibility.
    const flags = ['-Wall', '-Wextra', '-Werror', '-fstack-protector-strong'];
    if (!line.includes('procpin-init')) flags.push('-fvisibility=hidden');
    for (const flag of flags) {
      assert.ok(words.includes(flag), `${flag} missing in: ${line}`);
    }
  }
});

test('no build of the addon needs a glibc symbol newer than GLIBC_2.28 (objdump -T) [P.prebuilds]', async () => {
  const pack = await packBuild;
  assert.ok(pack.tgz, String(pack?.stderr || pack));
  const binaries = [
    join(root, 'build', 'Release', 'procpin.node'),
    join(pack.dir, 'prebuilds', 'linux-x64', 'procpin.glibc.node'),
  ];
  if (!(await cmakeBuild)) binaries.push(join(cmakeDir, 'build-cmake', 'Release', 'procpin.node'));
  const offending = {};
  for (const b of binaries) {
    const syms = await glibcSymbols(b);
    assert.ok(syms.length > 0, `${b} has versioned glibc symbols`);
    const newer = newerThan228(syms);
    const label = b.startsWith(pack.dir)
      ? b.slice(pack.dir.length + 1)
      : b.startsWith(work.path)
        ? b.slice(work.path.length + 1)
        : b.slice(root.length + 1);
    if (newer.length) offending[label] = [...new Set(newer)].sort();
  }
  assert.deepEqual(offending, {}, 'symbols above the GLIBC_2.28 floor');
});

test('npm pack gives a tarball with the prebuild; it installs into an empty project with no compiler in reach and loads from import and require [P.install]', async () => {
  const pack = await packBuild;
  assert.ok(pack.tgz, String(pack?.stderr || pack));
  const tgz = pack.tgz;
  const { stdout: listing } = await sh('tar', ['tzf', tgz]);
  const files = listing.split('\n').filter(Boolean);
  for (const f of [
    'package/prebuilds/linux-x64/procpin.glibc.node',
    'package/dist/index.js',
    'package/dist/index.mjs',
    'package/dist/index.d.ts',
    'package/dist/index.d.mts',
    'package/binding.gyp',
    'package/CMakeLists.txt',
    'package/native/core/sys.cc',
    'package/README.md',
    'package/LICENSE',
  ]) {
    assert.ok(files.includes(f), `${f} in the tarball`);
  }
  assert.deepEqual(
    files.filter((f) => /^package\/(build|test|node_modules)\//.test(f)),
    [],
  );

  const project = join(work.path, 'empty');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }));
  // Installed as on a machine without a compiler: PATH holds node, npm and a shell for npm's
  // scripts, and nothing else (no cc, c++, make or python3), so anything but the prebuild would
  // fail to install.
  const bare = join(work.path, 'bare-bin');
  mkdirSync(bare);
  symlinkSync(process.execPath, join(bare, 'node'));
  symlinkSync('/bin/sh', join(bare, 'sh'));
  const npmCli = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  writeFileSync(
    join(bare, 'npm'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(npmCli)} "$@"\n`,
    { mode: 0o755 },
  );
  for (const tool of ['cc', 'gcc', 'g++', 'c++', 'make', 'python3']) {
    const found = await sh('/bin/sh', ['-c', `command -v ${tool} || true`], { env: { PATH: bare } });
    assert.equal(found.stdout.trim(), '', `${tool} is out of reach`);
  }
  // --prefer-offline, not --offline: with an empty npm cache (a fresh machine) the dependencies'
  // metadata comes from the registry.
  await sh(join(bare, 'npm'), ['install', tgz, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd: project,
    env: { ...process.env, PATH: bare, npm_config_nodedir: '' },
  });
  const installed = join(project, 'node_modules', 'procpin');
  assert.ok(!existsSync(join(installed, 'build')), 'nothing was compiled at install: the prebuild serves');
  assert.deepEqual(readdirSync(join(installed, 'prebuilds', 'linux-x64')).sort(), [
    'procpin-init',
    'procpin.glibc.node',
  ]);

  const check = `
    const names = ['constants', 'waitid', 'pidfdOpen', 'pidfdSendSignal', 'setParentDeathSignal',
      'getParentDeathSignal', 'setChildSubreaper', 'isChildSubreaper', 'closeRange', 'flockSync', 'flock', 'tryLock'];
    const missing = names.filter((n) => !(n in pkg));
    if (missing.length) throw new Error('missing ' + missing);
    const fd = pkg.pidfdOpen(process.pid);
    pkg.pidfdSendSignal(fd, 0);
    require('fs').closeSync(fd);
    const mapped = require('fs').readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).map((l) => l.split(/\\s+/).pop());
    console.log(JSON.stringify({ names: Object.keys(pkg).sort(), mapped: [...new Set(mapped)],
      resolved: require('node-gyp-build').resolve(require('path').dirname(require.resolve('procpin/package.json'))) }));`;
  const viaRequire = await sh(process.execPath, ['-e', `const pkg = require('procpin'); ${check}`], {
    cwd: project,
    env: { ...process.env, PROCPIN_BINDING: '' },
  });
  const viaImport = await sh(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import * as ns from 'procpin'; import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/');
     const pkg = ns; if (ns.waitid !== require('procpin').waitid) throw new Error('two copies'); ${check}`,
    ],
    { cwd: project, env: { ...process.env, PROCPIN_BINDING: '' } },
  );
  const a = JSON.parse(viaRequire.stdout);
  const b = JSON.parse(viaImport.stdout);
  const prebuild = join(installed, 'prebuilds', 'linux-x64', 'procpin.glibc.node');
  assert.deepEqual(a.mapped, [prebuild]);
  assert.deepEqual(b.mapped, [prebuild]);
  assert.equal(a.resolved, prebuild);
  // ESM has no `default` unless exported; the named exports are the same set.
  const named = (list) => list.filter((n) => n !== 'default' && n !== '__esModule');
  assert.deepEqual(named(b.names), named(a.names));
});
