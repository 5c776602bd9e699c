// The layers as the tree shows them: native/core/ is the syscall core, which knows nothing of
// JavaScript (no N-API, no libuv, no glue, no project header outside the core), each of its
// sources with its own header; /proc/PID/stat and getdents64 records are read in one place each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { root } from '../helpers.mjs';

const native = join(root, 'native');
const core = join(native, 'core');
const filesUnder = (dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(cc|h|c)$/.test(f))
    .sort()
    .map((f) => join(dir, f));
/** Every source of the package: native/ and lib/. */
const allSources = () => [
  ...filesUnder(native),
  ...readdirSync(join(root, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.m?ts$/.test(f))
    .map((f) => join(root, 'lib', f)),
];
/** `#include` lines of a file: [{ line, quoted, name }]. */
const includes = (file) =>
  [...readFileSync(file, 'utf8').matchAll(/^\s*#\s*include\s*([<"])([^>"]+)[>"]/gm)].map((m) => ({
    line: m[0].trim(),
    quoted: m[1] === '"',
    name: m[2],
  }));
// Headers of Node, N-API, V8 and libuv, by their names under the include path.
const jsHeaders =
  /^(napi(-inl)?\.h|node_api(_types)?\.h|js_native_api(_types)?\.h|node(_version)?\.h|v8.*\.h|uv\.h|uv\/.*)$/;

test('no file under native/core/ includes N-API, node-addon-api, libuv, the glue or a project header outside native/core/ [A.core.no-js]', () => {
  const bad = [];
  for (const file of filesUnder(core)) {
    const rel = relative(root, file);
    for (const inc of includes(file)) {
      const base = inc.name.split('/').pop();
      if (jsHeaders.test(inc.name) || base === 'glue.h' || base === 'promise_worker.h') {
        bad.push(`${rel}: ${inc.line}`);
        continue;
      }
      if (!inc.quoted) continue;
      const target = resolve(dirname(file), inc.name);
      if (!existsSync(target) || relative(core, target).startsWith('..'))
        bad.push(`${rel}: ${inc.line} (not a core header)`);
    }
  }
  assert.deepEqual(bad, []);
});

test('every source under native/core/ has its own header beside it, the core halves of the scan and the terminal among them [A.core.no-js]', () => {
  const sources = filesUnder(core).filter((f) => f.endsWith('.cc'));
  const names = sources.map((f) => relative(core, f).replace(/\.cc$/, ''));
  for (const n of ['sys', 'spawn', 'sweep', 'scan', 'tty', 'proc', 'dir'])
    assert.ok(names.includes(n), `native/core/${n}.cc`);
  assert.deepEqual(
    names.filter((n) => !existsSync(join(core, `${n}.h`))),
    [],
    'sources without a header',
  );
  // The glue halves keep the N-API side, and nothing of the core's own work.
  for (const glue of ['scan.cc', 'tty.cc']) {
    const text = readFileSync(join(native, glue), 'utf8');
    assert.ok(
      includes(join(native, glue)).some((i) => i.name === `core/${glue.replace('.cc', '.h')}`),
      `${glue} includes its core header`,
    );
    assert.doesNotMatch(text, /SYS_getdents64|tcsetpgrp|tcsetattr|poll\(/, `native/${glue} does only glue`);
  }
});

test('one reader each: getdents64 records are declared once (native/core/dir.h), /proc/PID/stat is opened only by native/core/proc.cc [A.one-reader]', () => {
  const all = filesUnder(native);
  const dirents = all
    .filter((f) => /struct\s+\w*Dirent64\s*\{/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  assert.deepEqual(dirents, ['native/core/dir.h']);
  const getdents = all.filter((f) => /SYS_getdents64/.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(getdents, ['native/core/dir.cc']);
  // A path ending in "stat" built for a pid ("%d/stat", a "stat" leaf, "/stat").
  const statReaders = all.filter((f) => /"(%d)?\/?stat"/.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
  assert.deepEqual(statReaders, ['native/core/proc.cc']);
});

test('no header comment names a file that is not there (spawn_core, sweep_core) [A.core.no-js]', () => {
  const stale = filesUnder(native)
    .filter((f) => /spawn_core|sweep_core/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  assert.deepEqual(stale, []);
});

test('one async-work base: only native/promise_worker.h derives from Napi::AsyncWorker, and every threadpool job derives from PromiseWorker [A.promise-worker]', () => {
  const texts = filesUnder(native).map((f) => [relative(root, f), readFileSync(f, 'utf8')]);
  const bases = texts.filter(([, text]) => /public\s+Napi::AsyncWorker\b/.test(text)).map(([f]) => f);
  assert.deepEqual(bases, ['native/promise_worker.h']);
  const jobs = texts.flatMap(([f, text]) =>
    [...text.matchAll(/class\s+(\w+)\s*(?:final\s*)?:\s*public\s+([\w:<>]+)/g)]
      .filter((m) => /Worker$/.test(m[1]) && m[1] !== 'PromiseWorker')
      .map((m) => `${f} ${m[1]}: ${m[2].replace(/<.*/, '')}`),
  );
  assert.ok(jobs.length >= 3, jobs.join('\n'));
  assert.deepEqual(
    jobs.filter((j) => !j.endsWith(': PromiseWorker')),
    [],
  );
});

test('no source under lib/ or native/ is over 400 lines [A.size]', () => {
  const sources = allSources();
  const over = sources
    .map((f) => ({ f: relative(root, f), n: readFileSync(f, 'utf8').split('\n').length - 1 }))
    .filter(({ n }) => n > 400)
    .map(({ f, n }) => `${f}: ${n} lines`);
  assert.deepEqual(over, []);
  assert.ok(sources.length > 50, `${sources.length} sources read`);
});

test('no backdoor on a public class: Child and ProcessHandle have no setGuard or reapKeepingPidfd, and no source keeps a pidfd across a reap on request [A.no-backdoor]', async () => {
  const { Child, ProcessHandle } = await import(join(root, 'dist', 'index.js'));
  for (const cls of [Child, ProcessHandle]) {
    const names = Object.getOwnPropertyNames(cls.prototype);
    assert.ok(names.includes('kill'), `${cls.name}: ${names.join()}`);
    assert.deepEqual(
      names.filter((n) => n === 'setGuard' || n === 'reapKeepingPidfd'),
      [],
      cls.name,
    );
  }
  const sources = allSources();
  const backdoors = sources
    .filter((f) => /setGuard|reapKeepingPidfd|keepPidfd|keep_pidfd/.test(readFileSync(f, 'utf8')))
    .map((f) => relative(root, f));
  assert.deepEqual(backdoors, []);
});
