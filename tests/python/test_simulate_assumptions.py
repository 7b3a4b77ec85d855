# hostir.simulate states what its prediction assumed where the machine
# profile has no figure (docs/cost-model.md, "Kernels"), as `hostir
# simulate` prints it on an `assumed:` line: a ModelAssumption warning each.
import inspect
import json
import pathlib
import warnings

import hostir

PROFILES = pathlib.Path(__file__).resolve().parents[2] / "profiles"
ADDS = """program adds(M = 256, N = 256) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = add(x, x)
}
"""


def simulate_recording(program, machine):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figures = hostir.simulate(program, machine)
    said = [w for w in caught if issubclass(w.category, hostir.ModelAssumption)]
    # Each warning points at the line that called hostir.simulate: this one's.
    line = inspect.getsourcelines(simulate_recording)[1] + 3
    assert [(w.filename, w.lineno) for w in said] == [(__file__, line)] * len(said)
    return figures, said


def test_an_elementwise_kernel_on_a_profile_without_its_bandwidth_is_an_assumption():
    figures, said = simulate_recording(ADDS, "h100-nvlink")
    assert set(figures) == {"median_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "E"}
    assert [str(w.message) for w in said] == [
        "assumed: elementwise kernels (add, mul, silu, ...) at the copy bandwidth: the profile 'h100-nvlink' "
        "measured no elementwise bandwidth"]


def test_a_measured_bandwidth_assumes_nothing(tmp_path):
    # The shipped profile with an elementwise curve, as `hostir calibrate` writes one.
    profile = json.loads((PROFILES / "h100-nvlink.json").read_text())
    profile["kernels"] = {"elementwise": {"bytes": [4096, 1073741824], "gbps": [4.0, 2900.0]}}
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(profile))
    figures, said = simulate_recording(ADDS, str(path))
    assert said == []
    assert figures["median_ms"] > 0
