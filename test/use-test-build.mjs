// Imported first by a test file that steers a test-only hook: this process, and every process it
// starts, loads the test build of the addon (the production one has no hooks), so that the hook
// and the code it steers live in the same addon.
import { testBinding } from './helpers.mjs';

process.env.PROCPIN_BINDING = testBinding;
