#!/usr/bin/env bash
# wheel_test.sh [PIP_INSTALL_ARGS...]: `pip install .` of this checkout into
# a fresh virtual environment (the system Python's venv, with numpy and
# pytest from PyPI), then the Python tests (tests/python) against the
# installed package, run from outside the checkout so that nothing but the
# wheel provides `import hostir`. Extra arguments go to `pip install`, e.g.
# `--config-settings=cmake.define.HOSTIR_CUDA=OFF` for a quicker build. Needs the network
# (PyPI). Writes nothing outside its temporary directory, which it removes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d -t hostir-wheel.XXXXXX)"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 -m venv "$work/venv"
python="$work/venv/bin/python"
# scikit-build-core configures and builds in a temporary folder of its own,
# never in the checkout's build folders.
"$python" -m pip install --quiet --disable-pip-version-check "$root" "$@"
"$python" -m pip install --quiet --disable-pip-version-check pytest

cd "$work"
location="$("$python" -c 'import hostir; print(hostir.__file__)')"
[[ "$location" == "$work/venv/"* ]] || { echo "error: hostir imported from $location, not the venv" >&2; exit 1; }
echo "hostir imported from $location"
"$python" -m pytest -q -p no:cacheprovider "$root/tests/python"
