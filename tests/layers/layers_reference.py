"""The layers of examples/layers/ written independently in NumPy float64.

Each layer's formula is computed on global tensors, the way a model author
states it, without the program's sharding or chunking. Inputs are drawn so
that activations stay of order one (weights scaled by 1/sqrt(fan-in)); the
MoE routing is drawn per token (top-k experts, softmax weights) and then
bucketed into the capacity slots the program reads, dropping the tokens
that overflow a bucket.
"""
import math

import numpy as np

RMS_EPS = 1e-5


def silu(z):
    return z / (1.0 + np.exp(-z))


def rms_norm(x, w, eps=RMS_EPS):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def attention(q, k, v, heads, kv_heads, causal):
    """Causal grouped-query attention on the whole sequence, head by head."""
    tq, tk = q.shape[0], k.shape[0]
    d = q.shape[1] // heads
    out = np.zeros_like(q)
    visible = np.tril(np.ones((tq, tk), dtype=bool)) if causal else np.ones((tq, tk), dtype=bool)
    for h in range(heads):
        g = h * kv_heads // heads
        qh, kh, vh = q[:, h * d:(h + 1) * d], k[:, g * d:(g + 1) * d], v[:, g * d:(g + 1) * d]
        scores = np.where(visible, qh @ kh.T / math.sqrt(d), -np.inf)
        scores -= scores.max(axis=1, keepdims=True)
        p = np.exp(scores)
        out[:, h * d:(h + 1) * d] = (p / p.sum(axis=1, keepdims=True)) @ vh
    return out


def swiglu(x, wg, wu, wd):
    """Linear-layer convention: weights are [out, in]."""
    return (silu(x @ wg.T) * (x @ wu.T)) @ wd.T


def f64(inputs):
    return {name: value.astype(np.float64) for name, value in inputs.items()}


# The layers: global inputs -> {output name: expected float64 array}.

def swiglu_mlp(i):
    i = f64(i)
    return {"y": swiglu(i["x"], i["wg"], i["wu"], i["wd"])}


def attention_block(x, norm, wq, wk, wv, wo, heads, kv_heads):
    xn = rms_norm(x, norm)
    return x + attention(xn @ wq.T, xn @ wk.T, xn @ wv.T, heads, kv_heads, causal=True) @ wo.T


def gqa_attention(i, p):
    i = f64(i)
    return {"y": attention_block(i["x"], i["norm"], i["wq"], i["wk"], i["wv"], i["wo"], p["H"], p["G"])}


def transformer_layer(i, p):
    i = f64(i)
    h = attention_block(i["x"], i["attn_norm"], i["wq"], i["wk"], i["wv"], i["wo"], p["H"], p["G"])
    return {"y": h + swiglu(rms_norm(h, i["mlp_norm"]), i["wg"], i["wu"], i["wd"])}


def ring_attention(i, p):
    i = f64(i)
    return {"o": attention(i["q"], i["k"], i["v"], p["H"], p["G"], causal=True)}


def sequence_parallel_mlp(i):
    i = f64(i)
    return {"y": swiglu(i["x"], i["wg"], i["wu"], i["wd"])}


def fsdp_linear_backward(i):
    i = f64(i)
    return {"dx": i["dy"] @ i["w"], "dw": i["dy"].T @ i["x"]}


def gelu(z):
    """The erf form, as hostir's gelu."""
    return 0.5 * z * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


def fsdp_parts(w, axis, dp, tp):
    """hsdp_mlp's layout of W along its split axis: block d * tp + c (rank (d, c)'s) is part d of tp slice c."""
    parts = [np.split(piece, dp, axis=axis) for piece in np.split(w, tp, axis=axis)]  # parts[c][d]
    return np.concatenate([parts[c][d] for d in range(dp) for c in range(tp)], axis=axis)


def fsdp_whole(blocks, axis, dp, tp):
    """W from its hsdp_mlp layout: the inverse of fsdp_parts."""
    split = np.split(blocks, dp * tp, axis=axis)  # split[d * tp + c]
    return np.concatenate([split[d * tp + c] for c in range(tp) for d in range(dp)], axis=axis)


def hsdp_mlp(i, p, world):
    """y = gelu(x W1^T) W2^T and dW2 = dy^T gelu(x W1^T) over every token, in the weights' FSDP layout."""
    i = f64(i)
    tp = p["TP"]
    dp = world // tp
    w1, w2 = fsdp_whole(i["w1"], 0, dp, tp), fsdp_whole(i["w2"], 1, dp, tp)
    h = gelu(i["x"] @ w1.T)
    return {"y": h @ w2.T, "dw2": fsdp_parts(i["dy"].T @ h, 1, dp, tp)}


def relu_mlp_backward(i):
    """Gradients of y = relu(x w1^T) w2^T given dy, the weights' summed over every row."""
    i = f64(i)
    h = i["x"] @ i["w1"].T
    dh = np.where(h > 0, i["dy"] @ i["w2"], 0.0)
    return {"dx": dh @ i["w1"], "dw1": dh.T @ i["x"], "dw2": i["dy"].T @ np.maximum(h, 0.0)}


def rope(i, p):
    """Rotate-half RoPE per head: [x1, x2] -> [x1 cos - x2 sin, x2 cos + x1 sin]."""
    d = p["D"]
    x = i["x"].astype(np.float64).reshape(p["T"], p["H"], d)
    angles = np.arange(p["T"])[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    return {"y": np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1).reshape(p["T"], -1)}


def moe_expert_parallel(i, assignments):
    """y[t] = sum of p * SwiGLU_e(x[t]) over the (token t, expert e, weight p) kept by the router."""
    i = f64(i)
    y = np.zeros_like(i["x"])
    for token, expert, weight in assignments:
        z = i["x"][token]
        y[token] += weight * ((silu(z @ i["wg"][expert]) * (z @ i["wu"][expert])) @ i["wd"][expert])
    return {"y": y}


def moe_routing(rng, params, world, top_k=2):
    """Routes every token to top_k experts and buckets them as the program reads them.

    Returns (idx, cw, assignments): idx int32 [S * X, world * C / n] and cw
    float32 [S * X, world * C / n, 1] (n: the ranks an expert serves, EP or
    world), where rank r's columns r * C / n ... of row i * X + e
    hold the rows, within r's token chunk i, of the tokens it sends to
    expert e (-1 for an empty slot) and their combine weights; assignments
    lists the kept (global token, expert, weight), weights as float32 values.
    """
    t, x, c, s = params["T"], params["X"], params["C"], params["S"]
    # Each expert takes C tokens from the ranks it serves: the whole team, or its ep group (moe_ep_dp).
    local, slots = t // world, c // params.get("EP", world)
    chunk = -(-local // s)
    idx = np.full((s * x, world * slots), -1, dtype=np.int32)
    cw = np.zeros((s * x, world * slots, 1), dtype=np.float32)
    assignments = []
    for r in range(world):
        for i in range(s):
            filled = np.zeros(x, dtype=int)
            for row in range(max(0, min(chunk, local - i * chunk))):
                experts = rng.choice(x, size=top_k, replace=False)
                logits = rng.normal(size=top_k)
                weights = (np.exp(logits) / np.exp(logits).sum()).astype(np.float32)
                for e, weight in zip(experts, weights):
                    if filled[e] == slots:
                        continue  # the bucket is full: the token is dropped for this expert
                    column = r * slots + filled[e]
                    idx[i * x + e, column] = row
                    cw[i * x + e, column, 0] = weight
                    filled[e] += 1
                    assignments.append((r * local + i * chunk + row, int(e), float(weight)))
    return idx, cw, assignments


def moe_router(x, wr, params, world):
    """The (global token, expert, weight) moe_routed.hir keeps, routing as it does.

    Per rank and chunk of its tokens: the top K of each token's logits
    (ties to the lower expert), the softmax of those K as weights, and per
    expert at most C / world (token, choice) pairs in token order.
    """
    x, wr = x.astype(np.float64), wr.astype(np.float64)
    t, experts, c, s, k = params["T"], params["X"], params["C"], params["S"], params["K"]
    local, slots = t // world, c // world
    chunk = -(-local // s)
    assignments = []
    for r in range(world):
        for i in range(s):
            filled = np.zeros(experts, dtype=int)
            for row in range(max(0, min(chunk, local - i * chunk))):
                token = r * local + i * chunk + row
                logits = wr @ x[token]
                top = np.argsort(-logits, kind="stable")[:k]
                weights = np.exp(logits[top] - logits[top].max())
                weights /= weights.sum()
                for e, weight in zip(top, weights):
                    if filled[e] < slots:
                        filled[e] += 1
                        assignments.append((token, int(e), float(weight)))
    return assignments


def weights(rng, shape, fan_in):
    return (rng.uniform(-1.0, 1.0, size=shape) / math.sqrt(fan_in)).astype(np.float32)


def activations(rng, shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def norm_weights(rng, shape):
    return rng.uniform(0.5, 1.5, size=shape).astype(np.float32)


def layer_inputs(name, rng, p, world):
    """Global inputs of a layer; for the MoE layer also the router's assignments."""
    if name in ("swiglu_mlp", "sequence_parallel_mlp"):
        t, h, f = p["T"], p["H"], p["F"]
        return {"x": activations(rng, (t, h)), "wg": weights(rng, (f, h), h), "wu": weights(rng, (f, h), h),
                "wd": weights(rng, (h, f), f)}, None
    if name in ("gqa_attention", "transformer_layer"):
        t, e, hd, gd = p["T"], p["E"], p["H"] * p["D"], p["G"] * p["D"]
        norm = "norm" if name == "gqa_attention" else "attn_norm"
        i = {"x": activations(rng, (t, e)), norm: norm_weights(rng, (e,)), "wq": weights(rng, (hd, e), e),
             "wk": weights(rng, (gd, e), e), "wv": weights(rng, (gd, e), e), "wo": weights(rng, (e, hd), hd)}
        if name == "transformer_layer":
            f = p["F"]
            i.update({"mlp_norm": norm_weights(rng, (e,)), "wg": weights(rng, (f, e), e),
                      "wu": weights(rng, (f, e), e), "wd": weights(rng, (e, f), f)})
        return i, None
    if name == "ring_attention":
        t, hd, gd = p["T"], p["H"] * p["D"], p["G"] * p["D"]
        return {"q": activations(rng, (t, hd)), "k": activations(rng, (t, gd)), "v": activations(rng, (t, gd))}, None
    if name == "fsdp_linear_backward":
        t, k, n = p["T"], p["K"], p["N"]
        return {"x": activations(rng, (t, k)), "dy": activations(rng, (t, n)), "w": weights(rng, (n, k), k)}, None
    if name == "rope":
        return {"x": activations(rng, (p["T"], p["H"] * p["D"]))}, None
    if name == "relu_mlp_backward":
        t, k, f, n = p["T"], p["K"], p["F"], p["N"]
        return {"x": activations(rng, (t, k)), "dy": activations(rng, (t, n)), "w1": weights(rng, (f, k), k),
                "w2": weights(rng, (n, f), f)}, None
    if name == "hsdp_mlp":
        t, h, f, tp = p["T"], p["H"], p["F"], p["TP"]
        dp = world // tp
        return {"x": activations(rng, (t, h)), "dy": activations(rng, (t, h)),
                "w1": fsdp_parts(weights(rng, (f, h), h), 0, dp, tp),
                "w2": fsdp_parts(weights(rng, (h, f), f), 1, dp, tp)}, world
    if name == "moe_routed":
        t, e, f, x = p["T"], p["E"], p["F"], p["X"]
        i = {"x": activations(rng, (t, e)), "wr": weights(rng, (x, e), e), "wg": weights(rng, (x, e, f), e),
             "wu": weights(rng, (x, e, f), e), "wd": weights(rng, (x, f, e), f)}
        return i, moe_router(i["x"], i["wr"], p, world)
    if name in ("moe_expert_parallel", "moe_ep_dp"):
        t, e, f, x = p["T"], p["E"], p["F"], p["X"]
        idx, cw, assignments = moe_routing(rng, p, world)
        return {"x": activations(rng, (t, e)), "idx": idx, "cw": cw, "wg": weights(rng, (x, e, f), e),
                "wu": weights(rng, (x, e, f), e), "wd": weights(rng, (x, f, e), f)}, assignments
    raise ValueError(name)


def layer_reference(name, inputs, p, assignments=None):
    if name == "swiglu_mlp":
        return swiglu_mlp(inputs)
    if name == "gqa_attention":
        return gqa_attention(inputs, p)
    if name == "transformer_layer":
        return transformer_layer(inputs, p)
    if name == "ring_attention":
        return ring_attention(inputs, p)
    if name == "fsdp_linear_backward":
        return fsdp_linear_backward(inputs)
    if name == "sequence_parallel_mlp":
        return sequence_parallel_mlp(inputs)
    if name == "rope":
        return rope(inputs, p)
    if name in ("moe_expert_parallel", "moe_routed", "moe_ep_dp"):
        return moe_expert_parallel(inputs, assignments)
    if name == "relu_mlp_backward":
        return relu_mlp_backward(inputs)
    if name == "hsdp_mlp":
        return hsdp_mlp(inputs, p, assignments)  # its layout's world
    raise ValueError(name)
