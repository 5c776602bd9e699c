// npm run test:stress: the reliability and stress tests with their long variants
// (PROCPIN_STRESS=1): 100 fork storms of each kind, 5 pid-reuse rounds per path, 10^6 fuzzed
// calls, 20 s sweep races. Files named on the command line replace the default set.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const testDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test');
const named = process.argv.slice(2);
const files = named.length
  ? named
  : readdirSync(testDir)
      .filter((f) => /^(stress|reliab).*\.test\.mjs$/.test(f))
      .sort()
      .map((f) => join(testDir, f));
const r = spawnSync(process.execPath, [join(testDir, 'run.mjs'), ...files], {
  stdio: 'inherit',
  env: { ...process.env, PROCPIN_STRESS: '1' },
});
process.exit(r.status ?? 1);
