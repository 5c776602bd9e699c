// SPEC Conventions: "Handles that own a descriptor close it exactly once; close() is idempotent; a
// handle that is garbage-collected does not leak its descriptor. Symbol.dispose works." Checked
// for ProcessHandle (openProcess) in /proc/self/fd.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn as cpSpawn } from 'node:child_process';
import { openProcess } from '../../dist/index.js';
import { fdTarget, openFds, pkg, runNode } from '../helpers.mjs';

/** `promise`, or a rejection naming `what` after `ms`; the timer goes with the first outcome. */
function within(promise, ms, what) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

test('ProcessHandle close() closes its pidfd once, is idempotent, and [Symbol.dispose] closes [C.handle.close-once]', async () => {
  const cp = cpSpawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const before = openFds();
    const h = openProcess(cp.pid);
    const fd = h.pidfd;
    assert.ok(fd >= 0);
    assert.match(fdTarget(fd) ?? '', /pidfd/);
    h.close();
    assert.equal(h.pidfd, -1);
    assert.deepEqual(openFds(), before);
    // A descriptor opened now may take the same number: a second close must not touch it.
    const h2 = openProcess(cp.pid);
    h.close();
    assert.match(fdTarget(h2.pidfd) ?? '', /pidfd/);
    assert.equal(h.kill('SIGTERM'), false, 'a closed handle sends nothing');
    h2[Symbol.dispose]();
    assert.deepEqual(openFds(), before);
  } finally {
    cp.kill('SIGKILL');
  }
});

test('a dropped ProcessHandle that was unref()ed releases its pidfd when it is garbage-collected [C.handle.close-once]', async () => {
  // pid 1 never exits: the only way for these descriptors to go is the collection of their handles.
  const r = await runNode(
    `
    import { readdirSync } from 'node:fs';
    import { openProcess } from ${pkg};
    const count = () => readdirSync('/proc/self/fd').length;
    const before = count();
    (() => { for (let i = 0; i < 50; i++) openProcess(1).unref(); })();
    const opened = count() - before;
    let left = opened;
    for (let i = 0; i < 50 && left > 0; i++) {
      globalThis.gc();
      await new Promise((r) => setTimeout(r, 10));
      left = count() - before;
    }
    console.log(JSON.stringify({ opened, left }));
    `,
    { args: [], env: { NODE_OPTIONS: '--expose-gc' }, timeout: 20000 },
  );
  assert.equal(r.code, 0, r.stderr);
  const { opened, left } = JSON.parse(r.stdout);
  assert.equal(opened, 50);
  assert.equal(left, 0, `${left} of 50 pidfds stay open after their handles became unreachable`);
});

test('a ProcessHandle on a process that exits settles exited and kill() turns false, leaving no descriptor once closed [L2.open-process]', async () => {
  const cp = cpSpawn('sleep', ['30'], { stdio: 'ignore' });
  const before = openFds();
  const h = openProcess(cp.pid);
  assert.equal(h.kill(0), true);
  cp.kill('SIGKILL');
  await within(h.exited, 5000, 'ProcessHandle.exited');
  assert.equal(h.kill('SIGTERM'), false);
  h.close();
  assert.deepEqual(openFds(), before);
});
