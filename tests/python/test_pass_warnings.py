# A pass that reaches its work limit (kMaxPassWholeProgramWork) warns, as
# `hostir opt` prints "warning:" even without --remarks: in Python a
# hostir.PassWarning at the caller's line, from every call that runs passes.
import inspect
import warnings

import pytest

import hostir


def many_loops(loops):
    """Independent loops of chunked copies: assign-streams rewrites them all,
    and canonicalize then has two synchronizations per loop to prove, past
    its limit from about 290 loops."""
    text = ["program many(M = 64, S = 4) {"]
    for i in range(loops):
        text.append(f"  input x{i} : f32[M, M]\n  output y{i} : f32[M, M]")
    for i in range(loops):
        text.append(f"""  y{i} = allocate(f32[M, M])
  for j in range(S) {{
    xj = shard_by_stream(x{i}, axis=0, index=j, chunks=S)
    yj = shard_by_stream(y{i}, axis=0, index=j, chunks=S)
    copy(xj, out=yj)
  }}""")
    return "\n".join(text) + "\n}\n"


LIMIT = r"warning: canonicalize: this synchronization and those before it kept unproved: the pass reached its limit"


@pytest.fixture(scope="module")
def long_program():
    return hostir.parse(many_loops(300))


def test_apply_passes_warns_at_the_callers_line_and_the_result_checks(long_program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = hostir.apply_passes(long_program, ["assign-streams", "canonicalize"])
    said = [w for w in caught if issubclass(w.category, hostir.PassWarning)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert said[0].filename == __file__
    assert LIMIT in str(said[0].message)
    assert str(said[0].message).startswith("<string>:")
    hostir.check(result.program)


# The other calls that run passes (compile: below), each calling from a
# line of its own. Each reaches the limit, about 8 s on 2 cores.
PASSES = ["assign-streams", "canonicalize"]
CALLERS = {
    "run": lambda p: hostir.run(p, passes=PASSES),
    "simulate": lambda p: hostir.simulate(p, "h100-nvlink", passes=PASSES),
}


@pytest.mark.parametrize("call", sorted(CALLERS))
def test_every_call_that_runs_passes_warns_at_the_callers_line(long_program, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLERS[call](long_program)
    said = [w for w in caught if issubclass(w.category, hostir.PassWarning)]
    assert len(said) == 1, [str(w.message) for w in caught]
    assert (said[0].filename, said[0].lineno) == (__file__, CALLERS[call].__code__.co_firstlineno)
    assert LIMIT in str(said[0].message)


def test_compile_warns_and_a_warning_filter_can_make_it_an_error(long_program):
    with pytest.warns(hostir.PassWarning, match=LIMIT) as said:
        line = inspect.currentframe().f_lineno + 1
        hostir.compile(long_program, passes=PASSES).close()
    assert [(w.filename, w.lineno) for w in said if issubclass(w.category, hostir.PassWarning)] == [(__file__, line)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", hostir.PassWarning)
        with pytest.raises(hostir.PassWarning, match=LIMIT):
            hostir.apply_passes(long_program, ["assign-streams", "canonicalize"])


def test_a_program_within_the_limit_gives_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error", hostir.PassWarning)
        hostir.apply_passes(many_loops(20), ["assign-streams", "canonicalize"])
