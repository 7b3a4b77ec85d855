# Shared by the Python module's tests: where the examples are, and inputs.
# Run with the module on the path: PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python
import pathlib

import numpy as np
import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"


# A row-parallel linear in any dtype ({dt}): y = x @ w.T, each rank's
# partial product over its slice of K summed by the allreduce.
LINEAR = """program linear_{dt}(M = 8, K = 16, N = 4) {{
  input  x : {dt}[M, K] shard(1)
  input  w : {dt}[N, K] shard(1)
  output y : {dt}[M, N]
  y = linear(x, w)
  c = allreduce(y, op=sum)
  wait(c)
}}
"""


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def example(name):
    return str(EXAMPLES / f"{name}.hir")


def random_inputs(rng, program, params, dtype=np.float32):
    """Uniform values in [-1, 1) of every input's global shape."""
    return {name: rng.uniform(-1.0, 1.0, size=t.shape).astype(dtype)
            for name, t in ((t.name, t) for t in program.tensors(params) if t.is_input)}


def assert_close_f32(actual, expected, contraction):
    """float32 results of sums over `contraction` products of values in [-1, 1)."""
    assert actual.dtype == np.float32
    assert actual.shape == expected.shape
    scale = np.sqrt(contraction)
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5 * scale)
