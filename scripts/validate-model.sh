#!/usr/bin/env bash
# The cost model's accuracy, side by side: installs what is missing, builds
# hostir, calibrates this machine (`hostir calibrate` under mpirun), then for
# each overlap-benchmark program, shape and chunk count runs the program and
# simulates it, and prints measured, predicted and error; last, the shipped
# h100-nvlink profile against the recorded H100 runs. Every flag goes to
# scripts/validate_model.py (--help lists them).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

hostir_install_packages "${HOSTIR_PACKAGES[@]}"
hostir_prepare_measurement
/usr/bin/python3 scripts/validate_model.py --hostir build/bin/hostir "$@"
