#!/usr/bin/env bash
# The pipeline benchmark: installs what is missing, builds hostir, then runs
# the row-parallel linear and the SwiGLU MLP at a communication-bound shape
# on 2 ranks, in-process and under mpirun, as written at S = 1 against
# `--passes pipeline` at S = 2 and 4, in interleaved rounds, and prints one
# table per program and launcher. Every flag goes to
# scripts/bench_pipeline.py (--help lists them).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

hostir_install_packages "${HOSTIR_PACKAGES[@]}" "${HOSTIR_BENCH_PACKAGES[@]}"
hostir_prepare_measurement
# Debian's python3, not whatever python3 is first on PATH.
/usr/bin/python3 scripts/bench_pipeline.py --hostir build/bin/hostir "$@"
