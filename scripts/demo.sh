#!/usr/bin/env bash
# The README's set-up: installs what is missing and builds everything the
# README and docs/ use in build/ (the hostir binary, the libraries and their
# CMake package for `cmake --install`, the Python module in build/python/,
# the tests), then shows the row-parallel example before and after the
# assign-streams pass and runs it on two MPI ranks, checked against the
# serial reference and timed.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$HOSTIR_ROOT"

hostir_install_packages "${HOSTIR_PACKAGES[@]}"
hostir_configure_main
hostir_build build

example=examples/row_parallel_linear.hir
hostir=./build/bin/hostir

echo
echo "==== $example (as written) ===="
cat "$example"
echo
echo "==== $hostir opt $example --passes assign-streams ===="
"$hostir" opt "$example" --passes assign-streams
echo
echo "==== mpirun -np 2 $hostir run $example --passes assign-streams --check --warmup 3 --repeat 20 ===="
hostir_export_mpi_env
mpirun -np 2 "$hostir" run "$example" --passes assign-streams --check --warmup 3 --repeat 20
