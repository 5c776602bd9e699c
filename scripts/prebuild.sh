#!/usr/bin/env bash
# Prebuilt binaries for the npm tarball (run by `npm pack` through prepack), one directory per
# architecture in ARCHS:
#   prebuilds/linux-<arch>/procpin.glibc.node   the addon (prebuildify, N-API, stripped)
#   prebuilds/linux-<arch>/<name>               each program of EXECUTABLES
# Every architecture is built, natively or with Debian's cross compiler, and then checked (ELF
# machine, glibc floor); a missing compiler or a failed check fails the script, and so `npm pack`:
# the tarball never ships without one of them. Each architecture builds in its own copy of the
# sources (build-prebuild/linux-<arch>/), so build/ keeps the addon the tests load.
set -euo pipefail
cd "$(dirname "$0")/.."

# node's name for an architecture -> the GNU triple of its toolchain, its Debian package and
# the ELF machine readelf reports.
ARCHS=(x64 arm64)
declare -A TRIPLE=([x64]=x86_64-linux-gnu [arm64]=aarch64-linux-gnu)
declare -A APT=([x64]=g++-x86-64-linux-gnu [arm64]=g++-aarch64-linux-gnu)
declare -A MACHINE=([x64]='Advanced Micro Devices X86-64' [arm64]='AArch64')
# Native programs shipped beside the addon, built for every arch: "name=source.c [more sources] [extra flags]",
# e.g. "procpin-hello=native/hello.c". Linked static-pie: a dynamic executable built against a
# newer glibc needs its __libc_start_main (GLIBC_2.34), above the floor, and a static one needs
# none; procpin-init is also exec'd once per contained group, and not loading libc saves about a
# third of what contain: 'pidns' adds to a spawn (measured). A build from source (node-gyp's
# build/Release/procpin-init) links it static-pie too where the toolchain can
# (native/init/link-flags.sh), else dynamically: a static libc is not on every machine.
EXECUTABLES=(
  # contain: 'pidns' runs its command under this init (lib/contain.ts); binding.gyp's flags.
  "procpin-init=native/init/procpin-init.c native/init/outer.c -D_GNU_SOURCE -Wl,-z,relro,-z,now"
)
EXE_CFLAGS=(-std=gnu11 -O2 -Wall -Wextra -Werror -fstack-protector-strong -D_FORTIFY_SOURCE=2 -static-pie)
GLIBC_FLOOR=2.28

host=$(node -p process.arch)

# The compilers for an arch: this machine's own for its arch, <triple>-gcc/g++ otherwise.
tool() { # arch name
  if [ "$1" = "$host" ] && ! command -v "${TRIPLE[$1]}-$2" >/dev/null 2>&1; then echo "$2"
  else echo "${TRIPLE[$1]}-$2"; fi
}

# First every toolchain, so that a missing one fails before anything is built.
for arch in "${ARCHS[@]}"; do
  for t in gcc g++ ar strip; do
    if ! command -v "$(tool "$arch" "$t")" >/dev/null 2>&1; then
      pkg=${APT[$arch]}; [ "$arch" = "$host" ] && pkg=g++
      echo "prebuild: no $(tool "$arch" "$t") for linux-$arch; install it (Debian: apt-get install $pkg)" >&2
      echo "prebuild: refusing to pack without prebuilds/linux-$arch" >&2
      exit 1
    fi
  done
done

# The newest GLIBC_x.y a binary needs ("" when it needs none: static or no libc).
glibc_needed() {
  { readelf --dyn-syms -W "$1" | grep -o 'GLIBC_[0-9][0-9.]*' || true; } | sed 's/GLIBC_//' | sort -V | tail -1
}

check() { # arch file
  local machine need
  machine=$(readelf -h "$2" | sed -n 's/^ *Machine: *//p')
  if [ "$machine" != "${MACHINE[$1]}" ]; then
    echo "prebuild: $2 is for '$machine', not '${MACHINE[$1]}'" >&2
    exit 1
  fi
  need=$(glibc_needed "$2")
  if [ -n "$need" ] && [ "$(printf '%s\n%s\n' "$need" "$GLIBC_FLOOR" | sort -V | tail -1)" != "$GLIBC_FLOOR" ]; then
    echo "prebuild: $2 needs GLIBC_$need, above the floor GLIBC_$GLIBC_FLOOR" >&2
    exit 1
  fi
  echo "prebuild: $2: $machine, glibc ${need:-none}, $(stat -c %s "$2") bytes"
}

export JOBS=${JOBS:-max}
# The production addon only: the test-only hooks are for build-test/ (scripts/build-test.sh).
unset PROCPIN_TEST_HOOKS
for arch in "${ARCHS[@]}"; do
  out=prebuilds/linux-$arch
  work=build-prebuild/linux-$arch
  rm -rf "$work" "$out"
  mkdir -p "$work" "$out"
  cp -r package.json binding.gyp native "$work/"
  ln -s "$PWD/node_modules" "$work/node_modules"
  (cd "$work" && CC=$(tool "$arch" gcc) CXX=$(tool "$arch" g++) LINK=$(tool "$arch" g++) \
    AR=$(tool "$arch" ar) PREBUILD_STRIP_BIN=$(tool "$arch" strip) \
    npx --no-install prebuildify --napi --strip --tag-libc --arch "$arch")
  cp "$work/prebuilds/linux-$arch/procpin.glibc.node" "$out/"
  check "$arch" "$out/procpin.glibc.node"
  for exe in "${EXECUTABLES[@]}"; do
    name=${exe%%=*}
    read -r -a src_flags <<<"${exe#*=}"
    "$(tool "$arch" gcc)" "${EXE_CFLAGS[@]}" "${src_flags[@]:1}" -o "$out/$name" "${src_flags[0]}"
    "$(tool "$arch" strip)" "$out/$name"
    check "$arch" "$out/$name"
  done
done
