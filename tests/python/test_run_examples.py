# hostir.run on the examples, on 1, 2 and 4 in-process ranks, against NumPy
# references computed in float64 from each example's stated meaning.
import numpy as np
import pytest

import hostir
from conftest import assert_close_f32, example, random_inputs

RANKS = (1, 2, 4)


def linear_t(i):
    """y = x @ w^T: column-parallel, row-parallel and the rings."""
    return i["x"].astype(np.float64) @ i["w"].astype(np.float64).T


def matmul(i):
    """y = x @ w: the reduce-scatter ones."""
    return i["x"].astype(np.float64) @ i["w"].astype(np.float64)


def mlp(i):
    """y = (x @ w1^T) @ w2^T."""
    f = {k: v.astype(np.float64) for k, v in i.items()}
    return (f["x"] @ f["w1"].T) @ f["w2"].T


def parallel_block(i):
    f = {k: v.astype(np.float64) for k, v in i.items()}
    return (f["x"] @ f["wa"].T) @ f["wo"].T + (f["x"] @ f["w1"].T) @ f["w2"].T


# name, small params (every sharded extent divides by 4 ranks, rings need
# M / world rows split in halves), reference, contraction length for the
# tolerance.
CASES = [
    ("row_parallel_linear", dict(M=16, K=32, N=8, S=2), linear_t, 32),
    ("all_gather", dict(M=16, K=8, N=8, S=2), linear_t, 8),
    ("reduce_scatter", dict(M=16, K=8, N=8, S=2), matmul, 8),
    ("broadcast", dict(M=16, K=8, N=4), linear_t, 8),
    ("sequence_parallel_mlp", dict(T=16, H=8, F=16, S=2), mlp, 128),
    ("parallel_block", dict(B=8, H=16, A=8, F=16), parallel_block, 256),
    ("events", dict(M=16, K=8, H=16, N=8, S=2), mlp, 128),
    ("pipeline_with_blocks", dict(M=16, K=8, H=16, N=8, S=2), mlp, 128),
    ("ring_all_gather_linear", dict(M=16, K=8, N=8), linear_t, 8),
    ("ring_all_gather_linear_overlapped", dict(M=16, K=8, N=8), linear_t, 8),
    ("ring_bidirectional", dict(M=16, K=8, N=8), linear_t, 8),
    ("ring_bidirectional_overlapped", dict(M=16, K=8, N=8), linear_t, 8),
    ("ring_reduce_scatter", dict(M=16, K=8, N=8), matmul, 8),
    ("ring_reduce_scatter_overlapped", dict(M=16, K=8, N=8), matmul, 8),
]


@pytest.mark.parametrize("ranks", RANKS)
@pytest.mark.parametrize("name,params,reference,contraction", CASES, ids=[c[0] for c in CASES])
def test_example_matches_numpy(rng, name, params, reference, contraction, ranks):
    program = hostir.parse(example(name))
    inputs = random_inputs(rng, program, params)
    outputs = hostir.run(program, inputs, ranks=ranks, params=params)
    assert list(outputs) == ["y"]
    assert_close_f32(outputs["y"], reference(inputs), contraction)


@pytest.mark.parametrize("name", ["row_parallel_linear", "all_gather", "reduce_scatter", "sequence_parallel_mlp"])
def test_assign_streams_gives_the_same_result(rng, name):
    params, reference, contraction = next((p, r, c) for n, p, r, c in CASES if n == name)
    inputs = random_inputs(rng, hostir.parse(example(name)), params)
    plain = hostir.run(example(name), inputs, ranks=2, params=params)["y"]
    streamed = hostir.run(example(name), inputs, ranks=2, params=params, passes=("assign-streams",))["y"]
    assert_close_f32(streamed, reference(inputs), contraction)
    np.testing.assert_allclose(streamed, plain, rtol=1e-6, atol=1e-6)


def test_default_params_and_a_path_argument(rng):
    # The declared defaults (M=256, K=512, N=128), the program given as a path.
    path = example("row_parallel_linear")
    inputs = random_inputs(rng, hostir.parse(path), None)
    y = hostir.run(path, inputs, ranks=2)["y"]
    assert y.shape == (256, 128)
    assert_close_f32(y, linear_t(inputs), 512)


def test_params_change_the_global_shapes(rng):
    program = hostir.parse(example("reduce_scatter"))
    params = dict(M=12, K=4, N=8, S=3)
    inputs = random_inputs(rng, program, params)
    assert inputs["x"].shape == (12, 4) and inputs["w"].shape == (4, 8)
    y = hostir.run(program, inputs, ranks=2, params=params, copy_inputs=True)["y"]
    assert y.shape == (12, 8)
    assert_close_f32(y, matmul(inputs), 4)


def test_inputs_of_another_dtype_are_converted(rng):
    params = dict(M=8, K=8, N=4, S=2)
    program = hostir.parse(example("row_parallel_linear"))
    inputs = random_inputs(rng, program, params, dtype=np.float64)
    as_lists = {"x": inputs["x"].tolist(), "w": inputs["w"]}
    y = hostir.run(program, as_lists, ranks=2, params=params, copy_inputs=True)["y"]
    expected = inputs["x"].astype(np.float32).astype(np.float64) @ inputs["w"].astype(np.float32).astype(np.float64).T
    assert_close_f32(y, expected, 8)
