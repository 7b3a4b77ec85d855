"""Runs examples/row_parallel_linear.hir from Python as one rank of an MPI
job: every rank of the job compiles the program with launcher="mpi" and
runs it with the same global inputs; every rank gets its copy of the
replicated y back, and rank 0 compares it with NumPy.

    PYTHONPATH=build/python mpirun -np 2 /usr/bin/python3 examples/python/mpi_team.py
"""
import pathlib

import numpy as np

import hostir

program = hostir.parse(str(pathlib.Path(__file__).resolve().parents[1] / "row_parallel_linear.hir"))
rng = np.random.default_rng(0)  # the same inputs on every rank
x = rng.standard_normal((256, 512)).astype(np.float32)
w = rng.standard_normal((128, 512)).astype(np.float32)

with hostir.compile(program, passes=["pipeline"], launcher="mpi") as exe:
    for step in range(10):
        result = exe.run({"x": x, "w": w})  # collective: every rank calls it
if exe.rank == 0:
    ok = np.allclose(result["y"], x.astype(np.float64) @ w.astype(np.float64).T, rtol=1e-4, atol=1e-3)
    print(f"rank 0: y {result['y'].shape} matches NumPy: {ok}")
