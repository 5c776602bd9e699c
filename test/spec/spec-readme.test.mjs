// README.md's JavaScript examples must at least parse on the Node versions the package supports
// (engines: node >= 20), as ES modules: a reader copies them as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { root, tmpDirFor } from '../helpers.mjs';

const blocks = [];
{
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');
  let cur = null;
  lines.forEach((line, i) => {
    if (cur === null && line.trim() === '```js') cur = { line: i + 2, text: [] };
    else if (cur !== null && line.trim() === '```') {
      blocks.push({ line: cur.line, text: cur.text.join('\n') });
      cur = null;
    } else if (cur !== null) cur.text.push(line);
  });
}

test('README.md has JavaScript examples to check [C.readme.parses]', () => {
  assert.ok(blocks.length >= 5);
});

for (const b of blocks) {
  test(`the README example at line ${b.line} parses as an ES module on this Node (${process.version}) [C.readme.parses]`, (t) => {
    const dir = tmpDirFor(t, 'procpin-readme-');
    const file = join(dir.path, 'example.mjs');
    writeFileSync(file, b.text);
    const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
    const why = r.stderr.split('\n').find((l) => /Error/.test(l)) ?? r.stderr;
    assert.equal(r.status, 0, `README.md:${b.line}: ${why}`);
  });
}
