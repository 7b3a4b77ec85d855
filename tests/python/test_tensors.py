# The caller's tensors in and out without copies: NumPy arrays, torch
# tensors and any __dlpack__ object are read in place when their dtype and
# layout are the declared ones, outputs come back in the inputs' library,
# and out= writes into the caller's own tensors. "No copy" is shown by data
# pointers and by what was allocated (tracemalloc traces NumPy's memory, the
# run's peak memory counts hostir's), never by timing.
import collections.abc
import gc
import pathlib
import subprocess
import threading
import tracemalloc
import weakref

import numpy as np
import pytest

import conftest
import hostir
from conftest import LINEAR
from hostir import _tensors

torch = pytest.importorskip("torch", reason="PyTorch (python3-torch) is not installed")

# A large input: y is its rows' sums (w is ones).
SUM_ROWS = """program big(M = 4096, K = 4096, N = 1) {
  input  x : f32[M, K] shard(0)
  input  w : f32[N, K]
  output y : f32[M, N] shard(0)
  y = linear(x, w)
}
"""

MIB = 1 << 20


def linear(dt="f32"):
    return hostir.parse(LINEAR.format(dt=dt))


def expected_linear(x, w):
    return x.astype(np.float64) @ w.astype(np.float64).T


def test_a_numpy_input_of_the_declared_dtype_is_the_callers_memory(rng):
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    decl = linear().inputs["x"]
    assert _tensors.input_array(decl, x, copy_inputs=False) is x
    t = torch.from_numpy(x.copy())
    assert _tensors.as_array(_tensors.input_array(decl, t, copy_inputs=False)).ctypes.data == t.data_ptr()


def test_a_large_input_is_read_in_place(rng):
    # 64 MiB of x: neither Python nor the ranks copy it.
    x, w = np.ones((4096, 4096), np.float32), np.ones((1, 4096), np.float32)
    with hostir.compile(SUM_ROWS, ranks=2) as exe:
        exe.run({"x": x, "w": w})
        tracemalloc.start()
        result = exe.run({"x": x, "w": w})
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    np.testing.assert_array_equal(result["y"], np.full((4096, 1), 4096.0, np.float32))
    assert peak < MIB, peak  # y is 16 KiB
    assert result.peak_memory_bytes < MIB, result.peak_memory_bytes


@pytest.mark.parametrize("ranks", (1, 2))
def test_torch_in_torch_out(rng, ranks):
    x = torch.from_numpy(rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    w = torch.from_numpy(rng.uniform(-1, 1, (4, 16)).astype(np.float32))
    y = hostir.run(linear(), {"x": x, "w": w}, ranks=ranks)["y"]
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (8, 4)
    np.testing.assert_allclose(y.numpy(), expected_linear(x.numpy(), w.numpy()), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("ranks", (1, 2))
def test_bf16_tensors_in_and_out(rng, ranks):
    # Values bf16 holds exactly; products summed in f32 and rounded once to bf16.
    x = torch.from_numpy(np.round(rng.uniform(-1, 1, (8, 16)) * 64) / 64).to(torch.bfloat16)
    w = torch.from_numpy(np.round(rng.uniform(-1, 1, (4, 16)) * 64) / 64).to(torch.bfloat16)
    y = hostir.run(linear("bf16"), {"x": x, "w": w}, ranks=ranks)["y"]
    assert y.dtype == torch.bfloat16
    expected = (x.float() @ w.float().T).to(torch.bfloat16)
    np.testing.assert_allclose(y.float().numpy(), expected.float().numpy(), rtol=1e-2, atol=1e-2)


def test_f16_tensors_in_and_out(rng):
    x = torch.from_numpy(rng.uniform(-1, 1, (8, 16)).astype(np.float16))
    w = torch.from_numpy(rng.uniform(-1, 1, (4, 16)).astype(np.float16))
    y = hostir.run(linear("f16"), {"x": x, "w": w}, ranks=2)["y"]
    assert y.dtype == torch.float16
    np.testing.assert_allclose(y.float().numpy(), expected_linear(x.numpy(), w.numpy()), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("library", ("numpy", "torch"))
def test_out_writes_into_the_callers_tensor(rng, library):
    params = {"M": 1024, "K": 16, "N": 256}  # y is 1 MiB
    x = rng.uniform(-1, 1, (1024, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (256, 16)).astype(np.float32)
    if library == "torch":
        x, w, y = torch.from_numpy(x), torch.from_numpy(w), torch.full((1024, 256), float("nan"))
        pointer = y.data_ptr()
    else:
        y = np.full((1024, 256), np.nan, np.float32)
        pointer = y.ctypes.data
    with hostir.compile(linear(), ranks=2, params=params) as exe:
        exe.run({"x": x, "w": w}, out={"y": y})
        tracemalloc.start()
        result = exe.run({"x": x, "w": w}, out={"y": y})
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert result["y"] is y
    assert (y.data_ptr() if library == "torch" else y.ctypes.data) == pointer
    np.testing.assert_allclose(np.asarray(y), expected_linear(np.asarray(x), np.asarray(w)), rtol=1e-5, atol=1e-5)
    assert peak < 64 << 10, peak  # nothing of y's size was allocated


def test_outputs_are_never_overwritten_by_a_later_run(rng):
    with hostir.compile(linear(), ranks=2) as exe:
        first_inputs = {n: torch.ones(t.shape) for n, t in linear().inputs.items()}
        first = exe.run(first_inputs)["y"]
        kept = first.clone()
        exe.run({n: torch.full(t.shape, 2.0) for n, t in linear().inputs.items()})
    assert torch.equal(first, kept)


class DLPackOnly:
    """A tensor of another library: it speaks DLPack and nothing else."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, stream=None):
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_any_dlpack_object_is_read_in_place(rng):
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 16)).astype(np.float32)
    assert _tensors.input_array(linear().inputs["x"], DLPackOnly(x), copy_inputs=False).ctypes.data == x.ctypes.data
    y = hostir.run(linear(), {"x": DLPackOnly(x), "w": DLPackOnly(w)}, ranks=2)["y"]
    np.testing.assert_allclose(y, expected_linear(x, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("given, says", [
    (lambda: np.zeros((8, 16)), "input 'x': it is float64, the program declares f32"),
    (lambda: torch.zeros((8, 16), dtype=torch.float64), "input 'x': it is torch.float64, the program declares f32"),
    (lambda: torch.zeros((16, 8)).T, "input 'x': it is not contiguous"),
    (lambda: np.zeros((16, 8), np.float32).T, "input 'x': it is not contiguous"),
    (lambda: [[0.0] * 16] * 8, "input 'x': a list is not a tensor"),
])
def test_a_copy_needs_copy_inputs(rng, given, says):
    w = rng.uniform(-1, 1, (4, 16)).astype(np.float32)
    with hostir.compile(linear(), ranks=2) as exe:
        with pytest.raises(hostir.Error, match="copy_inputs=True") as caught:
            exe.run({"x": given(), "w": w})
        assert caught.value.kind == "usage" and says in caught.value.message
        # The executable stays usable, and copy_inputs=True converts the same value.
        y = exe.run({"x": given(), "w": w}, copy_inputs=True)["y"]
    np.testing.assert_allclose(np.asarray(y), np.zeros((8, 4)), atol=0)


def read_only(array):
    array.flags.writeable = False
    return array


@pytest.mark.parametrize("out, says", [
    (lambda: np.zeros((8, 4), np.float32)[::-1], "out 'y': it is not contiguous"),
    (lambda: np.zeros((8, 4)), "out 'y': it is float64, the program declares f32"),
    (lambda: np.zeros((4, 8), np.float32), "out 'y': the array has shape (4, 8)"),
    (lambda: read_only(np.zeros((8, 4), np.float32)), "out 'y': it is read-only"),
    (lambda: torch.zeros((8, 4), dtype=torch.bfloat16), "out 'y': it is torch.bfloat16"),
])
def test_a_bad_out_tensor_is_named(rng, out, says):
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 16)).astype(np.float32)
    with hostir.compile(linear(), ranks=2) as exe:
        with pytest.raises(hostir.Error) as caught:
            exe.run({"x": x, "w": w}, out={"y": out()})
        assert says in caught.value.message
        np.testing.assert_allclose(exe.run({"x": x, "w": w})["y"], expected_linear(x, w), rtol=1e-5, atol=1e-5)
    with pytest.raises(hostir.Error, match="no output named 'z'"):
        hostir.run(linear(), {"x": x, "w": w}, out={"z": np.zeros(3)})


def test_bf16_for_numpy(rng):
    x = np.round(rng.uniform(-1, 1, (8, 16)) * 64) / 64
    w = np.round(rng.uniform(-1, 1, (4, 16)) * 64) / 64
    if _tensors._NUMPY_BF16 is None:
        # float32 holding the bf16 values, converted with copy_inputs=True.
        with pytest.raises(hostir.Error, match="declares bf16"):
            hostir.run(linear("bf16"), {"x": x.astype(np.float32), "w": w.astype(np.float32)})
        y = hostir.run(linear("bf16"), {"x": x, "w": w}, copy_inputs=True)["y"]
        assert y.dtype == np.float32
    else:
        bf16 = _tensors._NUMPY_BF16
        y = hostir.run(linear("bf16"), {"x": x.astype(bf16), "w": w.astype(bf16)})["y"]
        assert y.dtype == bf16
    np.testing.assert_allclose(y.astype(np.float32), expected_linear(x, w), rtol=1e-2, atol=1e-2)


def test_every_option_of_hostir_run_is_a_keyword_with_its_bounds():
    # The build tree's command line beside its module (a wheel has none).
    binary = pathlib.Path(hostir.__file__).resolve().parents[2] / "bin" / "hostir"
    if not binary.exists():
        pytest.skip("the hostir command line is not beside this module (a wheel's)")
    text = subprocess.run([str(binary), "run", "--help"], capture_output=True, text=True, check=True).stdout
    flags = {word.split(",")[-1] for line in text.splitlines() for word in line.split()[:1] if word.startswith("--")}
    # The command line's own: the program's parameters, passes, files, remarks and check.
    python_names = {"--set": "params", "--passes": "passes", "--input": "inputs", "--output": "out",
                    "--remarks": "remarks", "--check": "check", "--help": None}
    run_keywords = set(hostir.run.__wrapped__.__code__.co_varnames)
    compile_keywords = set(hostir.compile.__wrapped__.__code__.co_varnames)
    compile_keywords |= set(hostir.Executable.run.__wrapped__.__code__.co_varnames)
    for flag in flags:
        name = python_names.get(flag, flag[2:].replace("-", "_"))
        if name is None:
            continue
        if name in hostir._RUN_OPTIONS:
            assert f"{name}=" in hostir.run.__doc__ and f"{name}=" in hostir.compile.__doc__, flag
        else:
            assert name in run_keywords and name in compile_keywords, flag


def test_check_compares_with_the_serial_reference(rng):
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 16)).astype(np.float32)
    result = hostir.run(linear(), {"x": x, "w": w}, ranks=2, passes=["assign-streams"], check=True)
    assert result.check_report.startswith("output 'y' matches the serial reference (32 elements")
    with hostir.compile(linear(), ranks=2, check=True, remarks=True, passes=["assign-streams"]) as exe:
        assert exe.run({"x": x, "w": w}).check_report == result.check_report


RACY = """program racy() {
  output y : f32[4]
  y = allocate(f32[4], zero=true)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(y, out=y)
  set_current_stream(main)
  add(y, y, out=y)
  synchronize(stream(0))
}
"""


def test_remarks_and_races_come_back():
    params = {"M": 8, "K": 8, "N": 8, "S": 2}
    program = hostir.parse(conftest.example("row_parallel_linear"))
    result = hostir.run(program, ranks=2, params=params, passes=["assign-streams"], remarks=True)
    assert any("remark: assign-streams" in remark for remark in result.remarks), result.remarks
    assert hostir.run(program, ranks=2, params=params, passes=["assign-streams"]).remarks == []
    with hostir.compile(program, ranks=2, params=params, passes=["assign-streams"], remarks=True) as exe:
        assert exe.remarks == result.remarks
    racy = hostir.run(RACY, unchecked=True, race_check=True)
    assert len(racy.races) >= 1 and "<string>:7:" in racy.races[0], racy.races


def test_an_unknown_keyword_says_what_was_meant():
    with pytest.raises(TypeError, match="did you mean 'comm_timeout'"):
        hostir.run(linear(), comm_timout=3)


class ReadOnce(collections.abc.Mapping):
    """The caller's inputs, which say when the run has read them all."""

    def __init__(self, tensors):
        self.tensors, self.read = tensors, threading.Event()

    def __getitem__(self, name):
        value = self.tensors[name]
        if name == list(self.tensors)[-1]:
            self.read.set()
        return value

    def __iter__(self):
        return iter(list(self.tensors))

    def __len__(self):
        return len(self.tensors)


def test_inputs_are_held_for_the_whole_run(rng):
    # The caller lets go of x while the run reads it in place: the run holds
    # x until it returns, then lets it go.
    x = torch.from_numpy(rng.uniform(-1, 1, (8, 16)).astype(np.float32))
    w = torch.from_numpy(rng.uniform(-1, 1, (4, 16)).astype(np.float32))
    expected = expected_linear(x.numpy(), w.numpy())
    alive, inputs = weakref.ref(x), ReadOnce({"x": x, "w": w})
    del x
    results = []
    with hostir.compile(linear(), ranks=2, inject_delays=20000, repeat=5) as exe:
        worker = threading.Thread(target=lambda: results.append(exe.run(inputs)["y"]))
        worker.start()
        assert inputs.read.wait(timeout=60)
        inputs.tensors.clear()
        gc.collect()
        held = alive() is not None and worker.is_alive()
        worker.join()
    assert held
    np.testing.assert_allclose(results[0].numpy(), expected, rtol=1e-5, atol=1e-5)
    gc.collect()
    assert alive() is None
