"""What the caller's tensors cost per call of Executable.run, beside the
program's own time in the same call (RunResult.timings): NumPy arrays
against torch CPU tensors on examples/row_parallel_linear.hir (2 in-process
ranks, CPU backend), and inputs of 1, 16 and 256 MiB of which the program
reads 256 KiB, which it reads in place, so the overhead stays flat.

    PYTHONPATH=build/python /usr/bin/python3 bench/tensor_interop.py [--calls N]
"""
import argparse
import os
import statistics
import time

import numpy as np
import torch

import hostir

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "row_parallel_linear.hir")

# Reads one 256 KiB block of rows of x (16 rows of 4096 f32).
ONE_BLOCK = """program one_block(M = 16384, K = 4096) {
  input  x : f32[M, K]
  output y : f32[16, K]
  y = allocate(f32[16, K])
  block = shard_by_stream(x, axis=0, index=0, chunks=M / 16)
  copy(block, out=y)
}
"""


def overhead_us(exe, inputs):
    """One call's wall time less the program's own, in microseconds."""
    start = time.perf_counter()
    result = exe.run(inputs)
    return (time.perf_counter() - start) * 1e6 - result.timings[0] * 1e3


def paired(exe, numpy_inputs, torch_inputs, calls):
    """Medians of the NumPy and torch calls' overheads, and of their
    difference, call by call alternately, so that a drift of the machine
    hits both alike."""
    for _ in range(20):
        exe.run(numpy_inputs)
        exe.run(torch_inputs)
    numpy_us, torch_us = [], []
    for _ in range(calls):
        numpy_us.append(overhead_us(exe, numpy_inputs))
        torch_us.append(overhead_us(exe, torch_inputs))
    difference = statistics.median(t - n for t, n in zip(torch_us, numpy_us))
    return (f"numpy_overhead_us={statistics.median(numpy_us):.1f} torch_overhead_us={statistics.median(torch_us):.1f} "
            f"torch_minus_numpy_us={difference:.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    arrays = {"x": rng.standard_normal((256, 512)).astype(np.float32),
              "w": rng.standard_normal((128, 512)).astype(np.float32)}
    tensors = {name: torch.from_numpy(array.copy()) for name, array in arrays.items()}
    with hostir.compile(EXAMPLE, ranks=2, backend="cpu") as exe:
        print("row_parallel_linear:", paired(exe, arrays, tensors, args.calls))
    for mib in (1, 16, 256):
        rows = mib * (1 << 20) // (4096 * 4)
        x = torch.ones((rows, 4096))
        with hostir.compile(ONE_BLOCK, params={"M": rows}, backend="cpu") as exe:
            print(f"input {mib} MiB, 256 KiB read:", paired(exe, {"x": x.numpy()}, {"x": x}, args.calls))

if __name__ == "__main__":
    main()
