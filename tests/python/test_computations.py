# The computations of the language against NumPy through hostir.run: i32
# index arrays in and out, gather_rows/scatter_add_rows, softmax, rms_norm,
# gelu, broadcasting, and attention (causal, grouped-query, lse).
import math

import numpy as np
import pytest

import hostir

GATHER = """program gather(R = 6, N = 8, D = 4) {
  input  x : f32[R, D]
  input  idx : i32[N] shard(0)
  output y : f32[N, D] shard(0)
  output z : f32[R, D]
  output same : i32[N] shard(0)
  y = gather_rows(x, idx)
  z = allocate(f32[R, D], zero=true)
  scatter_add_rows(y, idx, out=z)
  h = allreduce(z, op=sum)
  wait(h)
  same = copy(idx)
}
"""

ROWS = """program rows(M = 6, N = 10) {
  input  x : f32[M, N] shard(0)
  input  w : f32[N]
  input  b : f32[M, 1] shard(0)
  output p : f32[M, N] shard(0)
  output r : f32[M, N] shard(0)
  output g : f32[M, N] shard(0)
  output s : f32[M, N] shard(0)
  p = softmax(x)
  r = rms_norm(x, w, eps=1e-5)
  g = gelu(x)
  s = sub(x, b)
}
"""

ATTENTION = """program attn(T = 8, S = 12, H = 4, G = 2, D = 8, P = 6) {
  input  q : f32[T, H * D]
  input  k : f32[S, G * D]
  input  v : f32[S, G * D]
  output o : f32[T, H * D]
  output lse : f32[T, H]
  lse = allocate(f32[T, H])
  o = attention(q, k, v, heads=H, kv_heads=G, causal=true, q_offset=P, k_offset=2, lse=lse)
}
"""


def reference_scatter(rows, src, idx):
    out = np.zeros((rows, src.shape[1]))
    for p, i in enumerate(idx):
        if i >= 0:
            out[i] += src[p]
    return out


@pytest.mark.parametrize("ranks", (1, 2))
def test_gather_and_scatter_take_and_return_int32(rng, ranks):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([5, -1, 0, 5, 2, -1, 3, 0], dtype=np.int32)
    out = hostir.run(GATHER, {"x": x, "idx": idx}, ranks=ranks)
    gathered = np.where((idx >= 0)[:, None], x[idx], 0)
    np.testing.assert_array_equal(out["y"], gathered)
    np.testing.assert_allclose(out["z"], reference_scatter(6, gathered, idx), rtol=1e-6, atol=1e-6)
    assert out["same"].dtype == np.int32
    np.testing.assert_array_equal(out["same"], idx)


def test_index_inputs_accept_other_integer_arrays_and_refuse_floats(rng):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([0, 1, 2, 3, 4, 5, -1, 0], dtype=np.int64)
    out = hostir.run(GATHER, {"x": x, "idx": idx}, copy_inputs=True)
    np.testing.assert_array_equal(out["same"], idx.astype(np.int32))
    with pytest.raises(hostir.Error, match="i32 \\(indices\\): expected an integer array"):
        hostir.run(GATHER, {"x": x, "idx": idx.astype(np.float32)}, copy_inputs=True)
    with pytest.raises(hostir.Error, match="within int32"):
        hostir.run(GATHER, {"x": x, "idx": idx * 2**40}, copy_inputs=True)


def test_seeded_indices_are_valid_rows():
    # A seeded i32 input holds -1 or a row below its first axis's extent (8 here).
    out = hostir.run(GATHER.replace("R = 6", "R = 8"), seed=3)
    assert out["same"].dtype == np.int32
    assert out["same"].min() >= -1 and out["same"].max() < 8


def test_an_index_out_of_range_raises_at_the_statement(rng):
    x = rng.standard_normal((6, 4)).astype(np.float32)
    idx = np.array([0, 1, 2, 3, 6, 0, 0, 0], dtype=np.int32)
    with pytest.raises(hostir.Error, match="index 6 of 'idx' is out of range for 'x' with 6 rows") as error:
        hostir.run(GATHER, {"x": x, "idx": idx}, ranks=2)
    assert error.value.line == 7


@pytest.mark.parametrize("ranks", (1, 2, 3))
def test_rows_and_broadcasting_match_numpy(rng, ranks):
    x = rng.standard_normal((6, 10)).astype(np.float32) * 3
    w = rng.standard_normal(10).astype(np.float32)
    b = rng.standard_normal((6, 1)).astype(np.float32)
    out = hostir.run(ROWS, {"x": x, "w": w, "b": b}, ranks=ranks)
    wide = x.astype(np.float64)
    shifted = np.exp(wide - wide.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out["p"], shifted / shifted.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    rms = np.sqrt((wide**2).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out["r"], wide / rms * w, rtol=1e-5, atol=1e-6)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(out["g"], wide * 0.5 * (1 + erf(wide / math.sqrt(2))), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["s"], x - b)


def test_causal_grouped_query_attention_matches_numpy(rng):
    T, S, H, G, D, P = 8, 12, 4, 2, 8, 6
    q, k, v = (rng.standard_normal(shape).astype(np.float32) for shape in ((T, H * D), (S, G * D), (S, G * D)))
    out = hostir.run(ATTENTION, {"q": q, "k": k, "v": v})
    expected = np.zeros((T, H * D))
    lse = np.full((T, H), -np.inf)
    for h in range(H):
        g = h * G // H
        scores = q[:, h * D:(h + 1) * D].astype(np.float64) @ k[:, g * D:(g + 1) * D].T / math.sqrt(D)
        seen = (2 + np.arange(S))[None, :] <= (P + np.arange(T))[:, None]
        scores = np.where(seen, scores, -np.inf)
        top = scores.max(axis=1, keepdims=True)
        weights = np.exp(scores - top)
        expected[:, h * D:(h + 1) * D] = weights / weights.sum(axis=1, keepdims=True) @ v[:, g * D:(g + 1) * D]
        lse[:, h] = (top + np.log(weights.sum(axis=1, keepdims=True)))[:, 0]
    np.testing.assert_allclose(out["o"], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["lse"], lse, rtol=1e-5, atol=1e-6)
