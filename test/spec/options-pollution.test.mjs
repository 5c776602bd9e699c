// Every option left out is its default, also when Object.prototype carries a key of that name:
// sweep, claim and claimPidfile read only the options they were given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claim, claimPidfile, sweep, sweepCgroups } from 'procpin';

function tmpdir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'procpin-pollution-'));
}

async function polluted(key, value, body) {
  Object.prototype[key] = value;
  try {
    await body();
  } finally {
    delete Object.prototype[key];
  }
}

test('a sweep never reads dryRun or authority polluted onto Object.prototype [C.options.once]', async () => {
  const dir = tmpdir();
  try {
    // Our own pid, unlocked: alive by pid (the default), removable by lock authority.
    const live = `p-${process.pid}`;
    fs.writeFileSync(path.join(dir, live), '');
    await polluted('authority', 'lock', async () => {
      const r = await sweep(dir, { prefix: 'p-' });
      assert.deepEqual(r.removed, []);
      assert.equal(r.kept[0]?.reason, 'alive');
      assert.ok(fs.existsSync(path.join(dir, live)));
    });
    // A dead owner's file: removed by default, kept by a dry run.
    fs.writeFileSync(path.join(dir, 'd-2147483646'), '');
    await polluted('dryRun', true, async () => {
      const r = await sweep(dir, { prefix: 'd-' });
      assert.deepEqual(
        r.removed.map((e) => e.name),
        ['d-2147483646'],
      );
      assert.equal(fs.existsSync(path.join(dir, 'd-2147483646')), false);
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('claim never reads kind, mode or authority polluted onto Object.prototype [C.options.once]', async () => {
  const dir = tmpdir();
  try {
    for (const [key, value] of [
      ['mode', 0o777],
      ['kind', 'file'],
      ['authority', 'lock'],
    ]) {
      await polluted(key, value, async () => {
        for (const c of [await claim(dir, 'c-'), await claim(dir, 'c-', {})]) {
          const st = fs.statSync(c.path);
          assert.ok(st.isDirectory(), `${key}: a directory by default`);
          assert.equal(st.mode & 0o7777, 0o700, `${key}: mode 0700 by default`);
          await c.release();
        }
      });
    }
    // Lock authority polluted: our own unlocked, pid-named entry is alive by pid and kept.
    const mine = path.join(dir, `c-${process.pid}-mine`);
    fs.mkdirSync(mine);
    await polluted('authority', 'lock', async () => {
      const c = await claim(dir, 'c-');
      await c.release();
      assert.ok(fs.existsSync(mine));
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('claimPidfile never reads wait or signal polluted onto Object.prototype [C.options.once]', async () => {
  const dir = tmpdir();
  const file = path.join(dir, 'app.pid');
  try {
    const held = await claimPidfile(file);
    try {
      // wait polluted true: the default (false) still rejects at once with the holder's pid.
      await polluted('wait', true, async () => {
        for (const opts of [undefined, {}]) {
          await assert.rejects(claimPidfile(file, opts), { code: 'ERR_PROCPIN_LOCKED' });
        }
      });
    } finally {
      await held.release();
    }
    // signal polluted with an aborted signal: left out, there is no signal.
    await polluted('signal', AbortSignal.abort(), async () => {
      const pf = await claimPidfile(file);
      assert.equal(fs.readFileSync(file, 'utf8').trim(), String(process.pid));
      await pf.release();
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an unknown or unimplemented option throws ERR_INVALID_ARG_VALUE naming it, in sweep, claim, claimPidfile and sweepCgroups, and nothing is made [C.options.unknown]', async () => {
  const dir = tmpdir();
  try {
    const refused = { code: 'ERR_INVALID_ARG_VALUE', message: /options\.bogus/ };
    // @ts-expect-error an option that does not exist, on purpose: it must be refused
    await assert.rejects(async () => sweep(dir, { prefix: 'p-', bogus: 1 }), refused);
    // @ts-expect-error an option that does not exist, on purpose: it must be refused
    await assert.rejects(async () => claim(dir, 'c-', { bogus: 1 }), refused);
    // @ts-expect-error an option that does not exist, on purpose: it must be refused
    await assert.rejects(async () => claimPidfile(path.join(dir, 'pid'), { bogus: 1 }), refused);
    // @ts-expect-error an option that does not exist, on purpose: it must be refused
    await assert.rejects(async () => sweepCgroups({ bogus: 1 }), refused);
    assert.deepEqual(fs.readdirSync(dir), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
