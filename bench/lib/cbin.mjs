// Compiles bench/c/*.c with the system compiler into bench/.bin/ (rebuilt when the source is
// newer than the binary), and bench/addon/*.c into bench-only addons (bench/.bin/NAME.node)
// against the headers of the Node that runs the bench.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const srcDir = join(benchDir, 'c');
const binDir = join(benchDir, '.bin');

/** Builds every C program and returns `{ name: path }`. */
export function buildC() {
  mkdirSync(binDir, { recursive: true });
  const cc = process.env.CC || 'cc';
  const bins = {};
  for (const f of readdirSync(srcDir).filter((x) => x.endsWith('.c'))) {
    const name = f.slice(0, -2);
    const src = join(srcDir, f);
    const bin = join(binDir, name);
    if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
      const r = spawnSync(cc, ['-O2', '-Wall', '-Wextra', '-o', bin, src], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${cc} ${f} failed:\n${r.stderr || r.error}`);
    }
    bins[name] = bin;
  }
  const include = join(dirname(dirname(process.execPath)), 'include', 'node');
  const addonDir = join(benchDir, 'addon');
  if (existsSync(join(include, 'node_api.h')) && existsSync(addonDir)) {
    for (const f of readdirSync(addonDir).filter((x) => x.endsWith('.c'))) {
      const name = f.slice(0, -2);
      const src = join(addonDir, f);
      const bin = join(binDir, `${name}.node`);
      if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
        const args = ['-O2', '-Wall', '-Wextra', '-shared', '-fPIC', `-DNODE_GYP_MODULE_NAME=${name}`];
        const r = spawnSync(cc, [...args, `-I${include}`, '-o', bin, src], { encoding: 'utf8' });
        if (r.status !== 0) throw new Error(`${cc} ${f} failed:\n${r.stderr || r.error}`);
      }
      bins[`${name}.node`] = bin;
    }
  }
  return bins;
}
