#!/usr/bin/env bash
# install_test.sh CASE BUILD_DIR SOURCE_DIR GENERATOR CXX [MPIEXEC]: installs
# BUILD_DIR into a temporary prefix and tests it as a consumer would, in a
# temporary build directory with the generator and compiler of BUILD_DIR.
# Writes nothing outside the temporary directory, which it removes. CASE:
#   core          examples/cpp, on the core package alone: links and loads
#                 no MPI and no CUDA library;
#   mpi           examples/cpp_mpi with COMPONENTS mpi, run under MPIEXEC
#                 on 2 ranks;
#   without-cuda  the core library, the binary and examples/cpp with the
#                 CUDA libraries out of reach (ld.so --inhibit-cache: only
#                 the system's own folders): they load and run on the CPU,
#                 and asking for CUDA says why it cannot be had.
set -euo pipefail

case_name="$1" build_dir="$2" source_dir="$3" generator="$4" cxx="$5" mpiexec="${6:-}"

work="$(mktemp -d -t hostir-install.XXXXXX)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
lib="$prefix/lib"

fail() { echo "error: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }

# Only the public headers, the libraries, the binary and the package.
for f in include/hostir/hostir.h include/hostir/mpi.h lib/cmake/hostir/hostirConfig.cmake \
  lib/cmake/hostir/hostirConfigVersion.cmake lib/cmake/hostir/hostirTargets.cmake \
  lib/cmake/hostir/hostirMpiTargets.cmake bin/hostir; do
  [[ -e "$prefix/$f" ]] || fail "$f was not installed"
done
ls "$lib"/libhostir.so* "$lib"/libhostir_mpi.so* >/dev/null
extra="$(find "$prefix/include" -type f ! -path "$prefix/include/hostir/*.h")"
[[ -z "$extra" ]] || fail "unexpected headers installed: $extra"

# Fails when `ldd FILE` names a library matching the pattern PATTERN.
no_library() {
  local file="$1" pattern="$2" found
  found="$(ldd "$file" | grep -E "$pattern" || true)"
  [[ -z "$found" ]] || fail "$(basename "$file") depends on: $found"
}
cuda_libraries='lib(cuda|cudart|cublas|cublasLt|nccl)\.so'

# Configures and builds consumer project $1 against the prefix, in $work/$2.
build_consumer() {
  cmake -S "$1" -B "$work/$2" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_PREFIX_PATH="$prefix" >"$work/$2.log" || { cat "$work/$2.log"; exit 1; }
  cmake --build "$work/$2"
}

case "$case_name" in
core)
  no_library "$lib/libhostir.so" "$cuda_libraries|libmpi"
  build_consumer "$source_dir/examples/cpp" core
  no_library "$work/core/hostir_example" "$cuda_libraries|libmpi"
  "$work/core/hostir_example"
  ;;
mpi)
  build_consumer "$source_dir/examples/cpp_mpi" mpi
  "$mpiexec" -np 2 "$work/mpi/hostir_mpi_example"
  ;;
without-cuda)
  no_library "$lib/libhostir.so" "$cuda_libraries"
  "$prefix/bin/hostir" --version >/dev/null
  build_consumer "$source_dir/examples/cpp" core
  # The CUDA component finds its libraries through its RUNPATH: drop it, and
  # run through the loader without its cache, which names /usr/local/cuda.
  if [[ -e "$lib/libhostir_cuda.so" ]]; then
    echo 'file(RPATH_REMOVE FILE "${file}")' >"$work/remove_rpath.cmake"
    cmake -D "file=$lib/libhostir_cuda.so" -P "$work/remove_rpath.cmake"
  fi
  loader=(/lib64/ld-linux-x86-64.so.2 --inhibit-cache)
  "${loader[@]}" "$work/core/hostir_example"
  program="$source_dir/examples/row_parallel_linear.hir"
  "${loader[@]}" "$prefix/bin/hostir" run "$program" --ranks 2 --check >"$work/run.log" 2>&1 ||
    { cat "$work/run.log"; fail "the CPU run failed without the CUDA libraries"; }
  grep -q "check: ok" "$work/run.log" || { cat "$work/run.log"; fail "the CPU run was not checked"; }
  # Asking for CUDA is a clear error, whether the component is there (its
  # libraries are not), was never built, or the machine has no driver (asked
  # before the component is loaded).
  rc=0
  "${loader[@]}" "$prefix/bin/hostir" run "$program" --backend cuda >"$work/cuda.log" 2>&1 || rc=$?
  [[ $rc -ne 0 ]] || fail "a CUDA run succeeded without the CUDA libraries"
  grep -Eq "cannot be loaded: lib[a-zA-Z]+\.so|built without the CUDA backend|no CUDA driver is installed" "$work/cuda.log" ||
    { cat "$work/cuda.log"; fail "no clear reason for the missing CUDA backend"; }
  cat "$work/cuda.log"
  # Without the component at all, the reason names the missing file.
  rm -f "$lib/libhostir_cuda.so"
  "$prefix/bin/hostir" --version >"$work/version.log"
  grep -Eq "not installed: .*libhostir_cuda.so is missing|built without the CUDA toolkit" "$work/version.log" ||
    { cat "$work/version.log"; fail "--version does not say why CUDA is missing"; }
  cat "$work/version.log"
  ;;
*)
  fail "unknown case '$case_name' (core, mpi, without-cuda)"
  ;;
esac
echo "install_consumer $case_name: ok"
