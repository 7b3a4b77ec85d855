#!/usr/bin/env bash
# Overlap on one GPU: two in-process ranks share GPU 0 through the
# copy-engine communicator (hostir run --ranks 2 --backend cuda
# --communicator copy-engine), so each rank's GEMMs run on the SMs while
# its communication moves on the copy engines. Prints, for the
# row-parallel linear, reduce-scatter and all-gather examples at a
# compute-bound and a communication-bound shape, T_S, T_compute, T_comm and
# E for S = 1, 2, 4, 8 beside the h100-shared profile's prediction of the
# same runs (scripts/bench_overlap.py); then the peak device memory of the
# row-parallel runs, a measured and a predicted trace of one of them drawn
# as one picture, and compute-sanitizer's memcheck and synccheck over every
# example on copy engines.
#
# Writes build/gpu-overlap/ (traces, picture, logs). Flags: --skip-build
# (use build/bin/hostir as it is), --hostir PATH (another binary, e.g. one
# carried to a machine without a compiler). Environment: WARMUP (default 5),
# REPEAT (default 20), ROUNDS (default 3).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

WARMUP="${WARMUP:-5}"
REPEAT="${REPEAT:-20}"
ROUNDS="${ROUNDS:-3}"
HOSTIR="$HOSTIR_ROOT/build/bin/hostir"
build=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --skip-build) build=0 ;;
    --hostir) HOSTIR="$2"; build=0; shift ;;
    *) echo "error: unknown flag '$1' (flags: --skip-build, --hostir PATH)" >&2; exit 2 ;;
  esac
  shift
done
if [[ $build -eq 1 ]]; then
  hostir_configure build -DHOSTIR_TESTS=ON -DHOSTIR_FUZZ=OFF -DHOSTIR_CUDA=ON
  hostir_build build hostir
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L | grep -q '^GPU '; then
  echo "error: gpu-overlap.sh needs an NVIDIA GPU and its driver" >&2
  exit 1
fi
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"  # one GPU for both ranks
out="$HOSTIR_ROOT/build/gpu-overlap"
mkdir -p "$out"
nvidia-smi -L | head -n 1
SHARED=(--ranks 2 --backend cuda --communicator copy-engine)

# Per program, a compute-bound shape (the GEMMs take longer than the
# communication) and a communication-bound one (a short contraction, or for
# the all-gather a thin output, against a large f32 collective), M,K,N.
PROGRAMS=(
  "row_parallel_linear 8192,8192,8192 16384,64,8192"
  "reduce_scatter 8192,8192,8192 16384,64,8192"
  "all_gather 8192,8192,8192 16384,8192,64"
)

hostir_log "overlap tables: 2 ranks on one GPU (copy engines), with the h100-shared prediction"
: >"$out/overlap-table.md"
for entry in "${PROGRAMS[@]}"; do
  read -r program compute_bound comm_bound <<<"$entry"
  python3 scripts/bench_overlap.py --hostir "$HOSTIR" --launcher in-process --ranks 2 --backend cuda \
    --communicator copy-engine --predict h100-shared --no-torch --no-ring --chunks 1,2,4,8 \
    --programs "$program" --compute-bound "$compute_bound" --comm-bound "$comm_bound" \
    --warmup "$WARMUP" --repeat "$REPEAT" --rounds "$ROUNDS" | tee -a "$out/overlap-table.md"
done
COMPUTE_BOUND=8192,8192,8192
COMM_BOUND=16384,64,8192

hostir_log "peak device memory (the last run's live tensors, most of either rank)"
for shape in "$COMPUTE_BOUND" "$COMM_BOUND"; do
  IFS=, read -r m k n <<<"$shape"
  for s in 1 8; do
    line="$("$HOSTIR" run examples/row_parallel_linear.hir "${SHARED[@]}" --set "M=$m" --set "K=$k" --set "N=$n" \
      --set "S=$s" --passes assign-streams --repeat 1 | grep '^memory:')"
    echo "row_parallel_linear M=$m K=$k N=$n S=$s: $line"
  done
done | tee "$out/peak-memory.txt"

hostir_log "trace of row_parallel_linear at the communication-bound shape, S=4: measured and predicted"
IFS=, read -r m k n <<<"$COMM_BOUND"
sets=(--set "M=$m" --set "K=$k" --set "N=$n" --set S=4)
"$HOSTIR" run examples/row_parallel_linear.hir "${SHARED[@]}" "${sets[@]}" --passes assign-streams --warmup 3 \
  --trace "$out/measured.json"
"$HOSTIR" simulate examples/row_parallel_linear.hir --machine h100-shared --ranks 2 "${sets[@]}" \
  --passes assign-streams --trace "$out/predicted.json"
if python3 -c "import matplotlib" 2>/dev/null; then
  python3 scripts/render_trace.py "$out/measured.json" "$out/predicted.json" "$out/overlap-trace.png" \
    --labels "measured (2 ranks, one GPU, copy engines),predicted (h100-shared)"
else
  echo "matplotlib is missing: draw the picture elsewhere with scripts/render_trace.py $out/measured.json $out/predicted.json PNG"
fi

if command -v compute-sanitizer >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/compute-sanitizer ]]; then
  sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
  for tool in memcheck synccheck; do
    hostir_log "compute-sanitizer --tool $tool: every example on copy engines, 2 ranks on one GPU"
    for example in examples/*.hir; do
      "$sanitizer" --tool "$tool" --error-exitcode 3 "$HOSTIR" run "$example" "${SHARED[@]}" \
        --passes assign-streams --check >"$out/sanitizer-$tool-$(basename "$example" .hir).log" 2>&1 ||
        { echo "$tool FAILED on $example (log: $out/sanitizer-$tool-$(basename "$example" .hir).log)"; exit 1; }
    done
    echo "$tool: clean on $(ls examples/*.hir | wc -l) examples"
  done
else
  echo "compute-sanitizer not found: skipped"
fi
