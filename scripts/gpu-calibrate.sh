#!/usr/bin/env bash
# Calibrates one GPU and measures the overlap benchmark on it, side by side,
# so that a profile's predictions can be checked against runs of the same
# machine: `hostir calibrate --backend cuda --communicator copy-engine
# --ranks 2` (two in-process ranks sharing GPU 0), then
# scripts/bench_overlap.py's row-parallel tables at the four recorded shapes
# (docs/performance.md). Compare them afterwards, anywhere, with
# `hostir simulate --machine OUT/calibrated.json` (or scripts/bench_overlap.py
# --predict OUT/calibrated.json on the GPU).
#
# Usage: scripts/gpu-calibrate.sh [--hostir PATH] [--out DIR]
# (default: build/bin/hostir, build/gpu-calibrate). --quick first writes a
# coarse profile as a smoke test. Environment: WARMUP (2), REPEAT (6),
# CALIBRATE_TIMEOUT (330 s), BENCH_TIMEOUT (100 s per table).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

HOSTIR="$HOSTIR_ROOT/build/bin/hostir"
out="$HOSTIR_ROOT/build/gpu-calibrate"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --hostir) HOSTIR="$2"; shift ;;
    --out) out="$2"; shift ;;
    *) echo "error: unknown flag '$1' (flags: --hostir PATH, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L | grep -q '^GPU '; then
  echo "error: gpu-calibrate.sh needs an NVIDIA GPU and its driver" >&2
  exit 1
fi
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"  # one GPU for both ranks
mkdir -p "$out"
nvidia-smi -L | head -n 1
SHARED=(--ranks 2 --backend cuda --communicator copy-engine)

hostir_log "calibrate --quick (smoke test)"
timeout 90 "$HOSTIR" calibrate "${SHARED[@]}" --quick --force -o "$out/quick.json" || echo "quick calibration failed: $?"

hostir_log "calibrate (full)"
timeout "${CALIBRATE_TIMEOUT:-330}" "$HOSTIR" calibrate "${SHARED[@]}" --force -o "$out/calibrated.json" ||
  echo "calibration failed: $?"

BENCH=(/usr/bin/env python3 scripts/bench_overlap.py --hostir "$HOSTIR" --launcher in-process --ranks 2
  --backend cuda --communicator copy-engine --no-torch --no-ring --chunks 1,2,4,8 --programs row_parallel_linear
  --warmup "${WARMUP:-2}" --repeat "${REPEAT:-6}" --rounds 1)
hostir_log "overlap: 8192x8192x8192 and 16384x64x8192"
timeout "${BENCH_TIMEOUT:-100}" "${BENCH[@]}" --compute-bound 8192,8192,8192 --comm-bound 16384,64,8192 | tee "$out/overlap-8192.md" ||
  echo "overlap benchmark failed: $?"
hostir_log "overlap: 16384x512x8192 and 16384x256x8192"
timeout "${BENCH_TIMEOUT:-100}" "${BENCH[@]}" --compute-bound 16384,512,8192 --comm-bound 16384,256,8192 |
  tee "$out/overlap-balanced.md" || echo "overlap benchmark failed: $?"
