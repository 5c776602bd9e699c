// The npm tarball, made once for every test file that installs it: `npm pack` (prepack: both
// prebuilds, checked, then tsc) in a copy of the package sources under test/.tmp/, keyed by a
// hash of those sources, so the test files that share it pack once per change. Also an empty
// project to install it into, and the npm that the running node ships.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { root } from '../helpers.mjs';

const run = promisify(execFile);

/** What `npm pack` reads from the package: every file of these goes into the hash. */
export const packageFiles = [
  'package.json',
  'package-lock.json',
  'binding.gyp',
  'CMakeLists.txt',
  'tsconfig.json',
  'README.md',
  'LICENSE',
  'native',
  'lib',
  'bin',
  'scripts',
];

export const cache = join(root, 'test', '.tmp');

/** The npm CLI of the node running the tests (not whatever `npm` is first on PATH). */
export const npmCli = join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');

export function sh(cmd, args, opts = {}) {
  return run(cmd, args, { maxBuffer: 64 << 20, timeout: 600000, ...opts });
}

export function npm(args, opts = {}) {
  return sh(process.execPath, [npmCli, ...args], opts);
}

function walk(p, out) {
  if (statSync(p).isDirectory()) for (const f of readdirSync(p).sort()) walk(join(p, f), out);
  else out.push(p);
  return out;
}

function sourcesHash() {
  const h = createHash('sha256');
  for (const f of packageFiles) {
    if (!existsSync(join(root, f))) continue;
    for (const file of walk(join(root, f), []))
      h.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return h.digest('hex').slice(0, 16);
}

/** A copy of the package sources in `dir`, sharing node_modules. */
export function copyPackage(dir) {
  mkdirSync(dir, { recursive: true });
  for (const f of packageFiles) {
    if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f), { recursive: true });
  }
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

let packing;
/**
 * The packed tarball: { tgz, dir } (dir is the copy it was packed in, with its build-prebuild/).
 * Rejects with npm's output when the pack fails.
 */
export function packedTarball() {
  packing ??= (async () => {
    mkdirSync(cache, { recursive: true });
    const dir = join(cache, `pack-${sourcesHash()}`);
    const done = join(dir, 'tarball');
    if (existsSync(done)) return { tgz: join(dir, readFileSync(done, 'utf8')), dir };
    // Older packs, and this one if a run stopped half way, go (node-gyp's Makefiles hold the
    // copy's path, so it is packed where it stays; `tarball`, written last, marks it done).
    for (const old of readdirSync(cache).filter((f) => f.startsWith('pack-')))
      rmSync(join(cache, old), { recursive: true, force: true });
    copyPackage(dir);
    const { stdout } = await npm(['pack', '--silent'], { cwd: dir });
    const name = stdout.trim().split('\n').pop();
    writeFileSync(done, name);
    return { tgz: join(dir, name), dir };
  })();
  return packing;
}

/** An empty project directory (a package.json and nothing else) under `parent`. */
export function emptyProject(parent, name) {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }));
  return dir;
}

/**
 * A script, run by node in `project` (argument 1: the installed package's root), that loads
 * procpin from both `require` and `import` and prints what got mapped: { names, mapped, resolved }.
 */
export const loadCheck = `
  const { createRequire } = await import('node:module');
  const fs = await import('node:fs');
  const require = createRequire(process.cwd() + '/');
  const viaRequire = require('procpin');
  const viaImport = await import('procpin');
  if (viaImport.waitid !== viaRequire.waitid) throw new Error('two copies of procpin');
  const fd = viaImport.pidfdOpen(process.pid);
  viaImport.pidfdSendSignal(fd, 0);
  fs.closeSync(fd);
  const mapped = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).map((l) => l.split(/\\s+/).pop());
  console.log(JSON.stringify({
    names: Object.keys(viaRequire).sort(),
    importNames: Object.keys(viaImport).filter((n) => n !== 'default').sort(),
    mapped: [...new Set(mapped)],
  }));`;

/** Runs loadCheck in `project` with `node` (default: this one); resolves with its JSON. */
export async function checkLoads(project, { node = [process.execPath], env = {} } = {}) {
  const { stdout } = await sh(node[0], [...node.slice(1), '--input-type=module', '-e', loadCheck], {
    cwd: project,
    env: { ...process.env, PROCPIN_BINDING: '', ...env },
  });
  return JSON.parse(stdout.trim().split('\n').pop());
}
