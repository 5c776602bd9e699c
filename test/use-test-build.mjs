// Imported first by a test file that steers a test-only hook: this process, and every process it
// starts, loads the test build of the addon (the production one has no hooks), so that the hook
// and the code it steers live in the same addon. Its type: use-test-build.d.mts.
import { createRequire } from 'node:module';
import { testBinding } from './helpers.mjs';

process.env.PROCPIN_BINDING = testBinding;

/** The test build's binding, loaded now that PROCPIN_BINDING names it: its hooks included. */
export const hooked = createRequire(import.meta.url)('../dist/binding.js').binding;
