# 0-d tensors (`f32[]`) from Python: a 0-d NumPy array (or a Python number)
# in, a 0-d array out, as a 0-d .npy is on the command line, at one rank and
# at several, through hostir.run and through an Executable.
import numpy as np
import pytest

import hostir

# y = the sum over the ranks of x: every rank holds the whole 0-d tensor.
TOTAL = """program total() {
  input  x : DT[]
  output y : DT[]
  y = allocate(DT[])
  copy(x, out=y)
  c = allreduce(y, op=sum)
  wait(c)
}
"""

# What each dtype's output comes back as (bf16: float32 holding its values).
RETURNED = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32}


@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("dtype", sorted(RETURNED))
def test_a_0d_input_gives_a_0d_output(dtype, ranks):
    # 2.5 and 7.5 are exact in every dtype, so the sum is exact too.
    y = hostir.run(TOTAL.replace("DT", dtype), {"x": np.array(2.5, np.float32)}, ranks=ranks, copy_inputs=True)["y"]
    assert isinstance(y, np.ndarray) and y.shape == () and y.dtype == RETURNED[dtype]
    assert y == 2.5 * ranks


def test_a_python_number_is_a_0d_input():
    assert hostir.run(TOTAL.replace("DT", "f64"), {"x": -1.25}, ranks=2, copy_inputs=True)["y"] == -2.5


@pytest.mark.parametrize("ranks", [1, 2])
def test_an_executable_takes_and_gives_0d_arrays(ranks):
    with hostir.compile(TOTAL.replace("DT", "f32"), ranks=ranks) as exe:
        for value in (1.0, -3.5, 0.25):
            y = exe.run({"x": np.array(value, np.float32)}, copy_inputs=True)["y"]
            assert y.shape == () and y == value * ranks


def test_a_0d_index_picks_one_row():
    # NumPy's x[idx] with a 0-d idx: one row, of shape x.shape[1:].
    program = """program pick() {
  input  x : f32[4, 3]
  input  idx : i32[]
  output y : f32[3]
  y = gather_rows(x, idx)
}
"""
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    for ranks in (1, 2):
        y = hostir.run(program, {"x": x, "idx": np.array(2, np.int64)}, ranks=ranks, copy_inputs=True)["y"]
        np.testing.assert_array_equal(y, x[2])


def test_a_0d_array_where_the_program_wants_a_vector_names_both_shapes():
    program = TOTAL.replace("DT[]", "f32[1]")
    with pytest.raises(hostir.Error, match=r"input 'x': the array has shape \(\), the program declares f32\[1\]"):
        hostir.run(program, {"x": np.array(1.0, np.float32)})
