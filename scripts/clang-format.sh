#!/usr/bin/env bash
# clang-format over native/ with the committed .clang-format.
#   scripts/clang-format.sh check   reports every line that differs and fails (as --dry-run -Werror)
#   scripts/clang-format.sh fix     rewrites the files in place
# CLANG_FORMAT names another binary (clang-format-19, ...); Debian's clang-format 14, 16 and 19
# format this tree alike.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${CLANG_FORMAT:-clang-format}
if ! command -v "$bin" >/dev/null; then
  echo "clang-format: '$bin' not found (apt-get install clang-format)" >&2
  exit 2
fi
mapfile -d '' files < <(find native -type f \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -print0 | sort -z)
case "${1:-check}" in
  check) "$bin" --dry-run -Werror "${files[@]}" ;;
  fix) "$bin" -i "${files[@]}" ;;
  *) echo "usage: $0 check|fix" >&2; exit 2 ;;
esac
