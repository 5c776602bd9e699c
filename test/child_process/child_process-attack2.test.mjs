// procpin/child_process as a supervisor imports it: tree-kill's callback gets every error, and
// the module's default import is the namespace that node:child_process's default import is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import cpDefault from 'node:child_process';
import { createRequire } from 'node:module';
import procpinDefault, * as drop from 'procpin/child_process';

test('kill(pid, signal, callback) hands a pid that cannot be one to the callback, as tree-kill does, and signals nothing [L2b.group]', async () => {
  const stranger = cp.spawn('sleep', ['30']);
  await new Promise((resolve) => stranger.once('spawn', resolve));
  try {
    for (const pid of ['1', String(stranger.pid), -1, 0, -stranger.pid, 1.5, NaN, undefined]) {
      /** @type {NodeJS.ErrnoException | null | undefined} */
      let err;
      assert.doesNotThrow(() => {
        assert.equal(
          // @ts-expect-error pids that are not pids, on purpose: each must be refused
          drop.kill(pid, 'SIGKILL', (e) => (err = e)),
          false,
        );
      }, String(pid));
      await new Promise((resolve) => setImmediate(resolve));
      assert.match(err?.code ?? '', /^ERR_(INVALID_ARG_TYPE|OUT_OF_RANGE)$/, String(pid));
    }
    assert.equal(stranger.exitCode, null);
    assert.equal(stranger.signalCode, null);
  } finally {
    stranger.kill('SIGKILL');
  }
});

test("procpin/child_process has a default export holding its functions, as node:child_process's default import has, from import and require [L2b.group]", () => {
  assert.equal(typeof cpDefault.spawn, 'function');
  assert.equal(procpinDefault.spawn, drop.spawn);
  assert.equal(procpinDefault.kill, drop.kill);
  const required = createRequire(import.meta.url)('procpin/child_process');
  assert.equal(required.spawn, drop.spawn);
});
