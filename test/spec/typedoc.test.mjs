// SPEC Conventions, "Types ship": the API reference builds from the public declarations with no
// warning at all (typedoc --treatWarningsAsErrors): every {@link} resolves, every exported type a
// signature names is documented. Nothing is written: --emit none validates only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from '../helpers.mjs';

const typedocBin = join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');

/** Runs typedoc in `cwd` (which holds its typedoc.json) as a warning-is-an-error check. */
function typedoc(cwd) {
  const r = spawnSync(process.execPath, [typedocBin, '--treatWarningsAsErrors', '--emit', 'none'], {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, error: r.error };
}

test('the API reference builds from lib/ with no typedoc warning [C.types.ship]', () => {
  const r = typedoc(root);
  assert.equal(r.error, undefined);
  assert.doesNotMatch(r.out, /\[warning\]|\[error\]/, r.out);
  assert.equal(r.status, 0, r.out);
});

test('the typedoc check fails on a link that does not resolve (a warning is an error) [C.types.ship]', () => {
  const dir = join(root, 'test', '.tmp', `typedoc-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(dir, 'entry.ts'), '/** Returns one, as {@link NoSuchThing} says. */\nexport const one = 1;\n');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, types: [] }, files: ['entry.ts'] }),
    );
    writeFileSync(
      join(dir, 'typedoc.json'),
      JSON.stringify({
        entryPoints: ['entry.ts'],
        readme: 'none',
        disableSources: true,
        validation: { invalidLink: true },
      }),
    );
    const r = typedoc(dir);
    assert.match(r.out, /NoSuchThing/, r.out);
    assert.notEqual(r.status, 0, r.out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
