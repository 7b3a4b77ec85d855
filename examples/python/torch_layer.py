"""A PyTorch module whose forward is the tensor-parallel SwiGLU MLP of
examples/layers/swiglu_mlp.hir, run by hostir through hostir.torch on the
ranks of an MPI job, and checked on every rank against PyTorch's own
computation of the same layer.

    PYTHONPATH=build/python mpirun -np 2 /usr/bin/python3 examples/python/torch_layer.py

Every rank builds the same module (the same weights) and calls it on the
same tokens; hostir gives each rank its shard of the weights, pipelines the
chunks' allreduces behind the next chunk's GEMMs, and returns y, which is
replicated, on every rank.
"""
import pathlib

import torch

import hostir
import hostir.torch

PROGRAM = pathlib.Path(__file__).resolve().parents[1] / "layers" / "swiglu_mlp.hir"


class SwiGLU(torch.nn.Module):
    """y = (silu(x @ wg^T) * (x @ wu^T)) @ wd^T, split over the job's ranks."""

    def __init__(self, tokens, hidden, ffn, chunks=4):
        super().__init__()
        seeded = torch.Generator().manual_seed(0)  # the same weights on every rank
        self.wg = torch.nn.Parameter(torch.randn(ffn, hidden, generator=seeded) / hidden**0.5, requires_grad=False)
        self.wu = torch.nn.Parameter(torch.randn(ffn, hidden, generator=seeded) / hidden**0.5, requires_grad=False)
        self.wd = torch.nn.Parameter(torch.randn(hidden, ffn, generator=seeded) / ffn**0.5, requires_grad=False)
        params = {"T": tokens, "H": hidden, "F": ffn, "S": chunks}
        self.executable = hostir.compile(str(PROGRAM), params=params, passes=["pipeline"], launcher="mpi")
        self.mlp = hostir.torch.op(self.executable)  # torch.ops.hostir.swiglu_mlp_0

    def forward(self, x):
        return self.mlp(x, self.wg, self.wu, self.wd)

    def reference(self, x):
        """The same layer in PyTorch, in float64."""
        x, wg, wu, wd = (t.double() for t in (x, self.wg, self.wu, self.wd))
        return (torch.nn.functional.silu(x @ wg.T) * (x @ wu.T)) @ wd.T


layer = SwiGLU(tokens=64, hidden=128, ffn=512)
x = torch.randn(64, 128, generator=torch.Generator().manual_seed(1))
with torch.no_grad():
    for step in range(3):
        y = layer(x)  # collective: every rank calls it
error = (y.double() - layer.reference(x)).abs().max().item()
assert isinstance(y, torch.Tensor) and error < 1e-4, error
if layer.executable.rank == 0:
    print(f"y {tuple(y.shape)} {y.dtype} on every rank, within 1e-4 of torch")
