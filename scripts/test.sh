#!/usr/bin/env bash
# Installs what is missing, builds build/ and runs every test (ctest: unit,
# executor, MPI, the installed-package consumers, the docs' examples) and
# the Python module's tests (pytest, system Python); installs the wheel
# (`pip install .`) into a fresh venv and runs the Python tests against it;
# builds build/tsan (ThreadSanitizer) and build/asan
# (AddressSanitizer + UBSan, with clang) and runs every test but the
# MPI-launched ones there (and, under ThreadSanitizer, but the suites
# labelled single-threaded); then builds the parser fuzzer with clang in build/fuzz and runs it
# for FUZZ_SECONDS (default 60) on a copy of its seed corpus (tests/fuzz/corpus
# and examples/, assembled by the build). Checks first that every C++ and
# CUDA source is formatted as .clang-format says. Exits
# non-zero when a build or a test fails, a sanitizer reports, or the fuzzer
# finds a crash.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

# 60 seconds unless FUZZ_SECONDS says otherwise, in CI (CI=true) too.
FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
if ! [[ "$FUZZ_SECONDS" =~ ^[0-9]+$ ]] || [[ "$FUZZ_SECONDS" -lt 1 ]]; then
  echo "error: FUZZ_SECONDS must be a positive number of seconds, got '$FUZZ_SECONDS'" >&2
  exit 2
fi

# One line per step for the summary; printed however the script ends.
SUMMARY=()
FAILED=0
TOTAL_PASSED=0
TOTAL_FAILED=0
TOTAL_SKIPPED=0
# Each step's line ends with the seconds since the step before it ended,
# so that the summary shows where CI's minutes go.
STEP_START=$SECONDS
record() {
  if [[ -z "$1" ]]; then
    SUMMARY+=("$(printf '  %-12s %s' "$1" "$2")")
    return
  fi
  SUMMARY+=("$(printf '  %-12s %s [%ds]' "$1" "$2" $((SECONDS - STEP_START)))")
  STEP_START=$SECONDS
}
# shellcheck disable=SC2317  # run by the EXIT trap
print_summary() {
  local rc=$?
  echo
  echo "==================== hostir test summary ===================="
  local line
  for line in "${SUMMARY[@]}"; do echo "$line"; done
  if [[ $rc -eq 0 && $FAILED -eq 0 ]]; then
    echo "  result       PASS"
  else
    echo "  result       FAIL"
  fi
  echo "============================================================="
  # The plain closing line CI reads.
  echo "hostir: ${TOTAL_PASSED} passed, ${TOTAL_FAILED} failed, ${TOTAL_SKIPPED} skipped"
}
trap print_summary EXIT

# 1. Packages and environment.
hostir_install_packages "${HOSTIR_PACKAGES[@]}"
if [[ ${#HOSTIR_INSTALLED[@]} -eq 0 ]]; then
  record packages "ok (all present)"
else
  record packages "ok (installed ${HOSTIR_INSTALLED[*]})"
fi
hostir_export_mpi_env

# Runs ctest in build dir $2 with the extra arguments after it, records the
# result under name $1 and adds its counts to the totals.
run_ctest() {
  local name="$1" dir="$2"
  shift 2
  hostir_log "ctest ${dir} $*"
  local log rc=0
  log="$(mktemp)"
  ctest --test-dir "$dir" --output-on-failure --parallel "$HOSTIR_JOBS" "$@" 2>&1 | tee "$log" || rc=$?
  local counts total failed skipped
  counts="$(grep -Eo '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1 || true)"
  if [[ -n "$counts" ]]; then
    total="$(grep -Eo '[0-9]+$' <<<"$counts")"
    failed="$(grep -Eo '[0-9]+ tests? failed' <<<"$counts" | grep -Eo '^[0-9]+')"
    # ctest counts skipped tests (the cuda ones without a GPU) as passed.
    skipped="$(grep -cE '^[[:space:]]+[0-9]+ - .*\((Skipped|Disabled)\)$' "$log" || true)"
    TOTAL_PASSED=$((TOTAL_PASSED + total - failed - skipped))
    TOTAL_FAILED=$((TOTAL_FAILED + failed))
    TOTAL_SKIPPED=$((TOTAL_SKIPPED + skipped))
  fi
  if [[ $rc -eq 0 ]]; then
    record "$name" "ok (${counts:-no counts reported})"
  else
    local failed_names
    failed_names="$(sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' |
      sed -E 's/^[[:space:]]+[0-9]+ - ([^ ]+).*/\1/' | head -n 10 | tr '\n' ' ' || true)"
    record "$name" "FAILED (exit $rc: ${counts:-see the log above})"
    if [[ -n "$failed_names" ]]; then record "" "failed: $failed_names"; fi
    [[ -n "$counts" ]] || TOTAL_FAILED=$((TOTAL_FAILED + 1))
    FAILED=1
  fi
  rm -f "$log"
}

# Runs the Python module's tests (tests/python) with the system Python and
# the module of build dir $2 on its path, records the result under name $1
# and adds pytest's counts to the totals.
run_pytest() {
  local name="$1" module_dir="$2"
  hostir_log "pytest tests/python (module from ${module_dir})"
  local log rc=0
  log="$(mktemp)"
  PYTHONPATH="$HOSTIR_ROOT/$module_dir" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python 2>&1 |
    tee "$log" || rc=$?
  local counts passed failed skipped
  counts="$(grep -E '^[0-9]+ (passed|failed)|^=+ .*(passed|failed)' "$log" | tail -n 1 | tr -d '=' | sed -E 's/^ +| +$//g' || true)"
  passed="$(grep -Eo '[0-9]+ passed' <<<"$counts" | grep -Eo '^[0-9]+' || echo 0)"
  failed=0
  local n
  for n in $(grep -Eo '[0-9]+ (failed|errors?)' <<<"$counts" | grep -Eo '^[0-9]+' || true); do failed=$((failed + n)); done
  skipped="$(grep -Eo '[0-9]+ skipped' <<<"$counts" | grep -Eo '^[0-9]+' || echo 0)"
  TOTAL_PASSED=$((TOTAL_PASSED + passed))
  TOTAL_FAILED=$((TOTAL_FAILED + failed))
  TOTAL_SKIPPED=$((TOTAL_SKIPPED + skipped))
  if [[ $rc -eq 0 ]]; then
    record "$name" "ok (${counts:-no counts reported})"
  else
    record "$name" "FAILED (exit $rc: ${counts:-see the log above})"
    [[ -n "$counts" ]] || TOTAL_FAILED=$((TOTAL_FAILED + 1))
    FAILED=1
  fi
  rm -f "$log"
}

# 2. Formatting: every tracked C++/CUDA source as .clang-format says.
format_log="$(mktemp)"
mapfile -t sources < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' 2>/dev/null || true)
if [[ ${#sources[@]} -eq 0 ]]; then
  record format "FAILED (no sources listed: not a git checkout?)"
  FAILED=1
elif clang-format --dry-run --Werror "${sources[@]}" >"$format_log" 2>&1; then
  record format "ok (${#sources[@]} files)"
else
  unformatted="$(grep -Eo '^[^:]+:[0-9]+:[0-9]+: error' "$format_log" | cut -d: -f1 | sort -u)"
  head -n 40 "$format_log"
  record format "FAILED (run clang-format -i on: $(echo "$unformatted" | tr '\n' ' '))"
  FAILED=1
fi
rm -f "$format_log"

# 3. Build and all tests (unit, executor, MPI). A failed build skips the
# tests but not the later stages; the script still fails at the end.
# (Functions in an `if` condition run without errexit: each helper returns
# the status of its cmake call.)
if hostir_configure_main && hostir_build build; then
  record build "ok (build/, $HOSTIR_JOBS jobs)"
  run_ctest tests build
  run_pytest python build/python
else
  record build "FAILED (build/; see the compiler output above)"
  record tests "skipped (no build)"
  record python "skipped (no build)"
  FAILED=1
fi

# 3b. `pip install .` into a fresh venv and the Python tests against the
# wheel (tests/install/wheel_test.sh). Without the CUDA backend, whose
# kernels would add minutes; the wheel's CUDA component is the same
# library the consumer tests of build/ check.
hostir_log "wheel: pip install . into a fresh venv, then pytest"
if bash tests/install/wheel_test.sh --config-settings=cmake.define.HOSTIR_CUDA=OFF; then
  record wheel "ok (pip install . into a fresh venv; tests/python passed against it)"
else
  record wheel "FAILED (tests/install/wheel_test.sh; see above)"
  FAILED=1
fi

# 4. ThreadSanitizer and AddressSanitizer (+UBSan) builds. Neither runs the
# MPI-launched tests (Open MPI itself is not instrumented); ThreadSanitizer
# also skips the suites labelled single-threaded, whose code starts no
# thread and so has no race to find. AddressSanitizer + UBSan builds with
# clang, which compiles it in two thirds of GCC's time and checks the code
# with a second compiler. Any report fails the test that produced it.
# allocator_may_return_null: an allocation beyond memory is std::bad_alloc,
# as with the system allocator, which the tests of such programs expect.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1"
export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# sanitized_tests NAME SANITIZERS LABELS_TO_EXCLUDE [CMAKE_ARGS...]: builds
# build/NAME with those sanitizers and runs its tests but the labels given.
sanitized_tests() {
  local name="$1" sanitizers="$2" excluded="$3" dir="build/$1"
  shift 3
  if hostir_configure "$dir" -DHOSTIR_TESTS=ON -DHOSTIR_FUZZ=OFF -DHOSTIR_CUDA=OFF \
    -DHOSTIR_SANITIZE="$sanitizers" "$@" && hostir_build "$dir"; then
    run_ctest "$name" "$dir" --label-exclude "$excluded"
  else
    record "$name" "FAILED (build of $dir)"
    FAILED=1
  fi
}
sanitized_tests tsan thread 'mpi|single-threaded'
sanitized_tests asan address,undefined mpi -DCMAKE_CXX_COMPILER=clang++

# 5. Fuzzer: clang, sanitizers, its own build directory.
record "fuzz build" "FAILED (build/fuzz)"
CC=clang CXX=clang++ hostir_configure build/fuzz -DHOSTIR_FUZZ=ON -DHOSTIR_TESTS=OFF -DHOSTIR_CUDA=OFF
hostir_build build/fuzz hostir_parser_fuzz
SUMMARY[-1]="$(printf '  %-12s %s' "fuzz build" "ok (build/fuzz, clang, ASan+UBSan)")"

fuzz_dir="$(mktemp -d -t hostir-fuzz.XXXXXX)"
mkdir -p "$fuzz_dir/corpus" "$fuzz_dir/artifacts"
cp build/fuzz/tests/fuzz/corpus/*.hir "$fuzz_dir/corpus/"
fuzz_log="$fuzz_dir/fuzz.log"
hostir_log "fuzz hostir_parser_fuzz for ${FUZZ_SECONDS}s (work dir $fuzz_dir)"
fuzz_rc=0
(
  cd "$fuzz_dir"
  "$HOSTIR_ROOT/build/fuzz/tests/fuzz/hostir_parser_fuzz" \
    -max_total_time="$FUZZ_SECONDS" \
    -timeout=120 \
    -max_len=262144 \
    -dict="$HOSTIR_ROOT/tests/fuzz/hir.dict" \
    -artifact_prefix="$fuzz_dir/artifacts/" \
    -print_final_stats=1 \
    "$fuzz_dir/corpus"
) >"$fuzz_log" 2>&1 || fuzz_rc=$?
executions="$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$fuzz_log" | grep -Eo '[0-9]+$' || true)"
artifacts="$(find "$fuzz_dir/artifacts" -type f | sort)"
if [[ $fuzz_rc -eq 0 && -z "$artifacts" ]]; then
  grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$fuzz_log" || true
  grep -E '^stat::' "$fuzz_log" || true
  record fuzz "ok (${executions:-?} executions in ${FUZZ_SECONDS}s, no crash)"
  rm -rf "$fuzz_dir"
else
  echo "---- last lines of the fuzzer's log ($fuzz_log) ----"
  tail -n 120 "$fuzz_log"
  record fuzz "FAILED (exit $fuzz_rc; log $fuzz_log)"
  for a in $artifacts; do record "" "reproducer: $a"; done
  FAILED=1
fi

exit "$FAILED"
