// The type of test/use-test-build.mjs: the binding of the test build is the production binding
// plus the test-only hooks (lib/binding.ts declares both).
import type { NativeBinding, NativeTestHooks } from '../dist/binding.js';

/** The test build's binding (scripts/build-test.sh), with its hooks. */
export declare const hooked: NativeBinding & NativeTestHooks;
