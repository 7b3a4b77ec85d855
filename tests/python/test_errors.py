# hostir.Error: kinds, positions and messages, from parse, check and run.
import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import hostir
from conftest import example

# An unknown character at line 3, column 21.
SYNTAX_ERROR = """program broken(N = 4) {
  input  x : f32[N]
  output y : f32[N] $
  y = allocate(f32[N])
  copy(x, out=y)
}
"""

# Streams 0 and 1 both write y (lines 8 and 11), ordered after the
# allocation but not with each other.
RACY = """program racy(N = 8) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(1))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(main)
  synchronize(stream(0))
  synchronize(stream(1))
}
"""


def test_error_is_an_exception_class():
    assert issubclass(hostir.Error, Exception)


def test_syntax_error_has_its_position():
    with pytest.raises(hostir.Error) as caught:
        hostir.parse(SYNTAX_ERROR)
    error = caught.value
    assert error.kind == "program"
    assert (error.file, error.line, error.column) == ("<string>", 3, 21)
    assert str(error).startswith("<string>:3:21: error: ")
    assert error.message and error.message in str(error)


def test_unknown_operation_in_a_statement():
    text = SYNTAX_ERROR.replace(" $", "").replace("copy(x", "frobnicate(x")
    with pytest.raises(hostir.Error) as caught:
        hostir.run(text)
    error = caught.value
    assert error.kind == "program"
    assert (error.line, error.column) == (5, 3)
    assert "frobnicate" in error.message
    assert "<string>:5:3:" in str(error)


def test_missing_file():
    with pytest.raises(hostir.Error) as caught:
        hostir.parse("no/such/program.hir")
    assert caught.value.kind == "program"
    assert "no/such/program.hir" in str(caught.value)


def test_unknown_parameter():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(example("row_parallel_linear"), params={"Q": 3})
    # error.h calls an unknown parameter a usage error; the API reports it
    # as "program" for now.
    assert caught.value.kind in ("usage", "program")
    assert "no parameter 'Q'" in caught.value.message
    with pytest.raises(hostir.Error):
        hostir.check(example("row_parallel_linear"), params={"Q": 3})


def test_race_from_check_and_from_run():
    for call in (lambda: hostir.check(RACY), lambda: hostir.run(RACY, ranks=2)):
        with pytest.raises(hostir.Error) as caught:
            call()
        error = caught.value
        assert error.kind == "check"
        assert "race" in str(error)
        # Both statements' positions.
        assert "<string>:8:" in str(error)
        assert "<string>:11:" in str(error)


def test_wrong_input_shape():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(example("row_parallel_linear"), {"x": np.zeros((3, 4), np.float32)}, params={"M": 16, "S": 2})
    error = caught.value
    assert error.kind == "usage"
    assert "'x'" in error.message and "(3, 4)" in error.message and "[16, 512]" in error.message
    assert (error.file, error.line, error.column) == ("", 0, 0)


def test_unknown_input_name():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(example("row_parallel_linear"), {"z": np.zeros(3)})
    assert caught.value.kind == "usage"
    assert "'z'" in caught.value.message


def test_shard_that_does_not_divide():
    # K = 30 does not split into 4 equal shards.
    with pytest.raises(hostir.Error) as caught:
        hostir.run(example("row_parallel_linear"), ranks=4, params={"M": 8, "K": 30, "N": 4, "S": 2})
    assert caught.value.kind in ("program", "usage")
    assert "30" in str(caught.value)


def test_unknown_pass_and_machine():
    with pytest.raises(hostir.Error) as caught:
        hostir.run(example("row_parallel_linear"), passes=("no-such-pass",), params={"M": 8, "S": 2})
    assert caught.value.kind == "usage"
    with pytest.raises(hostir.Error):
        hostir.simulate(example("row_parallel_linear"), "no-such-machine")


def test_bad_argument_types_raise_type_error():
    # A hostir.Error of kind "usage" that is also the TypeError Python expects.
    for call in (lambda: hostir.parse(42),
                 lambda: hostir.run(example("row_parallel_linear"), params={"M": 1.5}),
                 lambda: hostir.check(example("row_parallel_linear"), ranks="2"),
                 lambda: hostir.simulate(example("row_parallel_linear"), None),
                 lambda: hostir.run(example("row_parallel_linear"), inputs=[1])):
        with pytest.raises(TypeError) as caught:
            call()
        assert isinstance(caught.value, hostir.Error)
        assert caught.value.kind == "usage"


def test_the_command_lines_limits_hold_in_python():
    # A pool of a million streams used to grow to 24 GB before anything said no.
    program = example("row_parallel_linear")
    for call in (lambda: hostir.check(program, streams=10**6),
                 lambda: hostir.run(program, streams=10**6, params={"M": 8, "S": 2}),
                 lambda: hostir.check(program, ranks=10**6),
                 lambda: hostir.check(program, streams=0)):
        with pytest.raises(hostir.Error) as caught:
            call()
        assert caught.value.kind == "usage"
        assert "from 1 to 1024" in caught.value.message


def closed_executable(program, params):
    executable = hostir.compile(program, params=params, fill_missing=True)
    executable.close()
    return executable


def test_every_usage_error_is_a_value_error():
    # The API's own bounds, not only Python's conversions: the same mistake
    # is exit 2 on the command line, ValueError here, Error kind Usage in C++.
    program = example("row_parallel_linear")
    small = {"M": 8, "K": 8, "N": 8, "S": 2}
    calls = {
        "ranks=0": lambda: hostir.run(program, ranks=0, params=small),
        "ranks=5000": lambda: hostir.run(program, ranks=5000, params=small),
        "streams=1025": lambda: hostir.run(program, streams=1025, params=small),
        "warmup=-1": lambda: hostir.run(program, warmup=-1, params=small),
        "repeat=-1": lambda: hostir.run(program, repeat=-1, params=small),
        "backend=tpu": lambda: hostir.run(program, backend="tpu", params=small),
        "min_gain=-1": lambda: hostir.run(program, min_gain=-1, params=small),
        "min_gain=nan": lambda: hostir.apply_passes(program, ["assign-streams"], min_gain=float("nan")),
        "min_gain=inf": lambda: hostir.apply_passes(program, ["assign-streams"], min_gain=float("inf")),
        "min_gain=2": lambda: hostir.apply_passes(program, ["assign-streams"], min_gain=2),
        "an empty pass": lambda: hostir.apply_passes(program, [""]),
        "an empty pass in a list": lambda: hostir.run(program, passes="assign-streams,,canonicalize", params=small),
        "a trailing comma": lambda: hostir.apply_passes(program, "assign-streams,"),
        "a lone comma": lambda: hostir.simulate(program, "h100-nvlink", passes=","),
        "wrong input shape": lambda: hostir.run(program, {"x": np.zeros((3, 4), np.float32)}, params=small),
        "unknown input": lambda: hostir.run(program, {"nope": np.zeros(3)}, params=small),
        "string input": lambda: hostir.run(program, {"x": np.array(["a"] * 64).reshape(8, 8)}, params=small),
        "closed executable": lambda: closed_executable(program, small).run(),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as caught:
            call()
        assert isinstance(caught.value, hostir.Error), name
        assert caught.value.kind == "usage", name


def test_numbers_beyond_64_bits_and_memory_beyond_the_machine_are_hostir_errors():
    program = example("row_parallel_linear")
    for call in (lambda: hostir.check(program, ranks=2**64),
                 lambda: hostir.check(program, params={"M": 2**70}),
                 lambda: hostir.run(program, seed=-1)):
        with pytest.raises(hostir.Error) as caught:
            call()
        assert caught.value.kind == "usage"
    # Outputs of 8 PiB: NumPy cannot hold them.
    with pytest.raises(hostir.Error) as caught:
        hostir.run(program, params={"M": 2**40, "K": 2**12, "N": 2**11})
    assert caught.value.kind in ("runtime", "program")


def test_a_missing_compiled_module_says_how_to_build_it(tmp_path):
    # The package without its extension, as a build of the command line alone leaves it.
    package = tmp_path / "hostir"
    package.mkdir()
    for source in pathlib.Path(hostir.__file__).parent.glob("*.py"):
        shutil.copy(source, package / source.name)
    result = subprocess.run(
        [sys.executable, "-c", "import hostir"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "hostir's compiled module is not built; run `cmake --build build`" in result.stderr
    assert "circular import" not in result.stderr.splitlines()[-1]


def test_a_profile_with_bytes_that_are_not_utf8_names_the_file_and_position(tmp_path):
    # The message quotes the bad bytes; they must not replace it with a decode error.
    profile = tmp_path / "bad.json"
    profile.write_bytes(b'{\n  "name": "x\xff\xfe"\n}\n')
    with pytest.raises(hostir.Error) as caught:
        hostir.simulate(example("row_parallel_linear"), profile)
    assert "bad.json:2:" in str(caught.value), str(caught.value)
    assert "codec" not in str(caught.value)


def test_an_empty_trace_path_is_a_usage_error():
    with pytest.raises(ValueError, match="trace: must be a file name, got ''"):
        hostir.run(example("row_parallel_linear"), trace="", params={"M": 8, "K": 8, "N": 8, "S": 2})


def test_program_text_has_the_files_limit():
    text = "program p() {\n}\n" + "#" * (16 << 20)
    with pytest.raises(hostir.Error, match="longer than 16 MiB") as caught:
        hostir.parse(text)
    assert caught.value.kind == "program"
