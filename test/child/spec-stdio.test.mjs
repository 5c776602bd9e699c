// SPEC Conventions: "Handles that own a descriptor close it exactly once" and Layer 2 "stdin, stdout,
// stderr: Node streams or null", against child_process's behaviour: at the child's exit Node
// destroys the parent's end of stdin, so a finished child with default stdio holds no descriptor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { spawn } from '../../dist/index.js';
import { openFds, waitFor } from '../helpers.mjs';

/** Runs `round` `n` times, each after the last has settled; the descriptors open before. */
async function inTurn(n, round) {
  const before = openFds();
  for (let i = 0; i < n; i++) await round();
  return before;
}

const closed = (s) => (s.closed ? Promise.resolve() : new Promise((r) => s.once('close', r)));

test('child_process (the model): a finished child with default stdio leaves no descriptor [L2.lifetime]', async () => {
  const before = await inTurn(10, async () => {
    const c = cpSpawn('true');
    c.stdout.resume();
    c.stderr.resume();
    await new Promise((r) => c.on('close', r));
  });
  await waitFor(() => openFds().length === before.length, { timeout: 2000, what: 'descriptors back' });
});

test('a reaped child with default stdio holds no descriptor once its output has been read [L2.lifetime]', async () => {
  const before = await inTurn(10, async () => {
    const c = spawn('true');
    c.stdout.resume();
    c.stderr.resume();
    await c.exited;
    c.reap();
    await Promise.all([closed(c.stdout), closed(c.stderr)]);
  });
  const settle = Date.now() + 2000;
  while (openFds().length !== before.length && Date.now() < settle) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(openFds(), before, 'the parent end of each stdin pipe stays open after the reap');
});
