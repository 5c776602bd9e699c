// Loads procpin through its package entry (dist/index.js), building the TypeScript layer first
// when dist/ is missing or older than lib/ (a fresh clone after `npm ci` has only the addon).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { benchDir } from './cbin.mjs';

const root = join(benchDir, '..');
// PROCPIN_DIST names another build's entry to benchmark (e.g. a branch's dist/index.js).
const entry = process.env.PROCPIN_DIST || join(root, 'dist', 'index.js');

function stale() {
  if (!existsSync(entry)) return true;
  const built = statSync(entry).mtimeMs;
  return readdirSync(join(root, 'lib')).some((f) => statSync(join(root, 'lib', f)).mtimeMs > built);
}

/** Ensures dist/ is current; returns false (with the reason) when it cannot be built. */
export function ensureBuilt() {
  if (process.env.PROCPIN_DIST || !stale()) return { ok: true };
  const r = spawnSync('npm', ['run', '--silent', 'build:ts'], { cwd: root, encoding: 'utf8' });
  return r.status === 0 ? { ok: true } : { ok: false, why: `build:ts failed: ${r.stderr || r.stdout}` };
}

const require = createRequire(import.meta.url);

/** The package's exports, or null when it does not load. */
export function loadProcpin() {
  try {
    return require(entry);
  } catch {
    return null;
  }
}

/** procpin/child_process (next to the entry), or null when this build has none. */
export function loadAdapter(from = entry) {
  try {
    return require(join(from, '..', 'child_process.js'));
  } catch {
    return null;
  }
}

// PROCPIN_BEFORE names a second build (its dist/index.js) that runs beside this one in the same
// rounds, as extra contenders suffixed " (before)": a change's before -> after in one run.
const before = process.env.PROCPIN_BEFORE || null;

/** The PROCPIN_BEFORE build's exports and drop-in, or null when none is named or it fails to load. */
export function loadBefore() {
  if (!before) return null;
  try {
    return { pp: require(before), adapter: loadAdapter(before) };
  } catch {
    return null;
  }
}

/** What of SPEC the built package offers (each contender checks before it runs). */
export function features(pp) {
  return {
    spawn: typeof pp?.spawn === 'function',
    spawnGroup: typeof pp?.spawnGroup === 'function',
    sweep: typeof pp?.sweep === 'function',
    pidfdSendSignal: typeof pp?.pidfdSendSignal === 'function',
    tryLock: typeof pp?.tryLock === 'function',
  };
}

export const NOT_YET = 'not available yet (procpin does not export it in this build)';
