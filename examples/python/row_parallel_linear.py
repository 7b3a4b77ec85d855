"""Runs examples/row_parallel_linear.hir from Python on 2 in-process ranks,
compares it with NumPy and prints what the cost model predicts on an
H100 NVLink machine.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/row_parallel_linear.py
"""
import pathlib

import numpy as np

import hostir

program = hostir.parse(str(pathlib.Path(__file__).resolve().parents[1] / "row_parallel_linear.hir"))
params = {"M": 64, "K": 128, "N": 32, "S": 4}
shapes = {t.name: t.shape for t in program.tensors(params) if t.is_input}

rng = np.random.default_rng(0)
inputs = {name: rng.standard_normal(shape, dtype=np.float32) for name, shape in shapes.items()}
# Global tensors in and out: each rank gets its slice of K, y comes back whole.
y = hostir.run(program, inputs, ranks=2, params=params, passes=("assign-streams",))["y"]

expected = inputs["x"].astype(np.float64) @ inputs["w"].astype(np.float64).T
error = np.max(np.abs(y - expected))
print(f"{program.name}: y {y.shape} {y.dtype}, max |y - x @ w.T| = {error:.2e}")
assert np.allclose(y, expected, rtol=1e-4, atol=1e-3)

figures = hostir.simulate(program, "h100-nvlink", ranks=2, params=params, passes=("assign-streams",))
print("predicted on h100-nvlink:", " ".join(f"{key}={value:.4f}" for key, value in figures.items()))
