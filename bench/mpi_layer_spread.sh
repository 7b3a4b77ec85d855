#!/bin/bash
# The run-to-run spread of the communication-bound row-parallel layer
# under `mpirun -np 2` (docs/performance.md, "MPI runs on a loaded node"):
# `hostir run` beside the same layer by hand (bench/mpi_layer_reference,
# MPI and OpenBLAS without hostir), invocation by invocation, so that both
# see the same machine. Per S and per program: each invocation's median,
# and the worst of its slowest run over its own median.
#   bench/mpi_layer_spread.sh [BUILD_DIR] [INVOCATIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
invocations=${2:-5}
source scripts/lib.sh
hostir_export_mpi_env
shape=(--set M=8192 --set K=16 --set N=1024 --warmup 2 --repeat 10)
for S in 1 2 4 8; do
  for _ in $(seq "$invocations"); do
    echo "$S hostir $(mpirun -np 2 "$build/bin/hostir" run examples/row_parallel_linear.hir "${shape[@]}" --set S=$S \
      --passes assign-streams | grep timing)"
    echo "$S by-hand $(mpirun -np 2 "$build/bench/mpi_layer_reference" "${shape[@]}" --set S=$S)"
  done
done | awk '
  { median = $0; sub(/.*median_ms=/, "", median); sub(/ .*/, "", median)
    slowest = $0; sub(/.*max_ms=/, "", slowest); sub(/ .*/, "", slowest)
    key = $1 " " $2; medians[key] = medians[key] sprintf(" %.1f", median)
    if (slowest / median > worst[key]) worst[key] = slowest / median
    if (slowest / median > 1.3) over[key]++
    if (!(key in seen)) { seen[key] = 1; order[++keys] = key } }
  END { print "S program medians_ms worst_slowest/own_median invocations_over_1.3x"
        for (i = 1; i <= keys; ++i) { k = order[i]; printf "%s%s %.2f %d\n", k, medians[k], worst[k], over[k] } }'
