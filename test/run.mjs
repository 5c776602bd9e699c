// Runs the suite with node's test runner: every test/<room>/*.test.mjs (or the files or folders
// named on the command line), one file at a time so that timing-sensitive process tests do not
// compete.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const named = process.argv.slice(2);
/** The test files under a folder, in name order (fixtures are not tests). */
const testsUnder = (dir) =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.mjs') && !f.startsWith('fixtures/') && !f.includes('node_modules'))
    .sort()
    .map((f) => join(dir, f));
const files = named.length ? named.flatMap((n) => (statSync(n).isDirectory() ? testsUnder(n) : [n])) : testsUnder(here);
const concurrency = process.env.PROCPIN_TEST_CONCURRENCY ?? '1';
const r = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
