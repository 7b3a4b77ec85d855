# hostir.parse and Program: names, parameters, declarations, printing and
# equality; seeded inputs; hostir.check and hostir.simulate on good programs.
import pathlib

import numpy as np
import pytest

import hostir
from conftest import example, random_inputs

ROW_PARALLEL = example("row_parallel_linear")


def test_parse_a_file():
    program = hostir.parse(ROW_PARALLEL)
    assert program.name == "row_parallel_linear"
    assert program.source_name == ROW_PARALLEL
    assert program.params == {"M": 256, "K": 512, "N": 128, "S": 4}
    assert set(program.inputs) == {"x", "w"}
    assert program.inputs["x"] == hostir.Tensor("x", "f32", (256, 512), 1, True)
    assert program.outputs == {"y": hostir.Tensor("y", "f32", (256, 128), None, False)}


def test_parse_a_path_object_and_text():
    from_path = hostir.parse(pathlib.Path(ROW_PARALLEL))
    from_text = hostir.parse(pathlib.Path(ROW_PARALLEL).read_text())
    assert from_text.source_name == "<string>"
    assert from_path == from_text
    assert hash(from_path) == hash(from_text)


def test_printed_text_parses_back_to_the_same_program():
    program = hostir.parse(example("sequence_parallel_mlp"))
    assert str(program) == program.text
    assert program.text.startswith("program sequence_parallel_mlp(")
    assert hostir.parse(program.text) == program
    assert program != hostir.parse(ROW_PARALLEL)
    assert program != "not a program"


def test_tensors_bind_params_and_ranks():
    program = hostir.parse(example("all_gather"))
    tensors = program.tensors(params={"M": 8, "N": 12}, ranks=4)
    assert [(t.name, t.is_input) for t in tensors] == [("x", True), ("w", True), ("y", False)]
    x, w, y = tensors
    assert (x.shape, x.shard_axis) == ((8, 96), 1)
    assert (w.shape, w.shard_axis) == ((12, 96), 0)
    assert (y.dtype, y.shape, y.shard_axis) == ("f32", (8, 12), 1)


def test_check_accepts_race_free_programs():
    for name in ("row_parallel_linear", "ring_reduce_scatter_overlapped", "events"):
        assert hostir.check(example(name), ranks=2, params={"M": 16}) is None
    assert hostir.check(hostir.parse(ROW_PARALLEL), ranks=4, params={"M": 16, "S": 2}, streams=2) is None


def test_same_seed_same_inputs_other_seed_other_inputs():
    params = {"M": 16, "K": 32, "N": 8, "S": 2}
    first = hostir.run(ROW_PARALLEL, ranks=2, params=params, seed=7)["y"]
    again = hostir.run(ROW_PARALLEL, ranks=2, params=params, seed=7)["y"]
    other = hostir.run(ROW_PARALLEL, ranks=2, params=params, seed=8)["y"]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert np.all(np.isfinite(first))


def test_seeded_inputs_do_not_depend_on_the_rank_count():
    # Inputs are global tensors filled from the seed, then sharded.
    params = {"M": 16, "K": 32, "N": 8, "S": 2}
    one = hostir.run(ROW_PARALLEL, ranks=1, params=params, seed=3)["y"]
    four = hostir.run(ROW_PARALLEL, ranks=4, params=params, seed=3)["y"]
    np.testing.assert_allclose(one, four, rtol=1e-4, atol=1e-4)


def test_inputs_not_given_are_seeded(rng):
    params = {"M": 16, "K": 32, "N": 8, "S": 2}
    w = rng.uniform(-1, 1, (8, 32)).astype(np.float32)
    zero_x = hostir.run(ROW_PARALLEL, {"x": np.zeros((16, 32)), "w": w}, ranks=2, params=params, copy_inputs=True)["y"]
    np.testing.assert_array_equal(zero_x, np.zeros((16, 8), np.float32))
    seeded_x = hostir.run(ROW_PARALLEL, {"w": w}, ranks=2, params=params, seed=5, fill_missing=True)["y"]
    assert np.any(seeded_x != 0)


def test_simulate_row_parallel_linear_on_two_ranks():
    figures = hostir.simulate(ROW_PARALLEL, "h100-nvlink", ranks=2)
    assert set(figures) == {"median_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "E"}
    assert all(isinstance(value, float) for value in figures.values())
    assert figures["median_ms"] > 0
    assert figures["compute_ms"] > 0 and figures["comm_ms"] > 0
    assert 0 <= figures["exposed_comm_ms"] <= figures["median_ms"]


def test_simulate_with_params_and_passes():
    small = hostir.simulate(ROW_PARALLEL, "h100-nvlink", ranks=2, params={"M": 64})
    large = hostir.simulate(ROW_PARALLEL, "h100-nvlink", ranks=2, params={"M": 1024})
    assert 0 < small["median_ms"] < large["median_ms"]
    streamed = hostir.simulate(ROW_PARALLEL, "h100-nvlink", ranks=2, params={"M": 1024}, passes=("assign-streams",))
    # The pass is applied: the prediction is of another schedule.
    assert streamed["median_ms"] > 0 and streamed != large


def test_runs_from_several_threads(rng):
    # run() lets go of the GIL: concurrent calls each get their own result.
    import concurrent.futures

    params = {"M": 16, "K": 32, "N": 8, "S": 2}
    cases = [random_inputs(rng, hostir.parse(ROW_PARALLEL), params) for _ in range(4)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda inputs: hostir.run(ROW_PARALLEL, inputs, ranks=2, params=params)["y"], cases))
    for inputs, y in zip(cases, results):
        expected = inputs["x"].astype(np.float64) @ inputs["w"].astype(np.float64).T
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
