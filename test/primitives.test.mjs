import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as procpin from '../dist/index.js';

test('pidfdOpen on a pid that names no process throws a Node-shaped ESRCH', () => {
  assert.throws(() => procpin.pidfdOpen(0x3fffff), (err) => {
    assert.equal(err.code, 'ESRCH');
    assert.equal(err.errno, -3);
    assert.equal(err.syscall, 'pidfd_open');
    assert.equal(err.pid, 0x3fffff);
    assert.equal(err.message, 'ESRCH: no such process, pidfd_open');
    return true;
  });
});
