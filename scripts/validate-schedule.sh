#!/usr/bin/env bash
# The overlap pass and `hostir tune` against real runs: installs what is
# missing, builds hostir, calibrates this machine (`hostir calibrate` under
# mpirun; --profile FILE skips it), then for each overlap-benchmark program
# and shape checks that the S `tune` picks runs within 10% of the best S
# measured, that `--passes overlap` is never more than 5% slower than the
# program as written, and that compute-bound shapes are left alone. Every
# flag goes to scripts/validate_schedule.py (--help lists them).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

hostir_install_packages "${HOSTIR_PACKAGES[@]}"
hostir_prepare_measurement
/usr/bin/python3 scripts/validate_schedule.py --hostir build/bin/hostir "$@"
