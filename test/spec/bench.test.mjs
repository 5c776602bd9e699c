import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { root } from '../helpers.mjs';

test('the quick benchmark run completes and reports rows for every benchmark [P.bench]', () => {
  const r = spawnSync(process.execPath, [join(root, 'bench', 'index.mjs'), '--quick', '--json'], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  const ids = ['spawn', 'exit', 'group', 'sweep', 'overhead', 'soak'];
  for (const id of ids) {
    const rows = report.rows.filter((x) => x.bench === id);
    assert.ok(rows.length > 0, `no rows for ${id}`);
    for (const row of rows) {
      assert.ok(!String(row.status ?? '').startsWith('error'), `${id}: ${row.status}`);
      assert.ok(typeof row.median === 'number' || row.status, `${id}/${row.contender}: neither a figure nor a status`);
    }
  }
  // The floors and child_process always run, whatever procpin offers yet.
  assert.ok(report.rows.some((x) => x.bench === 'spawn' && x.contender === 'C posix_spawn' && x.median > 0));
  assert.ok(report.rows.some((x) => x.bench === 'exit' && x.contender === 'C poll(pidfd)' && x.median > 0));
  assert.ok(report.goals.length > 0);
});
