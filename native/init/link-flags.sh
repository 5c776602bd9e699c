#!/bin/sh
# The link flags of procpin-init for a build from source (binding.gyp, CMakeLists.txt): -static-pie
# where this toolchain links and runs a static-pie C program (a static libc is installed), and
# nothing otherwise (a dynamic executable, which works the same). Not loading libc at each exec
# saves a part of what contain: 'pidns' adds to a spawn; the prebuilt procpin-init is static-pie.
cc=${CC:-cc}
dir=$(mktemp -d 2>/dev/null) || exit 0
trap 'rm -rf "$dir"' EXIT
printf 'int main(void) { return 0; }\n' >"$dir/t.c"
if "$cc" -fPIE -static-pie -o "$dir/t" "$dir/t.c" >/dev/null 2>&1 && "$dir/t" >/dev/null 2>&1; then
  echo -static-pie
fi
