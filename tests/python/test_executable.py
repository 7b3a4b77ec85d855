# hostir.compile: prepared once, run many times. Results equal hostir.run and
# NumPy; threads take turns; close and `with`; bad inputs name the input;
# Ctrl-C during exe.run; memory flat over a thousand runs.
import os
import resource
import threading

import numpy as np
import pytest

import hostir
from test_interrupt import ON_THE_MAIN_THREAD, interrupted_within_a_second
from test_run_options import DOUBLING

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "row_parallel_linear.hir")
PARAMS = {"M": 12, "K": 16, "N": 8, "S": 3}


def inputs(seed):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((12, 16)).astype(np.float32),
            "w": rng.standard_normal((8, 16)).astype(np.float32)}


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_every_run_equals_numpy_and_hostir_run(ranks):
    with hostir.compile(EXAMPLE, ranks=ranks, params=PARAMS, passes=["assign-streams"]) as exe:
        for seed in range(4):
            given = inputs(seed)
            y = exe.run(given)["y"]
            np.testing.assert_allclose(y, given["x"] @ given["w"].T, rtol=1e-5, atol=1e-5)
            once = hostir.run(EXAMPLE, given, ranks=ranks, params=PARAMS, passes=["assign-streams"])["y"]
            np.testing.assert_array_equal(y, once)


def test_timings_come_back_as_from_run():
    with hostir.compile(DOUBLING, ranks=2, warmup=1, repeat=3) as exe:
        result = exe.run({"x": np.ones(64, np.float32)})
    assert len(result.timings) == 3
    # each run's host time until its work was issued lies within the run
    assert len(result.issue_timings) == 3
    assert all(0 < issue <= run for issue, run in zip(result.issue_timings, result.timings))
    np.testing.assert_array_equal(result["y"], np.full(64, 8, np.float32))


def test_bad_inputs_name_the_input_and_leave_it_usable():
    exe = hostir.compile(EXAMPLE, ranks=2, params=PARAMS)
    given = inputs(1)
    cases = [({"x": given["x"]}, "input 'w' is missing"),
             ({**given, "z": given["x"]}, "no input named 'z'"),
             ({**given, "x": given["x"][:, :8]}, "input 'x'"),
             ({**given, "x": np.array([["a"] * 16] * 12)}, "input 'x'")]
    for bad, named in cases:
        with pytest.raises(hostir.Error, match=named):
            exe.run(bad)
    np.testing.assert_allclose(exe.run(given)["y"], given["x"] @ given["w"].T, rtol=1e-5, atol=1e-5)
    exe.close()


def test_fill_missing_takes_inputs_from_the_seed_as_run_does():
    with hostir.compile(EXAMPLE, ranks=2, params=PARAMS, seed=4, fill_missing=True) as exe:
        np.testing.assert_array_equal(exe.run()["y"], hostir.run(EXAMPLE, ranks=2, params=PARAMS, seed=4)["y"])


def test_a_closed_executable_raises():
    with hostir.compile(DOUBLING) as exe:
        assert not exe.closed
    assert exe.closed
    exe.close()
    with pytest.raises(hostir.Error, match="closed"):
        exe.run({"x": np.ones(64, np.float32)})


def test_threads_take_turns_and_executables_run_at_once():
    shared = hostir.compile(EXAMPLE, ranks=2, params=PARAMS)
    other = hostir.compile(EXAMPLE, ranks=4, params=PARAMS)
    failures = []

    def caller(exe, seed):
        try:
            for call in range(10):
                given = inputs(seed * 100 + call)
                np.testing.assert_allclose(exe.run(given)["y"], given["x"] @ given["w"].T, rtol=1e-5, atol=1e-5)
        except Exception as e:  # noqa: BLE001 - reported below, on the test's thread
            failures.append(e)

    threads = [threading.Thread(target=caller, args=(exe, seed)) for seed, exe in enumerate([shared, shared, other])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    shared.close()
    other.close()


@ON_THE_MAIN_THREAD
def test_ctrl_c_during_run_stops_it_within_a_second_and_the_next_run_works():
    exe = hostir.compile(DOUBLING, ranks=2, params={"S": 100}, repeat=1_000_000)
    # Many minutes of runs, unless interrupted.
    interrupted_within_a_second(lambda: exe.run({"x": np.ones(64, np.float32)}))
    exe.close()
    with hostir.compile(DOUBLING, ranks=2) as small:
        np.testing.assert_array_equal(small.run({"x": np.ones(64, np.float32)})["y"], np.full(64, 8, np.float32))


def resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def test_memory_stays_flat_over_a_thousand_runs():
    given = inputs(3)
    with hostir.compile(EXAMPLE, ranks=2, params=PARAMS) as exe:
        for _ in range(50):
            exe.run(given)
        before = resident_bytes()
        for _ in range(1000):
            y = exe.run(given)["y"]
        grown = resident_bytes() - before
    assert grown < 4 << 20, f"resident memory grew by {grown} bytes over 1000 runs"
    np.testing.assert_allclose(y, given["x"] @ given["w"].T, rtol=1e-5, atol=1e-5)


def test_graph_on_the_cpu_is_a_clear_error():
    with pytest.raises(hostir.Error, match="graph: a CUDA graph captures device work, and this run has none"):
        hostir.compile(DOUBLING, backend="cpu", graph=True)


def many_loops(loops):
    """`loops` independent top-level loops, then one that accumulates: proving
    every rewrite at once fails, so assign-streams race-proves a rewrite of
    each loop against the whole program, for seconds."""
    body = "".join(f"""  a{l} = allocate(f32[M, N])
  for i in range(S) {{
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    ai = shard_by_stream(a{l}, axis=0, index=i, chunks=S)
    linear(xi, w, out=ai)
  }}
""" for l in range(loops))
    body += "  b = allocate(f32[M, N], zero=true)\n  for i in range(S) {\n    add(b, b, out=b)\n  }\n"
    return "program many(M = 8, K = 8, N = 8, S = 2) {\n  input x : f32[M, K]\n  input w : f32[N, K]\n" + body + "}\n"


@ON_THE_MAIN_THREAD
def test_ctrl_c_during_the_passes_stops_compile_within_a_second():
    program = hostir.parse(many_loops(800))
    interrupted_within_a_second(lambda: hostir.compile(program, passes=["assign-streams"]))
