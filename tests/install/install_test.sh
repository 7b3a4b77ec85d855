#!/usr/bin/env bash
# install_test.sh BUILD_DIR EXAMPLE_DIR GENERATOR CXX: installs
# BUILD_DIR into a temporary prefix, then configures, builds and runs the
# consumer project EXAMPLE_DIR against that prefix in a temporary build
# directory, with the generator and compiler of BUILD_DIR. Writes nothing
# outside the temporary directory, which it removes.
set -euo pipefail

build_dir="$1" example_dir="$2" generator="$3" cxx="$4"

work="$(mktemp -d -t hostir-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; exit 1; }

# Only the public headers, the library, the binary and the package.
for f in include/hostir/hostir.h include/hostir/mpi.h lib/cmake/hostir/hostirConfig.cmake \
  lib/cmake/hostir/hostirConfigVersion.cmake bin/hostir; do
  [[ -e "$prefix/$f" ]] || { echo "error: $f was not installed" >&2; exit 1; }
done
ls "$prefix"/lib/libhostir.so* >/dev/null
extra="$(find "$prefix/include" -type f ! -path "$prefix/include/hostir/*.h")"
[[ -z "$extra" ]] || { echo "error: unexpected headers installed: $extra" >&2; exit 1; }
"$prefix/bin/hostir" --help >/dev/null

# The consumer finds the package through CMAKE_PREFIX_PATH only; no build
# type, so its one file compiles quickly.
cmake -S "$example_dir" -B "$work/build" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build"
"$work/build/hostir_example"
