// Runs the suite with node's test runner: every test/*.test.mjs (or the files named on the
// command line), one file at a time so that timing-sensitive process tests do not compete.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const named = process.argv.slice(2);
const files = named.length
  ? named
  : readdirSync(here)
      .filter((f) => f.endsWith('.test.mjs'))
      .sort()
      .map((f) => join(here, f));
const concurrency = process.env.PROCPIN_TEST_CONCURRENCY ?? '1';
const r = spawnSync(
  process.execPath,
  ['--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
