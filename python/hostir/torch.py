"""hostir.torch: a compiled program as a PyTorch operator.

    import torch, hostir, hostir.torch
    exe = hostir.compile("examples/layers/tensor_parallel_mlp.hir", ranks=2)
    mlp = hostir.torch.op(exe)            # torch.ops.hostir.<name>
    y = mlp(x, w_gate, w_up, w_down)     # the inputs in declaration order

The operator is defined with torch.library: its schema takes the program's
inputs, in the order the program declares them, and returns its outputs
(one tensor, or a tuple). Its CPU kernel runs the executable on the
caller's tensors, which it reads in place (hostir.run's rules: the
declared dtype, C-contiguous; else hostir.Error) and returns new tensors.
Its Meta kernel (what fake tensors and torch.compile trace) gives every
output's shape and dtype from the program's declarations, without running
anything, so torch.compile keeps the operator as one opaque node.
"""

import itertools
import re

import torch

from . import _tensors
from ._errors import _usage

# Every operator hostir defines lives in this namespace: torch.ops.hostir.NAME.
_LIBRARY = torch.library.Library("hostir", "DEF")
_NAMES = set()
_SERIAL = itertools.count()
_NEEDS_AUTOGRAD_META = int(torch.__version__.split(".")[0]) < 2


def op(executable, name=None):
    """Defines `torch.ops.hostir.NAME` for the executable (from
    hostir.compile) and returns it. NAME is `name`, or the program's name
    with a number that makes it unique. The executable must outlive the
    operator's calls; an operator cannot be undefined, so make one per
    executable, not one per call."""
    inputs = [t for t in executable.tensors if t.is_input]
    outputs = [t for t in executable.tensors if not t.is_input]
    if not outputs:
        raise _usage("hostir.torch.op: the program has no output, and a torch operator returns one")
    name = _unique_name(name, executable)
    returns = "Tensor" if len(outputs) == 1 else "(" + ", ".join("Tensor" for _ in outputs) + ")"
    _LIBRARY.define(f"{name}({', '.join('Tensor ' + t.name for t in inputs)}) -> {returns}")

    def run(*tensors):
        result = executable.run(dict(zip((t.name for t in inputs), tensors)))
        values = tuple(result[t.name] for t in outputs)
        return values[0] if len(values) == 1 else values

    def shapes(*tensors):
        device = tensors[0].device if tensors else torch.device("meta")
        values = tuple(torch.empty(t.shape, dtype=_tensors._torch_dtype(t.dtype), device=device) for t in outputs)
        return values[0] if len(values) == 1 else values

    _LIBRARY.impl(name, run, "CPU")
    _LIBRARY.impl(name, shapes, "Meta")
    # The operator has no derivative: meta tensors skip autograd as CPU ones
    # do (PyTorch before 2 has no fallthrough for them).
    if _NEEDS_AUTOGRAD_META:
        _LIBRARY.impl(name, shapes, "AutogradMeta")
    _NAMES.add(name)
    return getattr(torch.ops.hostir, name)


def _unique_name(name, executable):
    if name is None:
        base = re.sub(r"\W", "_", executable.program_name) or "program"
        name = f"{base}_{next(_SERIAL)}"
        while name in _NAMES:
            name = f"{base}_{next(_SERIAL)}"
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        raise _usage(f"hostir.torch.op: name '{name}' is not an identifier")
    if name in _NAMES:
        raise _usage(f"hostir.torch.op: torch.ops.hostir.{name} is already defined")
    return name
