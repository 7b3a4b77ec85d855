"""What an embedding loop pays per step, side by side in one run: the
program's own time (the median of `repeat=300` timed runs, what `hostir run
--repeat` reports), `exe.run` of a compiled executable, and `hostir.run`,
which compiles every call. examples/row_parallel_linear.hir at its defaults
on 2 in-process ranks, CPU backend.

    PYTHONPATH=build/python python3 bench/executable_overhead.py [--calls N]
"""
import argparse
import os
import statistics
import time

import numpy as np

import hostir

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "row_parallel_linear.hir")


def median_call_us(call, calls):
    for _ in range(min(50, calls)):
        call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    program = hostir.parse(EXAMPLE)
    rng = np.random.default_rng(0)
    inputs = {"x": rng.standard_normal((256, 512)).astype(np.float32),
              "w": rng.standard_normal((128, 512)).astype(np.float32)}
    timed = hostir.run(program, inputs, ranks=2, backend="cpu", warmup=20, repeat=300)
    program_us = statistics.median(timed.timings) * 1e3
    with hostir.compile(program, ranks=2, backend="cpu") as exe:
        exe_us = median_call_us(lambda: exe.run(inputs), args.calls)
    run_us = median_call_us(lambda: hostir.run(program, inputs, ranks=2, backend="cpu"), max(50, args.calls // 10))
    print(f"program_us={program_us:.1f} exe_run_us={exe_us:.1f} exe_overhead_us={exe_us - program_us:.1f} "
          f"hostir_run_us={run_us:.1f} hostir_run_overhead_us={run_us - program_us:.1f}")


if __name__ == "__main__":
    main()
