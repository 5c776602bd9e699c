// Abuse: thousands of junk calls (wrong types, NaN, ±Infinity, -0, BigInt, huge numbers, missing
// arguments, throwing getters and valueOf, Proxies, Symbols) into every Layer 1 export and straight
// into the raw binding, in a child process that must exit 0: never an abort, never a segfault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fixtures, root, testBinding } from '../helpers.mjs';

function runAbuse(env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(fixtures, 'abuse-layer1.mjs')], {
      env: {
        ...process.env,
        PROCPIN_PKG: pathToFileURL(join(root, 'dist', 'index.js')).href,
        PROCPIN_BINDING_MODULE: pathToFileURL(join(root, 'dist', 'binding.js')).href,
        // The raw binding's fuzz reaches closeRangeLoop too, a test-only export.
        PROCPIN_BINDING: testBinding,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('thousands of junk calls into every export and the raw binding never crash the process [C.no-crash]', async () => {
  const r = await runAbuse();
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.stderr}`);
  assert.equal(r.code, 0, r.stderr);
  const { calls, promises } = JSON.parse(r.stdout.trim().split('\n').pop());
  console.log(`# ${calls} calls, ${promises} promises, all settled`);
  assert.ok(calls > 5000, `${calls} calls`);
});

// PROCPIN_STRESS=1: five more fast-check seeds.
if (process.env.PROCPIN_STRESS)
  test('the abuse run also holds under five more fast-check seeds [C.no-crash]', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await runAbuse({ PROCPIN_SEED: String(seed) });
      assert.equal(r.code, 0, `seed ${seed}: ${r.signal} ${r.stderr}`);
    }
  });
