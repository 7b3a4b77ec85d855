# f64, f16 and bf16 through hostir.run, on inline programs: a row-parallel
# linear (the allreduce sums per-rank partial products) and a plain copy,
# which shows exactly how inputs are rounded.
import numpy as np
import pytest

import hostir
from conftest import LINEAR

COPY = """program copy_{dt}(N = 8) {{
  input  x : {dt}[N]
  output y : {dt}[N]
  y = allocate({dt}[N])
  copy(x, out=y)
}}
"""


def bf16_values(rng, shape):
    """Random values that bf16 holds exactly (8 significant bits)."""
    return np.round(rng.uniform(-1.0, 1.0, size=shape) * 128) / 128


@pytest.mark.parametrize("ranks", (1, 2, 4))
def test_f64_linear(rng, ranks):
    x, w = rng.uniform(-1, 1, (8, 16)), rng.uniform(-1, 1, (4, 16))
    y = hostir.run(LINEAR.format(dt="f64"), {"x": x, "w": w}, ranks=ranks)["y"]
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, x @ w.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("ranks", (1, 2))
def test_f16_linear(rng, ranks):
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float16)
    w = rng.uniform(-1, 1, (4, 16)).astype(np.float16)
    y = hostir.run(LINEAR.format(dt="f16"), {"x": x, "w": w}, ranks=ranks, copy_inputs=True)["y"]
    assert y.dtype == np.float16
    expected = x.astype(np.float64) @ w.astype(np.float64).T
    # Partial sums rounded to f16 on every rank, then summed in f16.
    np.testing.assert_allclose(y.astype(np.float64), expected, rtol=1e-2, atol=1e-2)


def test_f16_inputs_are_converted_from_float32(rng):
    x = rng.uniform(-4, 4, 8).astype(np.float32)
    y = hostir.run(COPY.format(dt="f16"), {"x": x}, copy_inputs=True)["y"]
    np.testing.assert_array_equal(y, x.astype(np.float16))


@pytest.mark.parametrize("ranks", (1, 2))
def test_bf16_linear_returns_float32_holding_bf16_values(rng, ranks):
    x, w = bf16_values(rng, (8, 16)), bf16_values(rng, (4, 16))
    y = hostir.run(LINEAR.format(dt="bf16"), {"x": x, "w": w}, ranks=ranks, copy_inputs=True)["y"]
    assert y.dtype == np.float32
    # Every value is a bf16: its low 16 bits are zero.
    assert not np.any(y.view(np.uint32) & 0xFFFF)
    np.testing.assert_allclose(y.astype(np.float64), x @ w.T, rtol=2e-2, atol=2e-2)


def test_bf16_inputs_round_to_nearest_even():
    one = 1.0
    step = 2.0**-7  # bf16's spacing in [1, 2)
    x = np.array([
        one,
        one + step / 2,  # a tie between 1 (even) and 1 + step: to 1
        one + 3 * step / 2,  # a tie between 1 + step and 1 + 2 step (even): up
        one + step / 2 + 2.0**-40,  # just above the tie: up, even from float64
        -(one + step / 4),  # below half a step: down in magnitude
        np.inf,
        3.5e38,  # beyond bf16's largest finite (about 3.39e38): infinity
        np.nan,
    ])
    y = hostir.run(COPY.format(dt="bf16"), {"x": x}, copy_inputs=True)["y"]
    expected = np.array([one, one, one + 2 * step, one + step, -one, np.inf, np.inf, np.nan], dtype=np.float32)
    np.testing.assert_array_equal(y, expected)


def test_bf16_from_float32_inputs_by_bit_pattern():
    # float32 bits -> the bf16 bits expected (the upper half, rounded).
    cases = [
        (0x3F808000, 0x3F80),  # 1 + 2^-8, a tie: to even 1
        (0x3F818000, 0x3F82),  # 1 + 3 * 2^-8, a tie: to even, up
        (0x3F808001, 0x3F81),  # just above the tie: up
        (0xC0200000, 0xC020),  # -2.5, exact
        (0x000116C2, 0x0001),  # a subnormal, rounded like any other value
        (0x80000001, 0x8000),  # the smallest negative subnormal: -0
        (0x7F7FFFFF, 0x7F80),  # float32's largest: bf16 infinity
        (0x7FC00001, 0x7FC0),  # a NaN stays a quiet NaN
    ]
    bits = np.array([c[0] for c in cases], dtype=np.uint32)
    program = COPY.format(dt="bf16").replace("N = 8", f"N = {len(cases)}")
    y = hostir.run(program, {"x": bits.view(np.float32)}, copy_inputs=True)["y"]
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y.view(np.uint32) >> 16, [c[1] for c in cases])
