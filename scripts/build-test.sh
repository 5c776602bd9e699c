#!/usr/bin/env bash
# The test build of the addon (`npm run build:test`, part of `npm run build`): the same sources
# and flags as build/, plus the test-only hooks (PROCPIN_TEST_HOOKS: sweepTestHook, scanTestHook,
# scanGroupSync, closeRangeLoop), into build-test/. The production addon (build/, and the
# prebuilds scripts/prebuild.sh makes) never has them. The tests that inject through a hook load
# this build (test/use-test-build.mjs); PROCPIN_TEST_BINDING names another one (the sanitizer
# build).
set -euo pipefail
cd "$(dirname "$0")/.."
src=build-test/src
rm -rf "$src"
mkdir -p "$src"
cp -r binding.gyp native "$src/"
# binding.gyp resolves node-addon-api with `node -p require(...)`: run from inside the project
# tree so that resolution finds node_modules.
(cd "$src" && PROCPIN_TEST_HOOKS=1 npx --no-install node-gyp rebuild)
echo "build-test: $src/build/Release/procpin.node"
