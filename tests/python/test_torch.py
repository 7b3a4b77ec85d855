# hostir.torch: a compiled program as a torch.library operator, inside an
# nn.Module, with a Meta kernel that gives the output shapes from the
# program's declarations, and (with PyTorch 2) one opaque node under
# torch.compile.
import numpy as np
import pytest

import hostir

torch = pytest.importorskip("torch", reason="PyTorch (python3-torch) is not installed")
import hostir.torch  # noqa: E402  (needs torch)

# y = x @ w.T, summed over the ranks; and its row sums as a second output.
LINEAR = """program linear_two(M = 8, K = 16, N = 4) {
  input  x : f32[M, K] shard(1)
  input  w : f32[N, K] shard(1)
  output y : f32[M, N]
  output z : f32[M, N]
  y = linear(x, w)
  c = allreduce(y, op=sum)
  wait(c)
  z = allocate(f32[M, N])
  add(y, y, out=z)
}
"""


class Linear(torch.nn.Module):
    """A layer whose forward is the program, through its operator."""

    def __init__(self, op, weight):
        super().__init__()
        self.op = op
        self.weight = torch.nn.Parameter(weight, requires_grad=False)

    def forward(self, x):
        y, z = self.op(x, self.weight)
        return torch.relu(y) + z


@pytest.fixture(scope="module")
def operator():
    exe = hostir.compile(LINEAR, ranks=2)
    yield hostir.torch.op(exe), exe
    exe.close()


def test_the_operator_runs_the_program_inside_a_module(operator):
    op, _ = operator
    rng = np.random.default_rng(3)
    x = torch.from_numpy(rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    w = torch.from_numpy(rng.uniform(-1, 1, (4, 16)).astype(np.float32))
    out = Linear(op, w)(x)
    y = x.double() @ w.double().T
    expected = torch.relu(y) + 2 * y
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    assert "hostir.linear_two_" in str(op)


def test_the_meta_kernel_gives_the_declared_shapes_without_running(operator):
    op, _ = operator
    y, z = op(torch.empty((8, 16), device="meta"), torch.empty((4, 16), device="meta"))
    assert y.device.type == "meta" and y.shape == (8, 4) and y.dtype == torch.float32
    assert z.shape == (8, 4)


def test_names_are_unique_identifiers():
    with hostir.compile(LINEAR) as exe:
        named = hostir.torch.op(exe, name="two_outputs")
        assert named is torch.ops.hostir.two_outputs
        with pytest.raises(hostir.Error, match="already defined"):
            hostir.torch.op(exe, name="two_outputs")
        with pytest.raises(hostir.Error, match="not an identifier"):
            hostir.torch.op(exe, name="two outputs")


@pytest.mark.skipif(not hasattr(torch, "compile"),
                    reason=f"torch.compile needs PyTorch 2; this is {torch.__version__}")
def test_torch_compile_keeps_the_operator_as_one_node(operator):
    op, _ = operator
    w = torch.ones((4, 16))
    module = Linear(op, w)
    x = torch.ones((8, 16))
    compiled = torch.compile(module, fullgraph=True)  # a graph break would raise
    np.testing.assert_allclose(compiled(x).numpy(), module(x).numpy())


def test_fake_tensors_trace_the_operator_without_running_it(operator):
    fake_tensor = pytest.importorskip("torch._subclasses.fake_tensor", reason="this PyTorch has no fake tensors")
    op, _ = operator
    with fake_tensor.FakeTensorMode():
        y, z = op(torch.empty((8, 16)), torch.empty((4, 16)))
    assert isinstance(y, fake_tensor.FakeTensor) and y.shape == (8, 4) and z.dtype == torch.float32
