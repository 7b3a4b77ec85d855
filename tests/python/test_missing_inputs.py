# Inputs a run is not given, as on the command line and in C++: given none,
# every input is filled from the seed; given some but not all, the run is
# refused, naming the missing ones, unless fill_missing=True fills them.
import numpy as np
import pytest

import hostir
from conftest import example

PROGRAM = example("row_parallel_linear")
PARAMS = {"M": 16, "K": 32, "N": 8, "S": 2}


def given(rng):
    return {"x": rng.uniform(-1, 1, (16, 32)).astype(np.float32), "w": rng.uniform(-1, 1, (8, 32)).astype(np.float32)}


def test_every_input_given_is_used(rng):
    inputs = given(rng)
    y = hostir.run(PROGRAM, inputs, ranks=2, params=PARAMS)["y"]
    np.testing.assert_allclose(y, inputs["x"].astype(np.float64) @ inputs["w"].T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("inputs", [None, {}])
def test_no_inputs_at_all_are_every_one_seeded(inputs):
    first = hostir.run(PROGRAM, inputs, ranks=2, params=PARAMS, seed=5)["y"]
    np.testing.assert_array_equal(first, hostir.run(PROGRAM, ranks=2, params=PARAMS, seed=5)["y"])
    assert np.all(np.isfinite(first)) and np.any(first != 0)
    assert not np.array_equal(first, hostir.run(PROGRAM, ranks=2, params=PARAMS, seed=6)["y"])


def test_some_inputs_but_not_all_are_refused_naming_the_missing_one(rng):
    with pytest.raises(hostir.Error) as caught:
        hostir.run(PROGRAM, {"x": given(rng)["x"]}, ranks=2, params=PARAMS)
    assert caught.value.kind == "usage"
    assert "missing" in caught.value.message
    assert "'w'" in caught.value.message and "'x'" not in caught.value.message


def test_fill_missing_fills_the_others_from_the_seed(rng):
    # x is zero, so y is zero whatever the seed draws for w.
    y = hostir.run(PROGRAM, {"x": np.zeros((16, 32), np.float32)}, ranks=2, params=PARAMS, fill_missing=True)["y"]
    np.testing.assert_array_equal(y, np.zeros((16, 8), np.float32))
    # and w is drawn, not zero: a seeded x with it gives a product that is not.
    assert np.any(hostir.run(PROGRAM, ranks=2, params=PARAMS, fill_missing=True)["y"] != 0)


def test_an_executable_given_no_inputs_seeds_them_and_refuses_some(rng):
    with hostir.compile(PROGRAM, ranks=2, params=PARAMS, seed=5) as exe:
        np.testing.assert_array_equal(exe.run()["y"], hostir.run(PROGRAM, ranks=2, params=PARAMS, seed=5)["y"])
        with pytest.raises(hostir.Error, match="'w'"):
            exe.run({"x": given(rng)["x"]})
