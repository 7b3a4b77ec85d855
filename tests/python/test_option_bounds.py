# Every integer, number and boolean keyword of the module's calls is checked
# as the command line checks it: within the bounds of include/hostir/limits.h
# (and of the options' C++ types), refused in the command line's words
# ("--seed: must be an integer from 0 to 2^64 - 1, got '-1'") as a
# hostir.Error of kind "usage" that is also the ValueError (out of range) or
# TypeError (not an integer, not True or False) Python code expects, never
# as pybind11's "incompatible function arguments".
import numpy as np
import pytest

import hostir

COPY = """program copying(N = 4) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
}
"""

# Each public call, given only the keyword under test.
CALLS = {
    "run": lambda **kw: hostir.run(COPY, **kw),
    "compile": lambda **kw: hostir.compile(COPY, **kw).close(),
    "simulate": lambda **kw: hostir.simulate(COPY, "h100-nvlink", **kw),
    "apply_passes": lambda **kw: hostir.apply_passes(COPY, ["assign-streams"], **kw),
    "check": lambda **kw: hostir.check(COPY, **kw),
    "Program.tensors": lambda **kw: hostir.parse(COPY).tensors(**kw),
}
EVERY_CALL = tuple(CALLS)

# The keywords that take an integer, a number or a boolean, and the calls that take each.
TAKEN_BY = {
    "ranks": EVERY_CALL,
    "params": EVERY_CALL,
    "streams": ("run", "compile", "apply_passes", "check"),
    "seed": ("run", "compile"),
    "warmup": ("run", "compile"),
    "repeat": ("run", "compile"),
    "min_gain": ("run", "compile", "apply_passes"),
    "fill_missing": ("run", "compile"),
    "graph": ("compile",),
}

RANKS = "ranks: must be an integer from 1 to 1024, got "
STREAMS = "streams: must be an integer from 1 to 1024, got "
SEED = "seed: must be an integer from 0 to 2^64 - 1, got "
WARMUP = "warmup: must be an integer from 0 to 1000000, got "
REPEAT = "repeat: must be an integer from 0 to 1000000, got "
MIN_GAIN = "min_gain: must be a number from 0 to 1, got "
PARAM = "params: N: {} is not a non-negative integer that fits in 64 bits"

# (keyword, value, the error's class, its message)
REFUSED = [
    ("ranks", 0, ValueError, RANKS + "0"),
    ("ranks", 1025, ValueError, RANKS + "1025"),
    ("ranks", 2**64, ValueError, RANKS + str(2**64)),
    ("ranks", "2", TypeError, RANKS + "'2'"),
    ("ranks", 2.0, TypeError, RANKS + "2.0"),
    ("ranks", True, TypeError, RANKS + "True"),
    ("streams", 0, ValueError, STREAMS + "0"),
    ("streams", -2**70, ValueError, STREAMS + str(-2**70)),
    ("streams", None, TypeError, STREAMS + "None"),
    ("seed", -1, ValueError, SEED + "-1"),
    ("seed", 2**64, ValueError, SEED + str(2**64)),
    ("seed", "7", TypeError, SEED + "'7'"),
    ("seed", 7.0, TypeError, SEED + "7.0"),
    ("seed", False, TypeError, SEED + "False"),
    ("warmup", -1, ValueError, WARMUP + "-1"),
    ("warmup", 10**6 + 1, ValueError, WARMUP + "1000001"),
    ("repeat", -1, ValueError, REPEAT + "-1"),
    ("repeat", 2**63, ValueError, REPEAT + str(2**63)),
    ("min_gain", -0.5, ValueError, MIN_GAIN + "-0.5"),
    ("min_gain", 2, ValueError, MIN_GAIN + "2"),
    ("min_gain", float("nan"), ValueError, MIN_GAIN + "nan"),
    ("min_gain", float("inf"), ValueError, MIN_GAIN + "inf"),
    ("min_gain", "0.1", TypeError, MIN_GAIN + "'0.1'"),
    ("params", {"N": 2**70}, ValueError, PARAM.format(2**70)),
    ("params", {"N": 2**63}, ValueError, PARAM.format(2**63)),
    ("params", {"N": -1}, ValueError, PARAM.format(-1)),
    ("params", {"N": 4.0}, TypeError, PARAM.format("4.0")),
    ("params", {"N": True}, TypeError, PARAM.format("True")),
    ("fill_missing", "no", TypeError, "fill_missing: must be True or False, got 'no'"),
    ("fill_missing", 1, TypeError, "fill_missing: must be True or False, got 1"),
    ("graph", "yes", TypeError, "graph: must be True or False, got 'yes'"),
    ("graph", None, TypeError, "graph: must be True or False, got None"),
]


@pytest.mark.parametrize("keyword,value,error,message,call",
                         [(*case, call) for case in REFUSED for call in TAKEN_BY[case[0]]],
                         ids=[f"{call}-{case[0]}={case[1]!r}" for case in REFUSED for call in TAKEN_BY[case[0]]])
def test_a_bad_value_is_refused_in_the_command_lines_words(keyword, value, error, message, call):
    with pytest.raises(error) as caught:
        CALLS[call](**{keyword: value})
    assert isinstance(caught.value, hostir.Error)
    assert caught.value.kind == "usage"
    assert caught.value.message == message
    assert str(caught.value) == f"error: {message}"


def test_every_keyword_that_takes_a_number_or_a_flag_is_covered():
    assert {case[0] for case in REFUSED} == set(TAKEN_BY)


def test_the_bounds_themselves_and_numpy_scalars_are_taken():
    x = np.arange(4, dtype=np.float32)
    for seed in (2**64 - 1, np.uint64(2**64 - 1)):
        assert np.array_equal(hostir.run(COPY, {"x": x}, seed=seed, ranks=np.int32(2), streams=np.int64(1024),
                                         warmup=0, repeat=np.int8(1), min_gain=np.float32(1),
                                         fill_missing=np.True_)["y"], x)
    # A seed fills the inputs not given: the largest draws its own, as the command line's would.
    assert hostir.run(COPY, seed=2**64 - 1)["y"].shape == (4,)
    assert hostir.parse(COPY).tensors(params={"N": np.int16(7)})[0].shape == (7,)
    hostir.compile(COPY, graph=False, fill_missing=np.False_, warmup=10**6).close()
