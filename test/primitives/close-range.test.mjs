// SPEC Layer 1 against the real kernel: close_range, run in a child so that closing descriptors
// cannot hurt the test runner. The record is the kernel's own: /proc/self/fd, /proc/self/fdinfo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync } from 'node:fs';
import { root, runNode, testBinding } from '../helpers.mjs';
import { CLOSE_RANGE_PRELUDE, HIGH } from './close-range-helpers.mjs';

const bindingUrl = JSON.stringify(`${root}/dist/binding.js`);
const pkgUrl = JSON.stringify(`${root}/dist/index.js`);
// close_range: run in a child so that closing descriptors cannot hurt the test runner. The child
// inherits six /dev/null descriptors at 100..105 without O_CLOEXEC (node marks inherited
// descriptors close-on-exec only up to the first gap; 3..99 are a gap here), so the CLOEXEC flag
// starts clear. Listings count only those six (readdir's own descriptor comes and goes).
function closeRangeScript(call) {
  return `import * as p from ${pkgUrl}; import { binding } from ${bindingUrl};
    import { readdirSync, readFileSync, readlinkSync } from 'node:fs';${CLOSE_RANGE_PRELUDE}
    const out = { opened, targets: opened.map((x) => readlinkSync('/proc/self/fd/' + x)) };
    ${call}
    console.log(JSON.stringify(out));`;
}

async function runClose(call, env = {}) {
  const devnull = HIGH.map(() => openSync('/dev/null', 'r'));
  /** @type {Array<'ignore' | number>} */
  const extraStdio = [];
  for (let i = 3; i < 100; i++) extraStdio.push('ignore');
  extraStdio.push(...devnull);
  const r = await runNode(closeRangeScript(call), { env, extraStdio });
  for (const fd of devnull) closeSync(fd);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.deepEqual(
    out.targets,
    HIGH.map(() => '/dev/null'),
    'the child got its six descriptors',
  );
  return out;
}

// The loop alone is a test-only export: the test build has it.
for (const [label, fn, env] of [
  ['closeRange', 'p.closeRange', {}],
  [
    'the close loop fallback',
    '((a, b = 0xffffffff, f = 0) => { const r = binding.closeRangeLoop(a, b, f); if (r < 0) { const e = new Error(String(r)); e.code = r === -22 ? "EINVAL" : String(r); e.errno = r; throw e; } })',
    { PROCPIN_BINDING: testBinding },
  ],
]) {
  test(`${label} closes exactly the descriptors in [first, last], checked in /proc/self/fd [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      close(b, d);
      out.after = fds();
      close(f);  // last defaults to ~0U
      out.afterOpenEnded = fds();`,
      env,
    );
    const [a, b, c, d, e, f] = out.opened;
    assert.deepEqual(
      [b, c, d].filter((x) => out.after.includes(x)),
      [],
    );
    assert.ok(out.after.includes(a) && out.after.includes(e) && out.after.includes(f));
    assert.deepEqual(out.afterOpenEnded, [a, e], 'f closed by the open-ended range');
  });

  test(`${label} with CLOSE_RANGE_CLOEXEC sets O_CLOEXEC in fdinfo flags and closes nothing [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      out.before = [a, b, c, d].map(flags);
      close(b, c, C.CLOSE_RANGE_CLOEXEC);
      out.after = [a, b, c, d].map(flags);
      out.open = fds();`,
      env,
    );
    const O_CLOEXEC = 0o2000000;
    assert.deepEqual(
      out.before.map((x) => x & O_CLOEXEC),
      [0, 0, 0, 0],
    );
    assert.deepEqual(
      out.after.map((x) => (x & O_CLOEXEC) !== 0),
      [false, true, true, false],
    );
    assert.ok(
      out.opened.every((x) => out.open.includes(x)),
      'all still open',
    );
  });

  test(`${label} refuses CLOSE_RANGE_UNSHARE on a JavaScript thread, closing nothing [L1.close-range.unshare]`, async () => {
    // A private table would leave libuv's threads acting on the numbers of the shared one
    // (test/primitives/ltp-ports.test.mjs checks the kernel's and the loop's UNSHARE from a C++ helper).
    const out = await runClose(
      `
      const close = ${fn};
      out.refused = errOf(() => close(b, c, C.CLOSE_RANGE_UNSHARE));
      out.open = fds();`,
      env,
    );
    const [, b, c] = out.opened;
    assert.ok(out.open.includes(b) && out.open.includes(c));
    if (label === 'closeRange') assert.equal(out.refused.code, 'ERR_INVALID_ARG_VALUE');
    else assert.deepEqual([out.refused.code, out.refused.errno], ['EINVAL', -22]);
  });

  test(`${label} refuses first > last and unknown flags with EINVAL, closing nothing [L1.close-range.exact]`, async () => {
    const out = await runClose(
      `
      const close = ${fn};
      out.reversed = errOf(() => close(d, b));
      out.unknown = errOf(() => close(b, d, 1));
      out.open = fds();`,
      env,
    );
    assert.equal(out.reversed.code, 'EINVAL');
    assert.equal(out.reversed.errno, -22);
    assert.equal(out.unknown.code, 'EINVAL');
    assert.ok(out.opened.every((x) => out.open.includes(x)));
    if (label === 'closeRange') {
      assert.equal(out.reversed.syscall, 'close_range');
      assert.equal(out.reversed.message, 'EINVAL: invalid argument, close_range');
    }
  });
}
