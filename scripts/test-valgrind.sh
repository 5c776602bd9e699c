#!/usr/bin/env bash
# Runs the Layer 1 primitives' tests (or the files named) under valgrind memcheck, in process (no
# test-runner subprocess), and fails on any memcheck error in the addon. Node and V8 noise is
# suppressed by scripts/valgrind.supp; every error whose stack reaches procpin.node is reported.
#
# Valgrind 3.19 (Debian 12) does not know pidfd_open, pidfd_send_signal, clone3 or close_range:
# it answers ENOSYS, so under valgrind the addon runs its old-kernel paths (close loop, pid-based
# signals). Tests that assert a pidfd result then fail for that reason alone; this script judges
# memory errors (exit 99 from valgrind), and prints the test summary beside.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d dist ] || npm run build:ts
[ -f build/Release/procpin.node ] || npm run build:native
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(ls test/primitives/primitives*.test.mjs test/primitives/close-range.test.mjs test/primitives/prctl.test.mjs test/primitives/flock*.test.mjs 2>/dev/null)
fi
mkdir -p build/valgrind
status=0
for f in "${files[@]}"; do
  log=build/valgrind/$(basename "$f" .mjs).log
  echo "test:valgrind: $f"
  rc=0
  valgrind --tool=memcheck --error-exitcode=99 --errors-for-leak-kinds=none --leak-check=no \
    --suppressions=scripts/valgrind.supp --gen-suppressions=all --log-file="$log" \
    node --test-reporter=tap "$f" >"$log.tap" 2>&1 || rc=$?
  grep -E '^# (pass|fail)' "$log.tap" | tr '\n' ' '
  errs=$(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$log" | tail -1)
  echo " | $errs"
  if [ "$rc" = 99 ] || ! grep -q 'ERROR SUMMARY: 0 errors' "$log"; then
    echo "test:valgrind: memcheck errors in $f (see $log):" >&2
    grep -B2 -A20 'procpin.node' "$log" | head -60 >&2 || true
    status=1
  fi
done
[ "$status" = 0 ] && echo "test:valgrind: no memcheck error"
exit "$status"
