#!/usr/bin/env bash
# On a machine with NVIDIA GPUs: builds build/ with the CUDA backend, runs
# the CUDA tests (ctest -L cuda), checks the benchmark program against the
# serial reference at a small shape, then times the row-parallel overlap
# benchmark at nvFuser's shape (t = h = 8192, bf16, bench/row_parallel_bf16.hir)
# on every GPU (one MPI rank per GPU) for S = 1, 2 and 4 chunks, and prints
# the median time per S. S = 1 has nothing to overlap: the gain of S > 1 is
# the communication hidden behind the GEMMs.
#
# Then overlap on one GPU (scripts/gpu-overlap.sh): two in-process ranks
# share GPU 0 through the copy-engine communicator, their GEMMs on the SMs
# and their communication on the copy engines.
#
# Environment: WARMUP (default 5) and REPEAT (default 20) runs per S.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WARMUP="${WARMUP:-5}"
REPEAT="${REPEAT:-20}"

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "error: nvidia-smi not found: gpu-check.sh needs a machine with NVIDIA GPUs and their driver" >&2
  exit 1
fi
GPUS="$(nvidia-smi -L | grep -c '^GPU ' || true)"
if [[ "$GPUS" -lt 1 ]]; then
  echo "error: nvidia-smi lists no GPU" >&2
  exit 1
fi
hostir_log "GPUs: ${GPUS}"
nvidia-smi -L

hostir_install_packages "${HOSTIR_PACKAGES[@]}"
hostir_configure build -DHOSTIR_TESTS=ON -DHOSTIR_FUZZ=OFF -DHOSTIR_CUDA=ON
hostir_build build
hostir_export_mpi_env

hostir_log "ctest -L cuda"
ctest --test-dir "$HOSTIR_ROOT/build" -L cuda --output-on-failure

HOSTIR="$HOSTIR_ROOT/build/bin/hostir"
BENCH="$HOSTIR_ROOT/bench/row_parallel_bf16.hir"

hostir_log "benchmark program checked at a small shape on ${GPUS} rank(s)"
mpirun -np "$GPUS" "$HOSTIR" run "$BENCH" --set T=512 --set H=256 --passes assign-streams --backend cuda --check

hostir_log "row-parallel linear, t = h = 8192, bf16, ${GPUS} rank(s), ${WARMUP} warmup + ${REPEAT} timed runs"
results=()
for s in 1 2 4; do
  output="$(mpirun -np "$GPUS" "$HOSTIR" run "$BENCH" --set "S=${s}" --passes assign-streams --backend cuda \
    --warmup "$WARMUP" --repeat "$REPEAT")"
  timing="$(grep '^timing:' <<<"$output" || true)"
  if [[ -z "$timing" ]]; then
    echo "error: no timing line for S=${s}; the run printed:" >&2
    echo "$output" >&2
    exit 1
  fi
  median="$(sed -E 's/.*median_ms=([0-9.]+).*/\1/' <<<"$timing")"
  min="$(sed -E 's/.*min_ms=([0-9.]+).*/\1/' <<<"$timing")"
  max="$(sed -E 's/.*max_ms=([0-9.]+).*/\1/' <<<"$timing")"
  results+=("$(printf '%4s  %12s  %12s  %12s' "$s" "$median" "$min" "$max")")
done

printf '\n#  row_parallel_bf16: T = 8192, H = 8192, x [T, 4H], w [H, 4H], bf16, %s rank(s)\n' "$GPUS"
printf '%4s  %12s  %12s  %12s\n' "S" "median_ms" "min_ms" "max_ms"
printf '%s\n' "${results[@]}"

"$HOSTIR_ROOT/scripts/gpu-overlap.sh" --skip-build
