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
import functools
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

Note = collections.namedtuple("Note", "file line column message")
Note.__doc__ = """A note that explains a finding ("the other access"): its file,
line and column ("" and 0 when it has no position) and its message."""

Finding = collections.namedtuple("Finding", "file line column severity message notes")
Finding.__doc__ = """One thing an Error reports (a check error has one per race,
uninitialized read or mismatch; any other error exactly one): file, line
and column ("" and 0 when it has no position), severity ("error"), message,
and notes (a list of Note)."""


class Error(Exception):
    """A failed hostir call. str() is the full report ("file:line:col: error:
    message", then the source line and a caret, where there is a position).

    Attributes: kind ("program", "check", "run", "usage" or "runtime"),
    message (without the position), file, line and column (the first
    positioned finding's; empty and 0 when the error has no position), and
    findings, a list of Finding, each with its position and notes.
    """

    def __init__(self, text, *, kind="usage", message=None, file="", line=0, column=0, findings=None):
        super().__init__(text)
        #: "program", "check", "run", "usage" or "runtime".
        self.kind = kind
        #: The message without its position.
        self.message = text if message is None else message
        #: The file of the error's position ("" when none).
        self.file = file
        #: The error's line (0 when it has no position).
        self.line = line
        #: The error's column (0 when it has no position).
        self.column = column
        if findings is None:
            findings = [(file, line, column, "error", self.message, [])]
        #: Every finding, as Finding, in the order str() reports them.
        self.findings = [Finding(f, ln, col, sev, msg, [Note(*n) for n in notes])
                         for f, ln, col, sev, msg, notes in findings]


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

# The NumPy array each dtype travels in between the two halves; bf16 as its
# 16-bit patterns.
_STORAGE = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16, "i32": np.int32}


class _ArgumentTypeError(Error, TypeError):
    """An argument of the wrong type: a hostir.Error (kind "usage") that is
    also the TypeError Python code expects."""


class _ArgumentValueError(Error, ValueError):
    """An argument out of range: a hostir.Error (kind "usage") that is also a ValueError."""


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
        """Every parameter with its default value."""
        return dict(self._impl.default_params())

    @_raising_hostir_errors
    def tensors(self, params=None, ranks=1):
        """The inputs, then the outputs, as Tensor, with global shapes bound
        to these parameter values and rank count."""
        rows = self._impl.tensors(_params(params), _ranks(ranks))
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
    _hostir.check(_program(program)._impl, _ranks(ranks), _params(params), _streams(streams))


@_raising_hostir_errors
def simulate(program, machine, ranks=1, passes=(), params=None):
    """Predicts the program (after `passes`) on `machine`, a shipped profile's
    name ("h100-nvlink") or a profile file from `hostir calibrate`. Returns
    the figures `hostir simulate` prints: median_ms, compute_ms, comm_ms,
    exposed_comm_ms (milliseconds) and E (overlap efficiency). What the
    prediction assumed where the profile has no figure (attention at the
    GEMM rate, say) is warned as a ModelAssumption, as `hostir simulate`
    prints it on an `assumed:` line, at the line that called simulate."""
    figures, assumptions = _hostir.simulate(_program(program)._impl, os.fspath(machine), _ranks(ranks),
                                            _passes(passes), _params(params))
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
    rewritten, remarks = _hostir.apply_passes(_program(program)._impl, _passes(passes), _ranks(ranks),
                                              _params(params), _streams(streams), _machine(machine),
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
    NumPy array, which also carries the run's measurements."""

    def __init__(self, outputs, timings, peak_memory_bytes, trace_bytes, trace_truncated, issue_timings=None):
        super().__init__(outputs)
        #: The timed runs (Timings), one per repetition, in milliseconds.
        self.timings = timings
        #: Per timed run, rank 0's host time until all its work was issued
        #: (with graph=True: the graph launched), in milliseconds.
        self.issue_timings = issue_timings
        #: The most tensor memory any rank held at once in the last run.
        self.peak_memory_bytes = peak_memory_bytes
        #: With trace: the trace file's size in bytes (0 without).
        self.trace_bytes = trace_bytes
        #: With trace: whether some rank reached the trace limit and stopped recording.
        self.trace_truncated = trace_truncated


@_raising_hostir_errors
def run(program, inputs=None, ranks=1, passes=(), params=None, streams=_hostir.DEFAULT_STREAMS, seed=0, *,
        backend="auto", communicator="auto", warmup=0, repeat=1, trace=None, machine=None,
        min_gain=_hostir.DEFAULT_MIN_GAIN, fill_missing=False):
    """Runs the program (after `passes`, checked first) on `ranks` in-process
    ranks. `inputs` maps input names to global arrays. Given none, every
    input is filled from `seed`; given some, every input must be given (a
    missing one raises hostir.Error naming it), unless `fill_missing`
    (True or False), which fills those not given from `seed`.

    The command line's run options are keywords: `backend` ("auto", "cpu"
    or "cuda"), `communicator` ("auto", "nccl" or "copy-engine"), `warmup`
    untimed runs then `repeat` timed ones, `trace` (a path: the last run's
    timeline as a Chrome trace for Perfetto), `machine` and `min_gain` for
    passes that consult the cost model.

    Returns a RunResult: a dict of every output's global tensor by name (the
    last run's), with the timed runs' milliseconds in `.timings`. Ctrl-C
    (KeyboardInterrupt) stops every rank and is raised within a second."""
    program = _program(program)
    options = _run_options(params=params, ranks=ranks, passes=passes, streams=streams, seed=seed, backend=backend,
                           communicator=communicator, warmup=warmup, repeat=repeat, trace=trace, machine=machine,
                           min_gain=min_gain, fill_missing=fill_missing)
    declared = program.tensors(options.params, options.ranks)
    arrays = _input_arrays(declared, inputs)
    outputs = _output_arrays(declared)
    stats = _hostir.run(program._impl, arrays, outputs, options)
    return _run_result(outputs, stats)


@_raising_hostir_errors
def compile(program, ranks=1, passes=(), params=None, streams=_hostir.DEFAULT_STREAMS, seed=0, *,
            backend="auto", communicator="auto", warmup=0, repeat=1, trace=None, machine=None,
            min_gain=_hostir.DEFAULT_MIN_GAIN, fill_missing=False, graph=False, launcher="in-process", comm=None):
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
    stops the preparation or a run within a second.

    `launcher="mpi"` makes this process one rank of the MPI job that
    `mpirun` started (MPI_COMM_WORLD), as `hostir run` under mpirun is;
    `comm=` an mpi4py communicator makes it one rank of that communicator's
    team instead. Every rank of the team calls compile, then every run,
    with the same program, options and global inputs; the team is the
    communicator's, so `ranks` stays 1. A run's outputs come back on the
    communicator's rank 0; the other ranks' results hold the timings only.
    MPI is initialized with MPI_THREAD_MULTIPLE when nobody has (mpi4py
    does so when imported) and finalized at exit if hostir initialized it."""
    program = _program(program)
    team = _mpi_team(launcher, comm, ranks)
    options = _run_options(params=params, ranks=1 if team else ranks, passes=passes, streams=streams, seed=seed,
                           backend=backend, communicator=communicator, warmup=warmup, repeat=repeat, trace=trace,
                           machine=machine, min_gain=min_gain, fill_missing=fill_missing)
    options.graph = _flag("graph", graph)
    if team is None:
        declared = program.tensors(options.params, options.ranks)
        return Executable(_hostir.Executable(program._impl, options), declared)
    handle, rank, size = team
    declared = program.tensors(options.params, size)
    mpi = _mpi_module()
    impl = _hostir.Executable(program._impl, options, mpi.compile, handle)
    executable = Executable(impl, declared, leader=rank == 0)
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

    __slots__ = ("_impl", "_declared", "_leader", "__weakref__")

    def __init__(self, impl, declared, leader=True):
        self._impl = impl
        self._declared = declared
        self._leader = leader  # whether its runs' outputs come back here (rank 0 of an MPI team)

    @_raising_hostir_errors
    def run(self, inputs=None):
        """Runs once (after the compiled `warmup`, `repeat` times) with these
        global input arrays; returns a RunResult, as hostir.run does. On an
        MPI team it is collective, and only rank 0's result holds outputs."""
        if self._impl.closed:
            raise _usage("the executable is closed")
        arrays = _input_arrays(self._declared, inputs)
        outputs = _output_arrays(self._declared)
        stats = self._impl.run(arrays, outputs)
        return _run_result(outputs if self._leader else {}, stats)

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

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _run_options(*, params, ranks, passes, streams, seed, backend, communicator, warmup, repeat, trace, machine,
                 min_gain, fill_missing):
    options = _hostir.RunOptions()
    options.params, options.ranks, options.passes = _params(params), _ranks(ranks), _passes(passes)
    options.streams = _streams(streams)
    options.seed = _integer("seed", seed, 0, _hostir.MAX_SEED)
    options.backend, options.communicator = str(backend), str(communicator)
    options.warmup = _integer("warmup", warmup, 0, _hostir.MAX_RUNS)
    options.repeat = _integer("repeat", repeat, 1, _hostir.MAX_RUNS)
    options.trace = "" if trace is None else os.fspath(trace)
    if trace is not None and not options.trace:
        raise _usage("trace: the path is empty (None: no trace)")
    options.machine, options.min_gain = _machine(machine), _min_gain(min_gain)
    options.fill_missing = _flag("fill_missing", fill_missing)
    return options


def _input_arrays(declared, inputs):
    declared_inputs = {t.name: t for t in declared if t.is_input}
    arrays = {}
    for name, value in _inputs(inputs).items():
        decl = declared_inputs.get(name)
        if decl is None:
            known = ", ".join(declared_inputs) or "none"
            raise _usage(f"the program has no input named '{name}' (its inputs: {known})")
        arrays[name] = _input_array(decl, value)
    return arrays


def _output_arrays(declared):
    return {t.name: np.empty(t.shape, dtype=_STORAGE[t.dtype]) for t in declared if not t.is_input}


def _run_result(outputs, stats):
    millis, peak, trace_bytes, truncated, issue_millis = stats
    outputs = {name: _bf16_to_float32(array) if array.dtype == np.uint16 else array for name, array in outputs.items()}
    return RunResult(outputs, Timings(millis), peak, trace_bytes, truncated, Timings(issue_millis))


def _program(program):
    return program if isinstance(program, Program) else parse(program)


def _machine(machine):
    return "" if machine is None else os.fspath(machine)


def _inputs(inputs):
    if inputs is None:
        return {}
    if not isinstance(inputs, collections.abc.Mapping):
        raise TypeError(f"inputs must map input names to arrays, not be a {type(inputs).__name__}")
    return inputs


def _params(params):
    if params is None:
        return {}
    return {str(name): _param_value(str(name), value) for name, value in dict(params).items()}


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


def _param_value(name, value):
    """A parameter's value, refused in the words of `--set`."""
    wanted = f"params: {name}: {{}} is not a non-negative integer that fits in 64 bits"
    if not _is_integer(value):
        raise _type_usage(wanted.format(repr(value)))
    number = operator.index(value)
    if not 0 <= number <= _hostir.MAX_PARAM:
        raise _usage(wanted.format(number))
    return number


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


def _usage(message):
    return _ArgumentValueError(f"error: {message}", message=message)


def _type_usage(message):
    return _ArgumentTypeError(f"error: {message}", message=message)


def _warn(message, category):
    """warnings.warn at the first frame outside this module: the line that
    called the public function, whichever it was and however many of the
    module's frames lie between (the compiled half calls it too)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _input_array(decl, value):
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise _usage(f"input '{decl.name}': expected real numbers, got an array of {array.dtype}")
    if array.shape != decl.shape:
        shape = ", ".join(map(str, decl.shape))
        raise _usage(f"input '{decl.name}': the array has shape {array.shape}, "
                     f"the program declares {decl.dtype}[{shape}] (the global tensor)")
    if decl.dtype == "bf16":
        return _round_to_bf16(array)
    if decl.dtype == "i32":
        return _indices(decl, array)
    return _c_order(array, _STORAGE[decl.dtype])


def _indices(decl, array):
    """An i32 input: integers (or booleans), each within int32, never rounded from floats."""
    if array.dtype.kind not in "biu":
        raise _usage(f"input '{decl.name}' is i32 (indices): expected an integer array, got an array of {array.dtype}")
    limits = np.iinfo(np.int32)
    if array.size and array.dtype.kind != "b" and (array.min() < limits.min or array.max() > limits.max):
        raise _usage(f"input '{decl.name}' is i32 (indices): its values must lie within int32, "
                     f"got {array.min()} to {array.max()}")
    return _c_order(array, np.int32)


def _c_order(array, dtype):
    """The array in C order as `dtype`, in its own shape: np.ascontiguousarray
    would make a 0-d array 1-d."""
    return np.asarray(array, dtype=dtype, order="C")


def _round_to_bf16(array):
    """bf16 bit patterns (uint16) of the nearest bf16 values, ties to even,
    in the array's shape (0-d included)."""
    # Flat: NumPy's integer arithmetic on a 0-d array gives scalars of other types.
    shape, array = array.shape, array.reshape(-1)
    if array.dtype == np.float32:
        bits = np.ascontiguousarray(array).view(np.uint32)
    else:
        # Through float32 rounded to odd (toward zero, inexact results made
        # odd), so that the second rounding cannot round a tie it created.
        wide = np.asarray(array, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            nearest = wide.astype(np.float32)
            away = np.abs(nearest.astype(np.float64)) > np.abs(wide)
            truncated = np.where(away, np.nextafter(nearest, np.float32(0)), nearest).astype(np.float32)
            inexact = truncated.astype(np.float64) != wide
        bits = np.ascontiguousarray(truncated).view(np.uint32) | inexact.astype(np.uint32)
    bits = bits.astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    # NaN stays NaN (quiet), whatever its payload.
    is_nan = (bits & 0x7FFFFFFF) > 0x7F800000
    return np.where(is_nan, (bits >> 16) | 0x0040, rounded).astype(np.uint16).reshape(shape)


def _bf16_to_float32(bits):
    return (bits.reshape(-1).astype(np.uint32) << 16).view(np.float32).reshape(bits.shape)
