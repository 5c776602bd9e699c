// An application bundled with esbuild: with procpin kept external it loads procpin (and its
// prebuild) from node_modules at run time; a bundle that inlined procpin cannot find the addon
// beside its JavaScript, and says so and what to do, rather than a bare "not found".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, runCmd, tmpDir } from '../helpers.mjs';
import { emptyProject, npm, packedTarball } from './pack-helpers.mjs';

const esbuild = createRequire(join(root, 'package.json'))('esbuild');
const work = tmpDir('procpin-pack-bundle-');
test.after(() => work[Symbol.dispose]());

const app = `import { spawn } from 'procpin';
import { readFileSync } from 'node:fs';
const child = spawn('sh', ['-c', 'exit 5']);
child.exited.then((info) => {
  child.reap();
  const mapped = readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).map((l) => l.split(/\\s+/).pop());
  console.log(JSON.stringify({ exitCode: info.exitCode, mapped: [...new Set(mapped)] }));
});
`;

const project = (async () => {
  const { tgz } = await packedTarball();
  const dir = emptyProject(work.path, 'app');
  await npm(['install', tgz, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir });
  writeFileSync(join(dir, 'app.mjs'), app);
  return dir;
})();

async function bundle(dir, name, options) {
  const outfile = join(dir, 'out', name);
  await esbuild.build({
    entryPoints: [join(dir, 'app.mjs')],
    bundle: true,
    platform: 'node',
    outfile,
    logLevel: 'silent',
    ...options,
  });
  return outfile;
}

for (const format of ['cjs', 'esm']) {
  test(`an esbuild bundle (${format}) that keeps procpin external loads it and its prebuild from node_modules [P.bundlers]`, async () => {
    const dir = await project;
    const out = await bundle(dir, `external.${format === 'esm' ? 'mjs' : 'cjs'}`, { format, external: ['procpin'] });
    const r = await runCmd(process.execPath, [out], { env: { PROCPIN_BINDING: '' } });
    assert.equal(r.code, 0, r.stderr);
    const { exitCode, mapped } = JSON.parse(r.stdout);
    assert.equal(exitCode, 5);
    assert.deepEqual(mapped, [
      realpathSync(join(dir, 'node_modules', 'procpin', 'prebuilds', `linux-${process.arch}`, 'procpin.glibc.node')),
    ]);
  });

  test(`an esbuild bundle (${format}) that inlined procpin fails with an error that says to keep procpin external [P.bundlers]`, async () => {
    const dir = await project;
    // An ES module bundle of CommonJS code needs a require (esbuild's documented banner).
    const banner =
      format === 'esm'
        ? { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" }
        : {};
    const out = await bundle(dir, `inlined.${format === 'esm' ? 'mjs' : 'cjs'}`, { format, banner });
    // Deployed as bundles are: the one file, no node_modules beside it.
    const deployed = join(work.path, `deployed-${format}`);
    mkdirSync(deployed);
    const file = join(deployed, `app.${format === 'esm' ? 'mjs' : 'cjs'}`);
    writeFileSync(file, (await import('node:fs')).readFileSync(out));
    const r = await runCmd(process.execPath, [file], { env: { PROCPIN_BINDING: '' } });
    assert.notEqual(r.code, 0, r.stdout);
    console.log(`# ${format}: ${r.stderr.split('\n').find((l) => l.startsWith('Error'))}`);
    assert.match(r.stderr, /ERR_PROCPIN_ADDON_NOT_FOUND/);
    assert.match(r.stderr, /bundled/);
    assert.match(r.stderr, /external/);
  });
}
