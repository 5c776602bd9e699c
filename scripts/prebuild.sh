#!/usr/bin/env bash
# Prebuilt addons for the npm tarball (run by `npm pack` through prepack):
#   prebuilds/linux-x64/procpin.glibc.node    always (this machine's architecture);
#   prebuilds/linux-arm64/procpin.glibc.node  when Debian's cross compiler is installed
#                                             (apt-get install g++-aarch64-linux-gnu).
# The cross build runs in a copy of the sources, so build/ keeps the native addon.
set -euo pipefail
cd "$(dirname "$0")/.."
# procpin-init (contain: 'pidns') goes next to the addon, built with binding.gyp's flags, and
# linked static-pie: it is exec'd once per contained group, and not loading libc saves about a
# third of what 'pidns' adds to a spawn (measured). A build from source links it dynamically
# (a static libc is not on every machine).
build_init() {  # CC ARCH STRIP
  mkdir -p "prebuilds/linux-$2"
  "$1" -O2 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -fstack-protector-strong \
    -static-pie -Wl,-z,relro,-z,now -o "prebuilds/linux-$2/procpin-init" native/init/procpin-init.c
  "$3" "prebuilds/linux-$2/procpin-init"
  echo "prebuilds/linux-$2/procpin-init"
}
npx prebuildify --napi --strip --tag-libc
case "$(uname -m)" in
  x86_64) build_init "${CC:-cc}" x64 strip ;;
  aarch64) build_init "${CC:-cc}" arm64 strip ;;
esac
if command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 && [ "$(uname -m)" != aarch64 ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp -r package.json binding.gyp native "$work/"
  ln -s "$PWD/node_modules" "$work/node_modules"
  (cd "$work" && CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ LINK=aarch64-linux-gnu-g++ \
    AR=aarch64-linux-gnu-ar PREBUILD_STRIP_BIN=aarch64-linux-gnu-strip \
    npx prebuildify --napi --strip --tag-libc --arch arm64)
  mkdir -p prebuilds/linux-arm64
  cp "$work/prebuilds/linux-arm64/procpin.glibc.node" prebuilds/linux-arm64/
  echo "prebuilds/linux-arm64/procpin.glibc.node (cross-built)"
  build_init aarch64-linux-gnu-gcc arm64 aarch64-linux-gnu-strip
else
  echo "no aarch64 cross compiler: prebuilds/linux-arm64 not built"
fi
