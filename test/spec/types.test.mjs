// SPEC conventions, "Types ship": the README's examples and a supervisor-style program (ES module
// and CommonJS) compile with tsc --strict and exactOptionalPropertyTypes against the shipped
// declarations: `await using` on a ProcessGroup (asyncDispose returns Promise<void>), stdio
// streams narrowed by the stdio option, NodeJS.Signals, a typed ERR_PROCPIN_LOCKED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtures, root } from '../helpers.mjs';

function readmeBlocks() {
  const md = readFileSync(join(root, 'README.md'), 'utf8');
  return [...md.matchAll(/```(js|cjs)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
}

test('the README examples and a supervisor program type-check with tsc --strict (ESM and CJS) [C.types.ship]', () => {
  const dir = join(root, 'test', '.tmp', `types-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    const blocks = readmeBlocks();
    assert.ok(blocks.length >= 8, 'README has its examples');
    blocks.forEach((b, i) => {
      // A fenced `cjs` block is CommonJS; `js` blocks are ES modules (top-level await allowed).
      writeFileSync(join(dir, `readme-${i}.${b.lang === 'cjs' ? 'cts' : 'mts'}`), `${b.code}\nexport {};\n`);
    });
    // One supervisor text, checked twice: as an ES module (.mts) and as CommonJS (.cts).
    const supervisor = readFileSync(join(fixtures, 'types', 'supervisor.mts'), 'utf8');
    writeFileSync(join(dir, 'supervisor.mts'), supervisor);
    writeFileSync(join(dir, 'supervisor.cts'), supervisor.replace('(ESM)', '(CommonJS)'));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          lib: ['ES2022', 'ESNext.Disposable'],
          types: ['node'],
          typeRoots: [join(root, 'node_modules', '@types')],
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: true,
        },
        include: ['*.mts', '*.cts'],
      }),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const r = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
