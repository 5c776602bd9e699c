#!/usr/bin/env bash
# Builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/ (the normal
# build/ is left alone) and runs the test suite against it. Every process of the run reports to
# log files; the run fails if any sanitizer report was written, even by a child process whose
# exit status a test did not look at.
#
#   npm run test:asan                 # the whole suite (less the build and benchmark tests)
#   npm run test:asan -- test/x.test.mjs
#
# Node itself is not instrumented, so the ASan runtime must be loaded first: LD_PRELOAD of the
# compiler's libasan. Node (V8, OpenSSL, ICU) keeps allocations alive at exit by design, so leak
# detection is off; everything else (heap overflow, use after free, double free, UB) is on and
# fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
out=$here/build-asan
src=$out/src

rm -rf "$out"
mkdir -p "$src" "$out/logs"
cp -r binding.gyp native "$src/"
# binding.gyp resolves node-addon-api with `node -p require(...)`: run from inside the project
# tree so that resolution finds node_modules.
# With the test-only hooks (PROCPIN_TEST_HOOKS): the tests that steer one run sanitized too.
(cd "$src" && PROCPIN_SANITIZE=1 PROCPIN_TEST_HOOKS=1 npx --no-install node-gyp rebuild >"$out/build.log" 2>&1) || {
  cat "$out/build.log"
  exit 1
}
addon=$src/build/Release/procpin.node
if ! nm -D "$addon" | grep __asan_init >/dev/null; then
  echo "test:asan: $addon is not instrumented" >&2
  exit 1
fi
[ -d dist ] || npm run build:ts

libasan=$(gcc -print-file-name=libasan.so)
libubsan=$(gcc -print-file-name=libubsan.so)
[ -f "$libasan" ] || { echo "test:asan: libasan not found ($libasan)" >&2; exit 1; }

export PROCPIN_BINDING=$addon
export PROCPIN_TEST_BINDING=$addon
export LD_PRELOAD="$libasan${LD_PRELOAD:+:$LD_PRELOAD}"
# detect_leaks=0: node's own allocations at exit; abort_on_error so a report also fails the
#   process that made it; log_path so reports of child processes are kept.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=0:log_path=$out/logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$out/logs/ubsan"
export PROCPIN_SANITIZED=1
echo "test:asan: addon $addon"
echo "test:asan: LD_PRELOAD=$LD_PRELOAD ($libubsan is linked by the addon)"

# Without file names: every test file but those that build or package the addon themselves
# (their compilers and npm would run under the preloaded runtime) or time it (benchmarks).
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(ls test/*/*.test.mjs | grep -Ev '/(pack/|spec/bench)[^/]*\.test\.mjs$')
fi

status=0
node test/run.mjs "${files[@]}" || status=$?

reports=$(find "$out/logs" -type f -size +0 2>/dev/null | sort)
if [ -n "$reports" ]; then
  echo "test:asan: sanitizer reports:" >&2
  for f in $reports; do echo "== $f" >&2; cat "$f" >&2; done
  [ "$status" = 0 ] && status=1
fi
if [ "$status" = 0 ]; then
  echo "test:asan: suite passed, no sanitizer report"
fi
exit "$status"
