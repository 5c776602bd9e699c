// sweepCgroups reads only the options it was given: a key polluted onto Object.prototype is not one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { sweepCgroups } from 'procpin';
import { need } from '../helpers.mjs';
import { cgroupBase } from './contain-helpers.mjs';

test("sweepCgroups never reads dryRun polluted onto Object.prototype: a dead supervisor's cgroup is still removed [C.options.once]", async (t) => {
  if (!need(t, process.getuid?.() === 0 && cgroupBase !== null, 'making a cgroup here needs root and cgroup2')) return;
  // A supervisor pid no process can have (above any pid_max): dead, its empty cgroup removable.
  const name = `procpin-2147483646-1-${process.pid}`;
  const dir = join(/** @type {string} */ (cgroupBase), name);
  mkdirSync(dir);
  t.after(() => {
    if (existsSync(dir)) rmdirSync(dir);
  });
  // @ts-expect-error deliberate abuse: a key polluted onto Object.prototype
  Object.prototype.dryRun = true;
  let report;
  try {
    report = await sweepCgroups();
  } finally {
    // @ts-expect-error deliberate abuse, undone
    delete Object.prototype.dryRun;
  }
  assert.ok(
    report.removed.some((e) => e.name === name),
    `removed: ${JSON.stringify(report.removed.map((e) => e.name))}`,
  );
  assert.equal(/** @type {{ dryRun?: boolean }} */ (report).dryRun, undefined);
  assert.equal(existsSync(dir), false);
});
