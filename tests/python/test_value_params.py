# Float and dtype program parameters from Python: defaults by kind, a run
# bound to them against NumPy, and values of the wrong kind refused in the
# words of `--set`.
import pathlib

import numpy as np
import pytest

import hostir

SGD_STEP = str(pathlib.Path(__file__).resolve().parents[1] / "api" / "programs" / "sgd_step.hir")


def inputs(n=8):
    x = np.linspace(-2, 3, n, dtype=np.float32)
    g = np.linspace(0.5, -1, n, dtype=np.float32)
    return {"x": x, "g": g}


def test_defaults_keep_their_kinds():
    assert hostir.parse(SGD_STEP).params == {"N": 8, "DT": "bf16", "lr": 0.5}


@pytest.mark.parametrize("dtype,numpy_dtype", [("f64", np.float64), (np.float16, np.float16),
                                               (np.dtype("float32"), np.float32)])
def test_a_run_uses_the_bound_rate_and_dtype(dtype, numpy_dtype):
    given = inputs()
    out = hostir.run(SGD_STEP, given, params={"lr": 0.25, "DT": dtype})
    want = given["x"] - np.float32(0.25) * given["g"]
    np.testing.assert_array_equal(out["y"], want)
    assert out["low"].dtype == numpy_dtype
    np.testing.assert_array_equal(out["low"], want.astype(numpy_dtype))


def test_an_integer_is_a_number_parameters_value():
    given = inputs()
    out = hostir.run(SGD_STEP, given, params={"lr": 2, "DT": "f32"})
    np.testing.assert_array_equal(out["y"], given["x"] - 2 * given["g"])


def test_a_torch_dtype_names_a_dtype():
    torch = pytest.importorskip("torch", reason="PyTorch (python3-torch) is not installed")
    out = hostir.run(SGD_STEP, inputs(), params={"DT": torch.float64})
    assert out["low"].dtype == np.float64


@pytest.mark.parametrize("params,message", [
    ({"lr": "f32"}, "params: lr: 'f32' is not a finite number"),
    ({"lr": float("nan")}, "params: lr: nan is not a finite number"),
    ({"DT": 3}, "params: DT: 3 is not a dtype (f32, f16, bf16, f64 or i32)"),
    ({"DT": "bf61"}, "params: DT: 'bf61' is not a dtype (f32, f16, bf16, f64 or i32)"),
    ({"N": 0.5}, "params: N: 0.5 is not a non-negative integer that fits in 64 bits"),
])
def test_a_value_of_the_wrong_kind_is_a_type_error(params, message):
    with pytest.raises(TypeError) as caught:
        hostir.check(SGD_STEP, params=params)
    assert isinstance(caught.value, hostir.Error)
    assert caught.value.message == message
