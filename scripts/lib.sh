# shellcheck shell=bash
# Shared helpers for scripts/test.sh and scripts/demo.sh; source it, do not
# run it. Callers set `set -euo pipefail` themselves.

HOSTIR_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOSTIR_JOBS="$(nproc)"

# shellcheck disable=SC2034  # used by the scripts that source this file
# Debian packages the build, the tests and the fuzzer need.
# (python3-torch: the tests of torch tensors and hostir.torch.)
HOSTIR_PACKAGES=(
  cmake ninja-build g++ clang libclang-rt-14-dev clang-format
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libopenblas-dev libsleef-dev
  openmpi-bin libopenmpi-dev python3 python3-numpy
  python3-dev pybind11-dev python3-pytest python3-venv python3-mpi4py
  python3-torch
)

# shellcheck disable=SC2034
# What scripts/bench-overlap.sh adds: the timeline renderer (its PyTorch +
# gloo peer needs python3-torch, which the tests install too).
HOSTIR_BENCH_PACKAGES=(python3-matplotlib)

# Packages that hostir_install_packages installed (for the summaries).
HOSTIR_INSTALLED=()

hostir_log() { printf '==> %s\n' "$*"; }

# Runs a command as root: directly when we are root, else through sudo.
hostir_as_root() {
  if [[ "$(id -u)" -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "error: need root (or sudo) to run: $*" >&2
    return 1
  fi
}

hostir_package_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed'
}

# Installs the packages given that are not installed yet; does nothing (and
# touches no package index) when all are present.
hostir_install_packages() {
  local missing=() pkg
  for pkg in "$@"; do
    hostir_package_installed "$pkg" || missing+=("$pkg")
  done
  if [[ ${#missing[@]} -eq 0 ]]; then
    hostir_log "packages: all ${#} present"
    return 0
  fi
  hostir_log "packages: installing ${missing[*]}"
  hostir_as_root env DEBIAN_FRONTEND=noninteractive apt-get update
  hostir_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  HOSTIR_INSTALLED+=("${missing[@]}")
}

# Open MPI settings for the multi-rank tests: allow root (containers), allow
# more ranks than cores, no binding, no single-copy mechanism (it fails in
# containers without ptrace permissions).
hostir_export_mpi_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=1
  export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_hwloc_base_binding_policy=none
  export OMPI_MCA_btl_vader_single_copy_mechanism=none
}

# Open MPI tuning for the benchmarks (docs/performance.md has the numbers):
# on one node, its default allreduce for large messages is several times
# slower than the ring, so pick the ring. (Not mpi_yield_when_idle: it made
# a small program 400x slower while anything else used the cores.)
#
# And each rank bound to a core: unbound, some 2-rank jobs ran every large
# collective about 3x slower for their whole life (a 32 MiB allreduce ~32
# ms against ~11 ms, 2 jobs in 6), as if both ranks shared one core; bound,
# 8 jobs in 8 ran fast. overload-allowed: more ranks than cores still
# start, sharing cores.
hostir_export_mpi_tuning() {
  export OMPI_MCA_coll_tuned_use_dynamic_rules=1
  export OMPI_MCA_coll_tuned_allreduce_algorithm=4
  export OMPI_MCA_hwloc_base_binding_policy=core:overload-allowed
}

# hostir_configure BUILD_DIR [CMAKE_ARGS...]: a Ninja RelWithDebInfo build of
# the repository in BUILD_DIR (relative to the repository root).
hostir_configure() {
  local dir="$1"
  shift
  hostir_log "configure ${dir}"
  cmake -S "$HOSTIR_ROOT" -B "$HOSTIR_ROOT/$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
}

# hostir_build BUILD_DIR [TARGET...]: builds the targets given (all without).
hostir_build() {
  local dir="$1"
  shift
  local targets=()
  [[ $# -gt 0 ]] && targets=(--target "$@")
  hostir_log "build ${dir}${targets:+ (${*})}"
  cmake --build "$HOSTIR_ROOT/$dir" --parallel "$HOSTIR_JOBS" "${targets[@]}"
}

# The main build the README's commands use: build/ with the tests.
hostir_configure_main() {
  hostir_configure build -DHOSTIR_TESTS=ON -DHOSTIR_FUZZ=OFF
}

# hostir_prepare_measurement: what every benchmark and validation script
# does before it measures: builds the hostir binary quietly and sets the
# Open MPI environment and tuning.
hostir_prepare_measurement() {
  hostir_build_tool_quietly
  hostir_export_mpi_env
  hostir_export_mpi_tuning
}

# hostir_build_tool_quietly: configures build/ and builds the hostir binary,
# printing the build's output only when it fails (then exits 1), for
# scripts whose output is a table.
hostir_build_tool_quietly() {
  local log
  log="$(mktemp)"
  if ! { hostir_configure_main && hostir_build build hostir; } >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "error: the build failed (above)" >&2
    exit 1
  fi
  rm -f "$log"
}
