// What the npm tarball holds: a prebuild for linux-x64 and one for linux-arm64, each an ELF of
// its machine needing nothing above glibc 2.28; nothing that points at a file it does not ship;
// a size the README states. And `npm pack` refuses to make a tarball without every prebuild.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { root, tmpDir } from '../helpers.mjs';
import { copyPackage, npm, packedTarball, sh } from './pack-helpers.mjs';

const work = tmpDir('procpin-pack-contents-');
test.after(() => work[Symbol.dispose]());

const machines = { 'linux-x64': 'Advanced Micro Devices X86-64', 'linux-arm64': 'AArch64' };

/** The tarball unpacked: { dir, files: [{ path, size }] } (paths under package/). */
async function unpacked() {
  const { tgz } = await packedTarball();
  const dir = join(work.path, 'unpacked');
  mkdirSync(dir, { recursive: true });
  await sh('tar', ['xzf', tgz, '-C', dir]);
  const { stdout } = await sh('tar', ['tzvf', tgz]);
  const files = stdout
    .trim()
    .split('\n')
    .map((l) => {
      const w = l.trim().split(/\s+/);
      return { path: w[5], size: Number(w[2]) };
    });
  return { dir, tgz, files };
}
const contents = unpacked();

/** The newest GLIBC_x.y an ELF file needs, as [major, minor], or null. */
async function glibcFloor(file) {
  const { stdout } = await sh('readelf', ['--dyn-syms', '-W', file]);
  const versions = [...stdout.matchAll(/GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  return versions.sort((a, b) => a[0] - b[0] || a[1] - b[1]).pop() ?? null;
}

test('the tarball holds a prebuild for linux-x64 and linux-arm64, each an ELF of its machine needing at most glibc 2.28 [P.prebuilds]', async () => {
  const { dir, files } = await contents;
  const prebuilds = files.filter((f) => f.path.startsWith('package/prebuilds/'));
  const rows = [];
  for (const f of prebuilds) {
    const file = join(dir, f.path);
    const { stdout } = await sh('readelf', ['-h', file]);
    const machine = stdout.match(/Machine:\s*(.*)/)[1].trim();
    const floor = await glibcFloor(file);
    const atFloor = !floor || floor[0] < 2 || (floor[0] === 2 && floor[1] <= 28);
    rows.push({
      file: f.path.slice('package/'.length),
      machine,
      glibc: floor ? floor.join('.') : 'none',
      atFloor,
      bytes: f.size,
    });
  }
  for (const r of rows) console.log(`# ${r.file}: ${r.machine}, needs glibc ${r.glibc}, ${r.bytes} bytes`);
  const addons = rows.filter((r) => r.file.endsWith('.node'));
  assert.deepEqual(addons.map((r) => r.file).sort(), [
    'prebuilds/linux-arm64/procpin.glibc.node',
    'prebuilds/linux-x64/procpin.glibc.node',
  ]);
  for (const r of rows) {
    assert.equal(r.machine, machines[basename(dirname(r.file))], r.file);
    assert.ok(r.atFloor, `${r.file} needs glibc ${r.glibc}`);
  }
  // Every architecture directory carries the same programs.
  const byArch = (a) =>
    rows
      .filter((r) => r.file.startsWith(`prebuilds/${a}/`))
      .map((r) => basename(r.file))
      .sort();
  assert.deepEqual(byArch('linux-arm64'), byArch('linux-x64'));
});

test('the tarball ships no source map, no test, no build output and nothing outside what a consumer loads or builds from [P.tarball]', async () => {
  const { files } = await contents;
  console.log(`# tarball contents (${files.length} files):`);
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : 1)))
    console.log(`#   ${String(f.size).padStart(7)}  ${f.path.slice('package/'.length)}`);
  assert.deepEqual(
    files.filter((f) => /\.map$/.test(f.path)),
    [],
  );
  for (const f of files) {
    assert.match(
      f.path,
      /^package\/(dist\/[\w/-]+\.(js|mjs|d\.ts|d\.mts)|native\/[\w/-]+\.(cc|h|c)|native\/init\/link-flags\.sh|prebuilds\/linux-(x64|arm64)\/[\w.-]+|bin\/procpin|binding\.gyp|CMakeLists\.txt|package\.json|README\.md|LICENSE)$/,
      f.path,
    );
  }
  // No shipped JavaScript names a file the tarball lacks (a sourceMappingURL, a require of lib/).
  const { dir } = await contents;
  for (const f of files.filter((x) => /\.m?js$/.test(x.path))) {
    const text = readFileSync(join(dir, f.path), 'utf8');
    assert.doesNotMatch(text, /sourceMappingURL|\.\.\/lib\//, f.path);
  }
});

test('the README states the tarball size within a tenth of what npm pack makes [P.tarball]', async () => {
  const { tgz } = await contents;
  const kB = statSync(tgz).size / 1000;
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const m = readme.match(/npm tarball is about (\d+) kB/);
  assert.ok(m, 'README: "The npm tarball is about N kB"');
  console.log(`# tarball ${kB.toFixed(1)} kB, README says about ${m[1]} kB`);
  assert.ok(Math.abs(Number(m[1]) - kB) <= kB / 10, `README says ${m[1]} kB, the tarball is ${kB.toFixed(1)} kB`);
});

test('npm pack fails, and makes no tarball, when the arm64 cross compiler is missing [P.prebuilds]', async () => {
  // PATH: everything on this machine's PATH except the aarch64 toolchain.
  const bin = join(work.path, 'no-cross-bin');
  mkdirSync(bin);
  const seen = new Set();
  for (const d of (process.env.PATH ?? '').split(':')) {
    if (!d || !existsSync(d)) continue;
    for (const name of readdirSync(d)) {
      if (seen.has(name) || name.startsWith('aarch64-linux-gnu-')) continue;
      seen.add(name);
      symlinkSync(join(d, name), join(bin, name));
    }
  }
  const dir = copyPackage(join(work.path, 'no-cross'));
  const err = await npm(['pack'], { cwd: dir, env: { ...process.env, PATH: bin } }).then(
    () => null,
    (e) => e,
  );
  assert.ok(err, 'npm pack succeeded without an arm64 compiler');
  assert.match(
    err.stderr,
    /no aarch64-linux-gnu-gcc for linux-arm64; install it \(Debian: apt-get install g\+\+-aarch64-linux-gnu\)/,
  );
  assert.match(err.stderr, /refusing to pack without prebuilds\/linux-arm64/);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tgz')),
    [],
  );
});
