// SPEC Layer 3a: `leader: Child` is "stdio and the leader's own handle", and the group promises that
// every member is cleaned while the leader is reserved. The leader's own reap() and close() are
// callable by the user: they must not defeat the group's cleanup (members left running).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnGroup } from '../../dist/index.js';
import { liveMembers } from '../helpers.mjs';

const survivors = [];
after(() => {
  for (const pid of survivors)
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
});

for (const how of ['reap', 'close']) {
  test(`calling group.leader.${how}() does not let a member outlive the group [L3a.leader.owned]`, async () => {
    const g = spawnGroup('sh', ['-c', 'sleep 30 & exec sleep 0.1'], { stdio: 'ignore', grace: 500 });
    // Keep the loop alive on our own: a closed leader no longer does.
    const keep = setInterval(() => {}, 1000);
    let refused = null;
    try {
      if (how === 'reap') {
        await g.leader.exited;
        try {
          g.leader.reap();
        } catch (err) {
          refused = err;
        }
      } else {
        try {
          g.leader.close();
        } catch (err) {
          refused = err;
        }
      }
      await g.closed;
    } finally {
      clearInterval(keep);
    }
    const left = liveMembers(g.pgid).map((m) => m.pid);
    survivors.push(...left);
    assert.deepEqual(
      left,
      [],
      `a member survived the group after leader.${how}()${refused ? '' : ' (the call was accepted)'}`,
    );
  });
}

test("group.leader is a Child whose reap(), close() and dispose refuse with ERR_PROCPIN_GROUP_LEADER until the group released it, and answer as a reaped Child's afterwards [L3a.leader.owned]", async () => {
  const { Child } = await import('../../dist/index.js');
  const g = spawnGroup('sh', ['-c', 'exit 4'], { stdio: 'ignore', grace: 100 });
  assert.ok(g.leader instanceof Child);
  await g.exited;
  for (const call of [() => g.leader.reap(), () => g.leader.close(), () => g.leader[Symbol.dispose]()]) {
    assert.throws(call, { code: 'ERR_PROCPIN_GROUP_LEADER' });
  }
  assert.equal(g.leader.reaped, false, "still the group's zombie");
  const result = await g.closed;
  assert.equal(result.exitCode, 4);
  assert.equal(g.leader.reaped, true);
  assert.equal(g.leader.reap().exitCode, 4, 'the reap the group did');
  g.leader.close();
  g.leader[Symbol.dispose]();
  assert.equal(g.leader.pidfd, -1);
});
