"""hostir from Python: parse, check, rewrite, simulate and run `.hir` programs.

    import numpy as np, hostir
    p = hostir.parse("examples/row_parallel_linear.hir")
    x = np.random.rand(256, 512).astype(np.float32)
    w = np.random.rand(128, 512).astype(np.float32)
    y = hostir.run(p, {"x": x, "w": w}, ranks=2)["y"]      # x @ w.T
    timed = hostir.run(p, ranks=2, passes=["assign-streams"], warmup=2, repeat=10)
    print(timed.timings.median_ms, hostir.simulate(p, "h100-nvlink", ranks=2))
    rewritten, remarks = hostir.apply_passes(p, ["assign-streams"], ranks=2)

Tensors are NumPy arrays holding the *global* tensor; every in-process rank
gets its shard, and outputs come back whole. dtypes: f32 is float32, f64
float64, f16 float16, i32 (indices) int32. NumPy has no bf16: a bf16 input
accepts any real array, rounded to the nearest bf16 value (ties to even,
exactly, also from float64), and a bf16 output comes back as float32
holding the bf16 values exactly. Inputs of another dtype are converted to
the declared one; an i32 input takes integers only, each within int32.

Every failure raises hostir.Error.
"""

import atexit
import collections
import collections.abc
import difflib
import functools
import math
import numbers
import operator
import os
import sys
import warnings
import weakref

import numpy as np

__all__ = [
    "Error", "Finding", "Note", "Program", "Tensor", "PassResult", "RunResult", "Timings", "ModelAssumption", "PassWarning",
    "Executable", "parse", "check", "apply_passes", "run", "compile", "simulate", "pass_names",
]

from . import _tensors  # noqa: E402
from ._errors import Error, Finding, Note, _ArgumentTypeError, _ArgumentValueError, _type_usage, _usage  # noqa: E402,F401

# The extension raises Error, so it comes after the class. Without it (a
# build that made only the command line), say how to build it rather than
# let Python call it a circular import.
try:
    from . import _hostir  # noqa: E402
except ImportError as error:
    import importlib.util

    if importlib.util.find_spec(__name__ + "._hostir") is None:
        raise ImportError(
            "hostir's compiled module is not built; run `cmake --build build` "
            "(it puts the module in build/python/) and use PYTHONPATH=build/python"
        ) from error
    raise

Tensor = collections.namedtuple("Tensor", "name dtype shape shard_axis is_input")
Tensor.__doc__ = """An input or output declaration: dtype ("f32", "f16",
"bf16", "f64", "i32"), global shape (a tuple), shard axis (None: every rank holds
the whole tensor)."""


def _raising_hostir_errors(function):
    """Every failure of a public call is a hostir.Error: arguments of the
    wrong type or out of range are usage errors (also TypeError or
    ValueError), and memory that runs out (NumPy's arrays for the outputs)
    is a runtime error."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Error:
            raise
        except TypeError as e:
            message = f"{function.__name__}: {e}"
            raise _ArgumentTypeError(f"error: {message}", message=message) from e
        except (ValueError, OverflowError) as e:
            message = f"{function.__name__}: {e}"
            raise _ArgumentValueError(f"error: {message}", message=message) from e
        except MemoryError as e:
            message = f"{function.__name__}: out of memory" + (f" ({e})" if str(e) else "")
            raise Error(f"error: {message}", kind="runtime", message=message) from e

    return wrapper


class Program:
    """A parsed, verified program; an immutable value (make one with parse)."""

    __slots__ = ("_impl",)

    def __init__(self, impl):
        self._impl = impl

    @property
    def name(self):
        """The name after `program` in its source."""
        return self._impl.name

    @property
    def source_name(self):
        """The file (or "<string>") that error positions refer to."""
        return self._impl.source_name

    @property
    def text(self):
        """The program in `.hir` syntax; parse(p.text) == p."""
        return self._impl.print()

    @property
    def params(self):
        """Every parameter with its default value: an int, a float, or a
        dtype's name ("bf16")."""
        return {name: value.name if isinstance(value, _hostir.DType) else value
                for name, value in self._impl.default_params().items()}

    @_raising_hostir_errors
    def tensors(self, params=None, ranks=1):
        """The inputs, then the outputs, as Tensor, with global shapes bound
        to these parameter values and rank count."""
        rows = self._impl.tensors(_params(params, self), _ranks(ranks))
        return [Tensor(name, dtype, tuple(shape), axis, is_input) for name, is_input, dtype, shape, axis in rows]

    @property
    def inputs(self):
        """Input declarations by name, with the default parameters."""
        return {t.name: t for t in self.tensors() if t.is_input}

    @property
    def outputs(self):
        """Output declarations by name, with the default parameters."""
        return {t.name: t for t in self.tensors() if not t.is_input}

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<hostir.Program {self.name} from {self.source_name}>"

    def __eq__(self, other):
        """Structural equality: positions and the source name do not count."""
        if not isinstance(other, Program):
            return NotImplemented
        return self._impl == other._impl

    def __hash__(self):
        # The printed text is a function of the structure, as == is.
        return hash(self.text)


@_raising_hostir_errors
def parse(path_or_text):
    """A Program from source text (a string with a newline, or starting with
    `program`) or from a file (any other string, or an os.PathLike)."""
    if isinstance(path_or_text, os.PathLike):
        return Program(_hostir.parse_file(os.fspath(path_or_text)))
    if not isinstance(path_or_text, str):
        raise TypeError(f"parse() takes source text or a path, not {type(path_or_text).__name__}")
    return Program(_hostir.parse(path_or_text))


@_raising_hostir_errors
def check(program, ranks=1, params=None, streams=_hostir.DEFAULT_STREAMS):
    """Verifies the program with the parameters bound and proves it free of
    races, uninitialized reads and mismatched communications on `ranks`
    ranks. Returns None; raises Error (kind "program" or "check")."""
    program = _program(program)
    _hostir.check(program._impl, _ranks(ranks), _params(params, program), _streams(streams))


@_raising_hostir_errors
def simulate(program, machine, ranks=1, passes=(), params=None):
    """Predicts the program (after `passes`) on `machine`, a shipped profile's
    name ("h100-nvlink") or a profile file from `hostir calibrate`. Returns
    the figures `hostir simulate` prints: median_ms, compute_ms, comm_ms,
    exposed_comm_ms (milliseconds) and E (overlap efficiency). What the
    prediction assumed where the profile has no figure (attention at the
    GEMM rate, say) is warned as a ModelAssumption, as `hostir simulate`
    prints it on an `assumed:` line, at the line that called simulate."""
    program = _program(program)
    figures, assumptions = _hostir.simulate(program._impl, os.fspath(machine), _ranks(ranks),
                                            _passes(passes), _params(params, program))
    for assumption in assumptions:
        _warn(f"assumed: {assumption}", ModelAssumption)
    return dict(figures)


class ModelAssumption(UserWarning):
    """The warning hostir.simulate gives for each assumption its prediction
    rests on beyond the machine profile's measured figures."""


class PassWarning(UserWarning):
    """A warning of the passes, given by apply_passes, simulate, run and
    compile at the line that called them: a pass that reached its work
    limit (kMaxPassWholeProgramWork) left the rest of the program as it
    was. Its text is "file:line:col: warning: PASS: ..." at the first
    statement it left."""


PassResult = collections.namedtuple("PassResult", "program remarks")
PassResult.__doc__ = """What apply_passes returns: the rewritten Program, and
the remarks (a list of str) in which the passes say what they did and why,
each "file:line:col: remark: PASS: message" with the source line, a caret
and its notes, as `hostir opt --remarks` prints them."""


@_raising_hostir_errors
def apply_passes(program, passes, ranks=1, params=None, streams=_hostir.DEFAULT_STREAMS, machine=None,
                 min_gain=_hostir.DEFAULT_MIN_GAIN):
    """Applies `passes` (names, or the command line's "a,b" list) in order,
    verifying and race-checking the program after each for `ranks` ranks,
    `params` and `streams` worker streams, as `hostir opt` does. `machine`
    (a shipped profile's name or a profile file) is for passes that consult
    the cost model (overlap), which change a schedule only where it predicts
    a relative gain of at least `min_gain`. Returns a PassResult
    (program, remarks)."""
    program = _program(program)
    rewritten, remarks = _hostir.apply_passes(program._impl, _passes(passes), _ranks(ranks),
                                              _params(params, program), _streams(streams), _machine(machine),
                                              _min_gain(min_gain))
    return PassResult(Program(rewritten), list(remarks))


def pass_names():
    """The names of every pass apply_passes, run and simulate accept."""
    return list(_hostir.pass_names())


class Timings(collections.abc.Sequence):
    """The timed runs of hostir.run: a sequence of milliseconds, one per run
    of `repeat` (warmup runs excluded), each from the barrier that starts a
    run on every rank to the one that ends it, as `hostir run --repeat`
    measures them."""

    __slots__ = ("_millis",)

    def __init__(self, millis):
        self._millis = tuple(float(m) for m in millis)

    def __getitem__(self, index):
        return self._millis[index]

    def __len__(self):
        return len(self._millis)

    @property
    def median_ms(self):
        """The median of the timed runs, in milliseconds."""
        ordered = sorted(self._millis)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2

    @property
    def min_ms(self):
        """The fastest timed run, in milliseconds."""
        return min(self._millis)

    def __repr__(self):
        return f"Timings({list(self._millis)!r})"


class RunResult(dict):
    """What hostir.run returns: a dict of output name to the output's global
    tensor (in the inputs' library: torch tensors when an input was one,
    NumPy arrays otherwise), which also carries the run's measurements."""

    def __init__(self, outputs, stats, remarks=(), check_report=None):
        super().__init__(outputs)
        millis, peak, trace_bytes, truncated, issue_millis, races, disagreements = stats
        #: The timed runs (Timings), one per repetition, in milliseconds.
        self.timings = Timings(millis)
        #: Per timed run, rank 0's host time until all its work was issued
        #: (with graph=True: the graph launched), in milliseconds.
        self.issue_timings = Timings(issue_millis)
        #: The most tensor memory any rank held at once in the last run
        #: (inputs read in place are the caller's, and do not count).
        self.peak_memory_bytes = peak
        #: With trace: the trace file's size in bytes (0 without).
        self.trace_bytes = trace_bytes
        #: With trace: whether some rank reached the trace limit and stopped recording.
        self.trace_truncated = trace_truncated = truncated
        #: With race_check=True: each race the issued work made, with both accesses' positions.
        self.races = list(races)
        #: With check=True: the comparison with the serial reference, one line per output.
        self.check_report = check_report
        #: With remarks=True: the passes' remarks, as `hostir run --remarks` prints them.
        self.remarks = list(remarks)
        self._disagreements = list(disagreements)


# The keywords of run and compile that are not run options (the table's rows).
_RUN_KEYWORDS_DOC = """
    Inputs are global tensors: NumPy arrays, torch tensors (CPU) or any
    object with __dlpack__. The program reads the caller's memory in place
    when the dtype is the declared one (bf16: torch.bfloat16, or
    ml_dtypes.bfloat16 for NumPy) and the tensor is C-contiguous; otherwise
    `copy_inputs=True` lets hostir convert a copy, and without it
    hostir.Error names the input and what differs. Outputs come back in
    the inputs' library (torch in, torch out), new for every run; `out=`
    maps output names to the caller's own tensors, which the run writes.
    `remarks=True` keeps the passes' remarks (RunResult.remarks); `check=True`
    compares every output with the serial reference run and raises
    hostir.Error (kind "run") when one differs beyond its dtype's tolerance.

    Every other keyword is an option of `hostir run`, by the same name and
    bounds (underscores for dashes):
"""


def _options_doc():
    lines = []
    for row in _RUN_OPTIONS.values():
        default = {"true": "True", "false": "False"}.get(row.default, row.default)
        if row.type in ("path", "text", "choice"):
            default = repr(row.default) if row.default else "None"
        lines.append(f"    {row.name}={default}: {row.help} ({row.wanted}).")
    return "\n".join(lines)


@_raising_hostir_errors
def run(program, inputs=None, ranks=1, passes=(), params=None, streams=_hostir.DEFAULT_STREAMS, seed=0, *,
        out=None, copy_inputs=False, remarks=False, check=False, **options):
    """Runs the program (after `passes`, checked first) on `ranks` in-process
    ranks. `inputs` maps input names to global tensors. Given none, every
    input is filled from `seed`; given some, every input must be given (a
    missing one raises hostir.Error naming it), unless `fill_missing=True`,
    which fills those not given from `seed`.

    Returns a RunResult: a dict of every output's global tensor by name (the
    last run's), with the timed runs' milliseconds in `.timings`. Ctrl-C
    (KeyboardInterrupt) stops every rank and is raised within a second.
    """
    program = _program(program)
    run_options = _run_options(program, params, passes, dict(options, ranks=ranks, streams=streams, seed=seed))
    declared = program.tensors(run_options.params, int(run_options.get("ranks")))
    request = _Request(declared, inputs, out, _flag("copy_inputs", copy_inputs))
    stats, collected = _hostir.run(program._impl, request.inputs, request.arrays, run_options)
    report = _checked(program, run_options, request, stats) if _flag("check", check) else None
    return request.result(stats, collected if _flag("remarks", remarks) else (), report)


@_raising_hostir_errors
def compile(program, ranks=1, passes=(), params=None, streams=_hostir.DEFAULT_STREAMS, seed=0, *,
            copy_inputs=False, remarks=False, check=False, launcher="in-process", comm=None, **options):
    """Prepares the program once for `run`'s options (all but the inputs):
    the passes, the proof, the team of `ranks` in-process ranks, the
    backend, its streams and its buffers. Returns an Executable, whose
    run(inputs) returns what hostir.run returns, for little more than the
    program's own time:

        with hostir.compile(p, ranks=2, passes=["assign-streams"]) as exe:
            for step in range(1000):
                y = exe.run({"x": x, "w": w})["y"]

    A run takes every input or none (then every input is filled from
    `seed`); `fill_missing=True` fills those not given from `seed`, as in
    hostir.run. `graph=True` (CUDA) captures the program once into a CUDA
    graph that every run replays; it is refused with the reason where it
    cannot be. Flags take True or False only. Ctrl-C (KeyboardInterrupt)
    stops the preparation or a run within a second. `copy_inputs` and
    `check` are every run's default; `remarks=True` keeps the passes'
    remarks in Executable.remarks.

    `launcher="mpi"` makes this process one rank of the MPI job that
    `mpirun` started (MPI_COMM_WORLD), as `hostir run` under mpirun is;
    `comm=` an mpi4py communicator makes it one rank of that communicator's
    team instead. Every rank of the team calls compile, then every run,
    with the same program, options and global inputs; the team is the
    communicator's, so `ranks` stays 1. A run's outputs come back on the
    communicator's rank 0; the other ranks' results hold the replicated
    outputs (declared without shard), each rank's own copy.
    MPI is initialized with MPI_THREAD_MULTIPLE when nobody has (mpi4py
    does so when imported) and finalized at exit if hostir initialized it.
    """
    program = _program(program)
    team = _mpi_team(launcher, comm, ranks)
    run_options = _run_options(program, params, passes,
                               dict(options, ranks=1 if team else ranks, streams=streams, seed=seed))
    settings = _RunSettings(_flag("copy_inputs", copy_inputs), _flag("check", check), _flag("remarks", remarks))
    if team is None:
        declared = program.tensors(run_options.params, int(run_options.get("ranks")))
        return Executable(_hostir.Executable(program._impl, run_options), declared, program, run_options, settings)
    handle, rank, size = team
    declared = program.tensors(run_options.params, size)
    mpi = _mpi_module()
    impl = _hostir.Executable(program._impl, run_options, mpi.compile, handle)
    executable = Executable(impl, declared, program, run_options, settings, rank=rank, team_size=size)
    _MPI_EXECUTABLES.add(executable)
    return executable




_MPI = None  # the _hostir_mpi module, once launcher="mpi" needs it
_MPI_EXECUTABLES = weakref.WeakSet()  # closed before hostir finalizes MPI


def _mpi_module():
    """_hostir_mpi, with MPI initialized (and finalized at exit when hostir initialized it)."""
    global _MPI
    if _MPI is None:
        from . import _hostir_mpi
        if _hostir_mpi.initialize():
            def finalize():
                for executable in list(_MPI_EXECUTABLES):
                    executable.close()
                _hostir_mpi.finalize()
            atexit.register(finalize)
        _MPI = _hostir_mpi
    return _MPI


# The environment mpirun (Open MPI, MPICH's Hydra, Slurm's PMI) gives its processes.
_MPI_JOB_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS")


def _mpi_team(launcher, comm, ranks):
    """None for in-process ranks; else (the communicator's handle, this rank, the team's size)."""
    if launcher not in ("in-process", "mpi"):
        raise _usage(f"launcher: '{launcher}' is not one of in-process, mpi")
    if comm is None and launcher == "in-process":
        return None
    if ranks != 1:
        raise _usage(f"ranks: {ranks} with an MPI team, whose size is the communicator's (leave ranks at 1)")
    if comm is None:
        if not any(variable in os.environ for variable in _MPI_JOB_VARIABLES):
            raise _usage("launcher='mpi' runs one rank of an MPI job, and this process is not one: start it with "
                         "mpirun -np N (or pass comm= an mpi4py communicator)")
        handle = 0
    else:
        try:
            from mpi4py import MPI
        except ImportError:
            raise _usage("comm: an mpi4py communicator is wanted, and mpi4py is not installed") from None
        if not isinstance(comm, MPI.Comm):
            raise _usage(f"comm: an mpi4py communicator is wanted, not {type(comm).__name__}")
        handle = MPI._handleof(comm)
    rank, size = _mpi_module().rank_and_size(handle)
    return handle, rank, size


class Executable:
    """A program prepared by hostir.compile, run as often as wanted.

    One run at a time: a run called while another runs on another thread
    waits for it. A failed run (a rank's error, Ctrl-C) raises and leaves
    the executable usable; its next run starts the ranks afresh. close()
    (or leaving a `with` block) frees the ranks and their buffers; a closed
    executable raises hostir.Error."""

    __slots__ = ("_impl", "_declared", "_program", "_options", "_settings", "_rank", "_team_size", "__weakref__")

    def __init__(self, impl, declared, program, options, settings, rank=0, team_size=None):
        self._impl = impl
        self._declared = declared
        self._program = program  # before the passes: what check=True's reference runs
        self._options = options
        self._settings = settings
        self._rank = rank  # this process's rank of an MPI team; 0 for in-process ranks
        self._team_size = team_size  # an MPI team's size; None for in-process ranks

    @_raising_hostir_errors
    def run(self, inputs=None, *, out=None, copy_inputs=None, check=None):
        """Runs once (after the compiled `warmup`, `repeat` times) with these
        global inputs; returns a RunResult, as hostir.run does, and takes its
        `out`, `copy_inputs` and `check` (None: compile's). On an MPI team it
        is collective: rank 0's result holds every output, the other ranks'
        the replicated outputs (declared without shard), each rank's own
        copy."""
        if self._impl.closed:
            raise _usage("the executable is closed")
        copy_inputs = self._settings.copy_inputs if copy_inputs is None else _flag("copy_inputs", copy_inputs)
        check = self._settings.check if check is None else _flag("check", check)
        # Ranks but the first receive the replicated outputs only, each its own copy.
        declared = [t for t in self._declared if self._rank == 0 or t.is_input or t.shard_axis is None]
        request = _Request(declared, inputs, out, copy_inputs)
        stats = self._impl.run(request.inputs, request.arrays)
        if self._rank != 0:
            return request.result(stats, (), None)
        report = _checked(self._program, self._options, request, stats, self._team_size) if check else None
        return request.result(stats, (), report)

    def close(self):
        """Stops the ranks and frees their buffers; closing twice is allowed."""
        self._impl.close()

    @property
    def closed(self):
        """Whether close() was called (a closed executable raises on run)."""
        return self._impl.closed

    @property
    def tensors(self):
        """The inputs and outputs (Tensor), with their global shapes as compiled."""
        return list(self._declared)

    @property
    def rank(self):
        """This process's rank of an MPI team (compile's launcher="mpi" or
        comm=); 0 for in-process ranks, whose results all come back here."""
        return self._rank

    @property
    def program_name(self):
        """The name after `program` in the compiled program's source."""
        return self._program.name

    @property
    def remarks(self):
        """With compile(remarks=True): the passes' remarks, as `hostir run --remarks` prints them."""
        return list(self._impl.remarks) if self._settings.remarks else []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# What compile keeps for every run besides the run options.
_RunSettings = collections.namedtuple("_RunSettings", "copy_inputs check remarks")


class _Request:
    """One call's tensors: the inputs as the C++ half reads them, the
    arrays it writes the outputs into, and what the caller receives."""

    def __init__(self, declared, inputs, out, copy_inputs):
        inputs, out = _named("inputs", inputs), _named("out", out)
        declared_inputs = {t.name: t for t in declared if t.is_input}
        self.inputs = {}
        for name, value in inputs.items():
            decl = declared_inputs.get(name)
            if decl is None:
                known = ", ".join(declared_inputs) or "none"
                raise _usage(f"the program has no input named '{name}' (its inputs: {known})")
            self.inputs[name] = _tensors.input_array(decl, value, copy_inputs)
        # The caller's tensors stay referenced here for the whole run.
        self._given = (inputs, out)
        library = _tensors.library_of(list(inputs.values()) + list(out.values()))
        self.arrays, self._results, self._unfinished = _tensors.output_buffers(declared, library, out)

    def result(self, stats, remarks, check_report):
        outputs = _tensors.finish_outputs(self._results, self._unfinished)
        return RunResult(outputs, stats, remarks, check_report)


def _checked(program, options, request, stats, team_size=None):
    """check=True: every output against the serial reference run of the
    program before its passes, on the same inputs (and seed); raises
    hostir.Error (kind "run") when one differs, as `hostir run --check` fails."""
    reference = _hostir.RunOptions()
    reference.params = options.params
    for name in ("streams", "seed", "fill_missing", "unchecked", "comm_timeout", "cores_per_rank"):
        reference.set(name, options.get(name))
    reference.set("ranks", str(team_size) if team_size else options.get("ranks"))
    reference.reference = True
    actual = {name: _tensors.as_array(buffer) for name, buffer in request.arrays.items()}
    expected = {name: np.empty_like(array) for name, array in actual.items()}
    _hostir.run(program._impl, request.inputs, expected, reference)
    ok, report = _hostir.compare_outputs(actual, expected)
    disagreements = list(stats[6])
    if ok and not disagreements:
        return report
    message = "\n".join(["check: FAILED", report] + disagreements)
    raise Error(f"error: {message}", kind="run", message=message)


_RunOption = collections.namedtuple("_RunOption", "name type min max choices default wanted help")
# The run option table's rows (include/hostir/run_option_table.h), by keyword.
_RUN_OPTIONS = {row[0]: _RunOption(*row) for row in _hostir.run_option_rows()}
run.__doc__ += _RUN_KEYWORDS_DOC + _options_doc()
compile.__doc__ += _RUN_KEYWORDS_DOC + _options_doc()


def _run_options(program, params, passes, given):
    """The API's run options from run's and compile's keywords: each a row
    of the table, checked by it; an unknown keyword is a TypeError."""
    options = _hostir.RunOptions()
    options.params, options.passes = _params(params, program), _passes(passes)
    for name, value in given.items():
        row = _RUN_OPTIONS.get(name)
        if row is None:
            closest = difflib.get_close_matches(name, list(_RUN_OPTIONS) + ["out", "copy_inputs", "remarks", "check"],
                                                n=1)
            hint = f"; did you mean '{closest[0]}'?" if closest else ""
            raise TypeError(f"got an unexpected keyword argument '{name}'{hint}")
        if value is None and row.type == "path":
            continue  # no trace, no machine
        options.set(name, _option_text(row, value))
    return options


def _option_text(row, value):
    """A keyword's value as the command line writes it, once its Python
    type is right; the table checks its bounds."""
    wanted = f"{row.name}: must be {row.wanted}, got "
    if row.type == "integer":
        if not _is_integer(value):
            raise _type_usage(wanted + repr(value))
        number = operator.index(value)
        if not row.min <= number <= row.max:
            raise _usage(wanted + str(number))
        return str(number)
    if row.type == "number":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise _type_usage(wanted + repr(value))
        number = float(value)
        if not row.min <= number <= row.max:  # never nan
            raise _usage(wanted + f"{number:g}")
        return repr(number)
    if row.type == "flag":
        return "true" if _flag(row.name, value) else "false"
    if row.type == "path" and isinstance(value, os.PathLike):
        return os.fspath(value)
    if not isinstance(value, str):
        raise _type_usage(f"{row.name}: must be {row.wanted}, got {value!r}")
    return value


def _named(what, mapping):
    if mapping is None:
        return {}
    if not isinstance(mapping, collections.abc.Mapping):
        raise TypeError(f"{what} must map names to tensors, not be a {type(mapping).__name__}")
    return dict(mapping)


def _program(program):
    return program if isinstance(program, Program) else parse(program)


def _machine(machine):
    return "" if machine is None else os.fspath(machine)


def _params(params, program):
    if params is None:
        return {}
    defaults = program._impl.default_params()
    return {str(name): _param_value(str(name), value, defaults.get(str(name)))
            for name, value in dict(params).items()}


# The options' numbers, checked against the bounds the bindings give
# (include/hostir/limits.h and the options' C++ types) and refused in the
# command line's words: "seed: must be an integer from 0 to 2^64 - 1, got -1".

def _ranks(ranks):
    return _integer("ranks", ranks, 1, _hostir.MAX_RANKS)


def _streams(streams):
    return _integer("streams", streams, 1, _hostir.MAX_STREAMS)


def _min_gain(min_gain):
    return _number("min_gain", min_gain, _hostir.MIN_MIN_GAIN, _hostir.MAX_MIN_GAIN)


def _integer(option, value, lo, hi):
    """A Python or NumPy integer (never a bool, never a float) within [lo, hi]."""
    wanted = f"must be an integer from {_bound_text(lo)} to {_bound_text(hi)}"
    if not _is_integer(value):
        raise _type_usage(f"{option}: {wanted}, got {value!r}")
    number = operator.index(value)
    if not lo <= number <= hi:
        raise _usage(f"{option}: {wanted}, got {number}")
    return number


def _param_value(name, value, default):
    """A parameter's value as its default's kind takes it (an int, a float, a
    dtype), refused in the words of `--set`. A name the program lacks is
    checked as an integer; the library names the program's parameters."""
    if isinstance(default, _hostir.DType):
        return _dtype_param(name, value)
    if isinstance(default, float):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise _type_usage(f"params: {name}: {value!r} is not a finite number")
        return float(value)
    wanted = f"params: {name}: {{}} is not a non-negative integer that fits in 64 bits"
    if not _is_integer(value):
        raise _type_usage(wanted.format(repr(value)))
    number = operator.index(value)
    if not 0 <= number <= _hostir.MAX_PARAM:
        raise _usage(wanted.format(number))
    return number


# The names a dtype parameter takes besides hostir's own (f32, bf16, ...):
# NumPy's and PyTorch's spellings of the same types.
_DTYPE_SPELLINGS = {"float32": "f32", "float": "f32", "float16": "f16", "half": "f16", "bfloat16": "bf16",
                    "float64": "f64", "double": "f64", "int32": "i32"}


def _dtype_param(name, value):
    """A dtype: hostir's name ("bf16"), a NumPy dtype or type, or a torch dtype."""
    if isinstance(value, _hostir.DType):
        return value
    text = None
    if isinstance(value, str):
        text = value
    elif isinstance(value, (np.dtype, type)):
        try:
            text = np.dtype(value).name
        except TypeError:
            text = None
    elif type(value).__module__ == "torch":  # torch.bfloat16 prints as "torch.bfloat16"
        text = str(value).removeprefix("torch.")
    member = _hostir.DType.__members__.get(_DTYPE_SPELLINGS.get(text, text)) if text is not None else None
    if member is None:
        raise _type_usage(f"params: {name}: {value!r} is not a dtype (f32, f16, bf16, f64 or i32)")
    return member


def _number(option, value, lo, hi):
    """A real number (never a bool, never nan or inf) within [lo, hi]."""
    wanted = f"must be a number from {lo:g} to {hi:g}"
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _type_usage(f"{option}: {wanted}, got {value!r}")
    number = float(value)
    if not lo <= number <= hi:
        raise _usage(f"{option}: {wanted}, got {number:g}")
    return number


def _flag(option, value):
    """True or False (NumPy's included): a string such as 'no' is a mistake, not true."""
    if not isinstance(value, (bool, np.bool_)):
        raise _type_usage(f"{option}: must be True or False, got {value!r}")
    return bool(value)


def _is_integer(value):
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, numbers.Integral)


def _bound_text(bound):
    """A bound as the command line writes it: 2^64 - 1 rather than its 20 digits."""
    if bound >= 2**32 and (bound + 1) & bound == 0:
        return f"2^{bound.bit_length()} - 1"
    return str(bound)


def _passes(passes):
    # A string is the command line's comma-separated list.
    if isinstance(passes, str):
        return passes.split(",") if passes else []
    return [str(name) for name in passes]


def _warn(message, category):
    """warnings.warn at the first frame outside this module: the line that
    called the public function, whichever it was and however many of the
    module's frames lie between (the compiled half calls it too)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
