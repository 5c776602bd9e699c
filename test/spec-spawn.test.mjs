// SPEC Layer 2, spawn: "`file` resolves through PATH as execvp does" and "Bad arguments are refused
// before any syscall ... as Node's validators do".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from '../dist/index.js';
import { openFds, tmpDir } from './helpers.mjs';

test(
  'an executable script without #! runs through /bin/sh, as execvp and child_process run it',
  { todo: 'spawn reports ENOEXEC (execve); execvp falls back to /bin/sh (lib/child.ts execCandidates / native/spawn_core.cc)' },
  async (t) => {
    const dir = tmpDir('procpin-noshebang-');
    t.after(() => dir[Symbol.dispose]());
    const file = join(dir.path, 'script');
    writeFileSync(file, 'exit 7\n');
    chmodSync(file, 0o755);
    assert.equal(spawnSync(file).status, 7, 'child_process runs it');
    const c = spawn(file, [], { stdio: 'ignore' });
    const info = await c.exited;
    c.reap();
    assert.equal(info.exitCode, 7);
  },
);

test('an env value that cannot become a string is refused before anything starts, not passed as "Symbol(x)"', () => {
  const before = openFds();
  assert.throws(() => spawn('true', [], { env: { A: Symbol('x') }, stdio: 'ignore' }), TypeError);
  assert.deepEqual(openFds(), before);
});
