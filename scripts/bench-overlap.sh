#!/usr/bin/env bash
# The overlap benchmark: installs what is missing, builds hostir, then runs
# the row-parallel linear, reduce-scatter and all-gather examples on N MPI
# ranks for S = 1, 2, 4, 8 chunks, with their compute-only and
# communication-only variants and the PyTorch + gloo peer, and prints one
# table per program and shape. `--programs swiglu_mlp,moe_expert_parallel`
# measures the layers of examples/layers/ instead, beside their PyTorch +
# gloo peers. Every flag goes to scripts/bench_overlap.py (--help lists
# them); the defaults fit a 2-core machine.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

hostir_install_packages "${HOSTIR_PACKAGES[@]}" "${HOSTIR_BENCH_PACKAGES[@]}"
hostir_prepare_measurement
# Debian's python3 (where python3-torch lives), not whatever python3 is first on PATH.
/usr/bin/python3 scripts/bench_overlap.py --hostir build/bin/hostir "$@"
