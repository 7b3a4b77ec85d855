# hostir.apply_passes, and hostir.run's command-line options: backend,
# communicator, warmup and repeat with the timings, trace, machine.
import json

import numpy as np
import pytest

import hostir
from conftest import example

# y doubles at each of S allreduces (the sum over 2 ranks of the same y).
DOUBLING = """program doubling(N = 64, S = 3) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  for i in range(S) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
"""


def test_apply_passes_returns_the_rewritten_program_and_its_remarks():
    p = hostir.parse(example("row_parallel_linear"))
    result = hostir.apply_passes(p, ["assign-streams"], ranks=2)
    program, remarks = result
    assert result.program is program and result.remarks is remarks
    # The loop's iterations now run on worker streams, proved for 2 ranks.
    assert "with stream(" not in p.text and "with stream(i) {" in program.text
    assert "proved_for(world = 2" in program.text
    hostir.check(program, ranks=2)
    # Why: the remark names the pass and points at the loop (line 8).
    assert len(remarks) == 1 and isinstance(remarks[0], str)
    assert remarks[0].startswith(f"{p.source_name}:8:3: remark: assign-streams: ")


def test_apply_passes_takes_the_command_lines_list_and_matches_hostir_opt():
    p = hostir.parse(example("row_parallel_linear"))
    assert hostir.apply_passes(p, "assign-streams,canonicalize").program == \
        hostir.apply_passes(p, ["assign-streams", "canonicalize"]).program


def test_overlap_needs_a_machine_and_says_why_with_remarks():
    p = hostir.parse(example("parallel_block"))
    with pytest.raises(hostir.Error) as caught:
        hostir.apply_passes(p, ["overlap"], ranks=8)
    assert caught.value.kind == "usage"
    assert "machine" in caught.value.message
    params = {"B": 8192, "H": 4096, "A": 1024, "F": 4096}
    result = hostir.apply_passes(p, ["overlap"], ranks=8, params=params, machine="h100-nvlink")
    assert result.remarks, "overlap explains its decision"
    assert all(": remark: overlap: " in r for r in result.remarks)


def test_an_unknown_pass_is_a_usage_error():
    with pytest.raises(hostir.Error) as caught:
        hostir.apply_passes(DOUBLING, ["no-such-pass"])
    assert caught.value.kind == "usage"
    assert "no-such-pass" in caught.value.message
    assert "assign-streams" in hostir.pass_names()


def test_run_with_repeat_returns_the_timings_and_still_the_outputs():
    x = np.arange(64, dtype=np.float32)
    result = hostir.run(DOUBLING, {"x": x}, ranks=2, warmup=2, repeat=5)
    assert isinstance(result, dict) and list(result) == ["y"]
    np.testing.assert_array_equal(result["y"], x * 8)
    assert len(result.timings) == 5
    assert all(t > 0 for t in result.timings)
    assert result.timings.median_ms == sorted(result.timings)[2]
    assert result.timings.min_ms == min(result.timings)
    # y on a rank; x, which the program never writes, is read in place.
    assert 64 * 4 <= result.peak_memory_bytes < 2 * 64 * 4
    assert len(hostir.run(DOUBLING, {"x": x}).timings) == 1


def test_warmup_and_repeat_are_checked():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(DOUBLING, repeat=-1)
    assert caught.value.kind == "usage"
    assert "repeat" in caught.value.message


def test_backend_and_communicator_are_chosen_and_checked():
    x = np.ones(64, dtype=np.float32)
    np.testing.assert_array_equal(hostir.run(DOUBLING, {"x": x}, ranks=2, backend="cpu")["y"], x * 8)
    with pytest.raises(hostir.Error) as caught:
        hostir.run(DOUBLING, backend="tpu")
    assert caught.value.kind == "usage"
    assert "tpu" in caught.value.message
    with pytest.raises(hostir.Error) as caught:
        hostir.run(DOUBLING, ranks=2, backend="cpu", communicator="nccl")
    assert caught.value.kind == "usage"


def test_run_with_passes_that_need_a_machine():
    p = hostir.parse(example("row_parallel_linear"))
    with pytest.raises(hostir.Error):
        hostir.run(p, ranks=2, passes=["overlap"])
    ys = [hostir.run(p, ranks=2, passes=passes, machine="h100-nvlink", seed=7)["y"]
          for passes in ([], ["overlap"])]
    np.testing.assert_allclose(ys[0], ys[1], rtol=1e-5, atol=1e-4)


def test_trace_is_written_with_every_ranks_operations(tmp_path):
    path = tmp_path / "t.json"
    result = hostir.run(DOUBLING, ranks=2, trace=path)
    assert result.trace_bytes == path.stat().st_size
    assert not result.trace_truncated
    events = json.loads(path.read_text())["traceEvents"]
    pids = {e.get("pid") for e in events if e.get("ph") == "X"}
    assert pids == {0, 1}
    assert any("allreduce" in e.get("name", "") for e in events)


def test_a_trace_that_cannot_be_written_is_an_error(tmp_path):
    with pytest.raises(hostir.Error) as caught:
        hostir.run(DOUBLING, trace=tmp_path / "missing" / "t.json")
    assert caught.value.kind == "run"
    assert "missing" in str(caught.value)
