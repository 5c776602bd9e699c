// procpin/child_process side by side with child_process where a user or an adversary would
// find a difference: options that come from Object.prototype, the state a failed start shows
// before its 'error', and tree-kill's own call shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cp from 'node:child_process';
import * as procpin from 'procpin';
import { isGone, waitFor } from '../helpers.mjs';
import * as drop from 'procpin/child_process';
const { spawn } = drop;
/** @typedef {(...args: any[]) => any} Spawner either spawn, called with the same arguments */
// kill, called with wrong arguments too (a pid as a string, a signal that does not exist).
/** @type {(...args: any[]) => boolean} */
const kill = (...a) => /** @type {Function} */ (drop.kill)(...a);

const closed = (c) => new Promise((resolve) => c.once('close', (...a) => resolve(a)));

test('an option polluted onto Object.prototype is never read, also when options are left out [C.options.once]', async () => {
  const polluted = { stdio: 'ignore', contain: 'pidns', processGroup: 'inherit', shell: true };
  for (const [key, value] of Object.entries(polluted)) {
    Object.prototype[key] = value;
    try {
      const node = cp.spawn('true');
      const c = spawn('true');
      const leader = procpin.spawn('true');
      const group = procpin.spawnGroup('true');
      assert.equal(c.stdin !== null, node.stdin !== null, `${key}: procpin/child_process`);
      assert.notEqual(leader.stdin, null, `${key}: spawn`);
      assert.notEqual(group.leader.stdin, null, `${key}: spawnGroup`);
      assert.equal(group.containment, 'group', `${key}: spawnGroup`);
      await Promise.all([closed(node), closed(c), leader.exited, group.closed]);
      leader.reap();
    } finally {
      delete Object.prototype[key];
    }
  }
});

test("a failed start's exitCode is null until its 'error', as child_process has it [L2b.start-error]", async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const c = impl('procpin-no-such-command-xyz');
    assert.equal(c.exitCode, null, impl === spawn ? 'procpin' : 'child_process');
    const seen = new Promise((resolve) => c.once('error', () => resolve(c.exitCode)));
    assert.equal(await seen, -2);
    await closed(c);
  }
});

test("kill(pid, signal, callback) takes tree-kill's arguments and signals that child's whole group [L2b.group]", async () => {
  // The leader traps TERM and waits; a background member would outlive a kill of the pid alone.
  const c = spawn('sh', ['-c', 'sleep 30 & echo $!; trap "exit 7" TERM; while :; do sleep 0.05; done']);
  const member = Number(await new Promise((resolve) => c.stdout.once('data', (d) => resolve(d))));
  const done = closed(c);
  const err = await new Promise((resolve) => kill(c.pid, 'SIGTERM', resolve));
  assert.equal(err, undefined);
  assert.deepEqual(await done, [7, null]);
  assert.equal(c.killed, true);
  // Dead by the group's SIGKILL; a zombie until its new parent reaps it, never still running.
  await waitFor(() => isGone(member), { what: 'the background member gone' });
  // tree-kill's (pid, callback) and (pid) forms; once the group is gone nothing is sent.
  assert.equal(kill(c.pid), false);
  assert.equal(await new Promise((resolve) => kill(c.pid, resolve)), undefined);
});

test('kill(pid) never signals a process this module did not start, and refuses what cannot be a pid or a signal [L2b.group]', async () => {
  const stranger = cp.spawn('sleep', ['30']);
  await new Promise((resolve) => stranger.once('spawn', resolve));
  try {
    assert.equal(kill(stranger.pid, 'SIGKILL'), false);
    assert.equal(stranger.exitCode, null);
    assert.equal(stranger.signalCode, null);
    assert.equal(stranger.kill(0), true);
  } finally {
    stranger.kill('SIGKILL');
  }
  for (const pid of ['1', -1, 0, 1.5, NaN]) {
    assert.throws(() => kill(pid), { code: /^ERR_(INVALID_ARG_TYPE|OUT_OF_RANGE)$/ }, String(pid));
  }
  const c = spawn('sleep', ['30']);
  assert.throws(() => kill(c.pid, 'SIGNOPE'), { code: 'ERR_UNKNOWN_SIGNAL' });
  const err = await new Promise((resolve) => kill(c.pid, 'SIGNOPE', resolve));
  assert.equal(err.code, 'ERR_UNKNOWN_SIGNAL');
  assert.equal(c.killed, false);
  c.kill('SIGKILL');
  await closed(c);
});

test("kill() and killSignal take a signal name in any case, and anything else that is not a signal is ERR_UNKNOWN_SIGNAL, as child_process's kill does [L2b.group]", async () => {
  for (const impl of /** @type {Spawner[]} */ ([cp.spawn, spawn])) {
    const who = impl === spawn ? 'procpin' : 'child_process';
    const c = impl('sleep', ['30']);
    const done = closed(c);
    for (const bad of [null, {}, true, 'sigNOPE']) {
      assert.throws(() => c.kill(bad), { code: 'ERR_UNKNOWN_SIGNAL' }, `${who} ${String(bad)}`);
    }
    assert.equal(c.kill('sigterm'), true, who);
    assert.deepEqual(await done, [null, 'SIGTERM'], who);
    const t = impl('sleep', ['30'], { timeout: 20, killSignal: 'sigkill' });
    assert.deepEqual(await closed(t), [null, 'SIGKILL'], who);
  }
});
