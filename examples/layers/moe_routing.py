#!/usr/bin/python3
"""Router decisions for examples/layers/moe_expert_parallel.hir, as .npy inputs.

hostir has no top-k operation, so the layer takes the router's decisions as
inputs, already bucketed. This script plays the router: every token picks
--top-k distinct experts at random, with softmax weights of random logits,
and is put into the next free slot of each expert's bucket; a token that
finds a bucket full is dropped for that expert (capacity-factor routing),
and a slot nobody fills holds -1. It writes

  idx  i32 [S * X, C]     rank r's columns r * C / world ... of row i * X + e:
                          the rows, within r's token chunk i, of the tokens
                          r sends to expert e (-1: an empty slot)
  cw   f32 [S * X, C, 1]  the combine weight of each slot (0 where empty)

for the parameters the program is run with (its declared defaults, then
--set) and the team size --ranks:

  /usr/bin/python3 examples/layers/moe_routing.py --ranks 2 --set T=64 --set C=8
  hostir run examples/layers/moe_expert_parallel.hir --ranks 2 --set T=64 --set C=8 \\
      --input idx=idx.npy --input cw=cw.npy --fill-missing --check
"""
import argparse
import pathlib
import re

import numpy as np

PROGRAM = pathlib.Path(__file__).resolve().with_name("moe_expert_parallel.hir")


def declared_parameters():
    """The program's parameters and their defaults, from its `program name(A = 1, ...)` line."""
    header = re.search(r"program\s+\w+\s*\(([^)]*)\)", PROGRAM.read_text())
    return {name: int(value) for name, value in re.findall(r"(\w+)\s*=\s*(\d+)", header.group(1))}


def route(rng, params, ranks, top_k):
    """idx [S * X, C] and cw [S * X, C, 1] as the program reads them."""
    t, x, c, s = params["T"], params["X"], params["C"], params["S"]
    local, slots = t // ranks, c // ranks
    chunk = -(-local // s)  # shard_by_stream's chunk size
    idx = np.full((s * x, c), -1, dtype=np.int32)
    cw = np.zeros((s * x, c, 1), dtype=np.float32)
    for r in range(ranks):
        for i in range(s):
            filled = np.zeros(x, dtype=int)
            for row in range(max(0, min(chunk, local - i * chunk))):
                logits = rng.normal(size=top_k)
                weights = np.exp(logits) / np.exp(logits).sum()
                for e, weight in zip(rng.choice(x, size=top_k, replace=False), weights):
                    if filled[e] < slots:
                        idx[i * x + e, r * slots + filled[e]] = row
                        cw[i * x + e, r * slots + filled[e], 0] = weight
                        filled[e] += 1
    return idx, cw


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=1, help="team size the layer runs on (default 1)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=INT",
                        help="a parameter of the program, as hostir's --set (repeatable)")
    parser.add_argument("--top-k", type=int, default=2, help="experts per token (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--idx", default="idx.npy", help="where to write idx (default idx.npy)")
    parser.add_argument("--cw", default="cw.npy", help="where to write cw (default cw.npy)")
    args = parser.parse_args()
    params = declared_parameters()
    for setting in args.set:
        name, _, value = setting.partition("=")
        if name not in params or not value.isdigit():
            parser.error(f"--set {setting}: expected NAME=INT with NAME one of {', '.join(params)}")
        params[name] = int(value)
    for name in ("T", "X", "C"):
        if params[name] % args.ranks:
            parser.error(f"{name}={params[name]} does not divide over {args.ranks} ranks")
    if not 1 <= args.top_k <= params["X"]:
        parser.error(f"--top-k must be between 1 and X={params['X']}")
    idx, cw = route(np.random.default_rng(args.seed), params, args.ranks, args.top_k)
    np.save(args.idx, idx)
    np.save(args.cw, cw)
    kept = int((idx >= 0).sum())
    print(f"routed: {kept} of {params['T'] * args.top_k} token-expert pairs kept, "
          f"{idx.size - kept} of {idx.size} slots empty")


if __name__ == "__main__":
    main()
