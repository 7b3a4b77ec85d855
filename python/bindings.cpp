// The C++ half of the Python package `hostir` (python/hostir/__init__.py is
// the other half, and the public face): Program values and the API calls,
// on NumPy arrays that the Python half has already converted to the storage
// of the declared dtypes. Every hostir::api::Error leaves as hostir.Error,
// with its kind and position.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <hostir/hostir.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace py = pybind11;
namespace api = hostir::api;
using namespace pybind11::literals;

// A parameter's value (api::ParamValue) to and from Python: the DType enum,
// a float or an int. stl.h's variant caster would try int64_t first and
// take a DType for its integer, which pybind11's enums convert to.
namespace pybind11::detail {
template <>
struct type_caster<api::ParamValue> {
  PYBIND11_TYPE_CASTER(api::ParamValue, const_name("int | float | DType"));

  bool load(handle src, bool convert) {
    if (isinstance<api::DType>(src)) {
      value = src.cast<api::DType>();
      return true;
    }
    if (PyFloat_Check(src.ptr())) {
      value = src.cast<double>();
      return true;
    }
    make_caster<int64_t> integer;
    if (PyBool_Check(src.ptr()) || !integer.load(src, convert)) return false;
    value = cast_op<int64_t>(integer);
    return true;
  }

  static handle cast(const api::ParamValue& v, return_value_policy policy, handle parent) {
    return std::visit([&](const auto& x) { return make_caster<std::decay_t<decltype(x)>>::cast(x, policy, parent); },
                      v);
  }
};
}  // namespace pybind11::detail

namespace {

std::string kindName(api::ErrorKind kind) {
  switch (kind) {
    case api::ErrorKind::Program: return "program";
    case api::ErrorKind::Check: return "check";
    case api::ErrorKind::Run: return "run";
    case api::ErrorKind::Usage: return "usage";
    case api::ErrorKind::Runtime: return "runtime";
  }
  return "runtime";
}

api::Error usageError(const std::string& message) {
  return api::Error(api::ErrorKind::Usage, message, "error: " + message);
}

// Error text quotes what it was given (a profile's bytes, a path), which
// need not be UTF-8: invalid bytes become U+FFFD rather than a decode error
// in place of the message.
py::str text(const std::string& bytes) {
  PyObject* decoded = PyUnicode_DecodeUTF8(bytes.data(), static_cast<Py_ssize_t>(bytes.size()), "replace");
  if (decoded == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(decoded);
}

// (file, line, column, severity, message, [(file, line, column, message)]):
// the Python half makes hostir.Finding and hostir.Note of them.
py::list findingRows(const api::Error& error) {
  py::list rows;
  for (const api::Finding& f : error.findings()) {
    py::list notes;
    for (const api::FindingNote& n : f.notes)
      notes.append(py::make_tuple(text(n.file), n.line, n.column, text(n.message)));
    rows.append(py::make_tuple(text(f.file), f.line, f.column, text(f.severity), text(f.message), notes));
  }
  return rows;
}

// hostir.Error lives in the Python half, which has imported this module
// before any call can fail. A usage error is also a ValueError: a value
// out of its bounds, an unknown name, a closed executable.
void raiseAsPythonError(const api::Error& error) {
  py::object errorType =
      py::module_::import("hostir").attr(error.kind() == api::ErrorKind::Usage ? "_ArgumentValueError" : "Error");
  py::object instance =
      errorType(text(error.what()), "kind"_a = kindName(error.kind()), "message"_a = text(error.message()),
                "file"_a = text(error.file()), "line"_a = error.line(), "column"_a = error.column(),
                "findings"_a = findingRows(error));
  PyErr_SetObject(errorType.ptr(), instance.ptr());
}

// The storage the Python half uses for each dtype; NumPy has no bf16, so its
// 16-bit patterns travel as uint16; i32 (indices) is int32.
api::DType storageDType(const std::string& name, const py::array& array) {
  py::dtype dtype = array.dtype();
  if (dtype.kind() == 'f' && dtype.itemsize() == 4) return api::DType::F32;
  if (dtype.kind() == 'f' && dtype.itemsize() == 8) return api::DType::F64;
  if (dtype.kind() == 'f' && dtype.itemsize() == 2) return api::DType::F16;
  if (dtype.kind() == 'u' && dtype.itemsize() == 2) return api::DType::BF16;
  if (dtype.kind() == 'i' && dtype.itemsize() == 4) return api::DType::I32;
  throw usageError("'" + name + "': arrays must be float32, float64, float16, uint16 (bf16 bits) or int32, got " +
                   std::string(py::str(dtype)));
}

// A tensor the Python half has already checked (a torch tensor: its dtype
// as the declaration's, C-contiguous, on the CPU), given without a NumPy
// view as (address, dtype name, shape, the tensor that owns the memory).
api::HostBuffer addressedBuffer(const py::tuple& tensor) {
  api::HostBuffer buffer;
  buffer.data = reinterpret_cast<void*>(tensor[0].cast<std::uintptr_t>());
  const std::string dtype = tensor[1].cast<std::string>();
  for (api::DType known : {api::DType::F32, api::DType::F16, api::DType::BF16, api::DType::F64, api::DType::I32})
    if (api::toString(known) == dtype) buffer.dtype = known;
  buffer.shape = tensor[2].cast<std::vector<int64_t>>();
  return buffer;
}

api::HostBuffer hostBuffer(const std::string& name, py::object& value, bool written) {
  if (py::isinstance<py::tuple>(value)) return addressedBuffer(value.cast<py::tuple>());
  // Never a conversion here: a copy is the Python half's, and only when allowed.
  if (!py::isinstance<py::array>(value)) throw usageError("'" + name + "': not an array");
  py::array array = py::reinterpret_borrow<py::array>(value);
  // The API reads and writes whole tensors in C order.
  if (!(array.flags() & py::array::c_style)) throw usageError("'" + name + "': the array is not C-contiguous");
  api::HostBuffer buffer;
  buffer.dtype = storageDType(name, array);
  buffer.shape.assign(array.shape(), array.shape() + array.ndim());
  if (written) {
    if (!array.writeable()) throw usageError("'" + name + "': the output array is read-only");
    buffer.data = array.mutable_data();
  } else {
    buffer.data = const_cast<void*>(array.data());
  }
  return buffer;
}

// The maps hold the Python objects, and so the memory, for the whole call.
std::map<std::string, api::HostBuffer> hostBuffers(std::map<std::string, py::object>& arrays, bool written) {
  std::map<std::string, api::HostBuffer> buffers;
  for (auto& [name, array] : arrays) buffers.emplace(name, hostBuffer(name, array, written));
  return buffers;
}

// (name, is_input, dtype, global shape, shard axis or None).
using TensorRow = std::tuple<std::string, bool, std::string, std::vector<int64_t>, std::optional<int64_t>>;

std::vector<TensorRow> tensorRows(const api::Program& program, const api::Params& params, int64_t ranks) {
  std::vector<TensorRow> rows;
  for (const api::TensorDecl& decl : program.tensors(params, ranks))
    rows.emplace_back(decl.name, decl.input, api::toString(decl.dtype), decl.shape, decl.shardAxis);
  return rows;
}

// Runs `run` on a thread of its own while this (the interpreter's) thread
// waits with the GIL released, taking the GIL back every 50 ms to let
// Python's signal handlers run: Ctrl-C sets `cancel`, every rank stops at
// its next operation, and once the run has unwound the handler's exception
// (KeyboardInterrupt) is raised here. Python only runs its handlers on the
// main thread; elsewhere PyErr_CheckSignals does nothing.
template <typename Call>
auto runInterruptibly(const Call& call, std::atomic<bool>& cancel) {
  auto done = std::async(std::launch::async, call);
  while (true) {
    {
      py::gil_scoped_release released;
      if (done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready) break;
    }
    if (PyErr_CheckSignals() == 0) continue;
    py::error_already_set interrupted;  // fetches the handler's exception
    cancel.store(true);
    {
      py::gil_scoped_release released;
      done.wait();
    }
    try {
      done.get();  // "the run was cancelled", or a failure that came first: the signal wins
    } catch (const api::Error&) {
    }
    throw interrupted;
  }
  return done.get();
}

py::tuple statsTuple(const api::RunStats& stats) {
  return py::make_tuple(stats.runMillis, stats.peakMemoryBytes, stats.traceBytes, stats.traceTruncated,
                        stats.issueMillis, stats.races, stats.replicaDisagreements);
}

// The passes' remarks of one call, rendered, when the caller asked for them
// (`remarks=True`); onRemark may be called from any thread.
class CollectedRemarks {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& remark) {
      std::lock_guard lock(mutex_);
      texts_.push_back(remark);
    };
  }
  std::vector<std::string> texts() {
    std::lock_guard lock(mutex_);
    return texts_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> texts_;
};

// The warnings of one call (a pass that stopped at its work limit), given
// to Python's warnings module as hostir.PassWarning once the call returns:
// onWarning may be called with the GIL released, from any thread.
class CollectedWarnings {
 public:
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& warning) {
      std::lock_guard lock(mutex_);
      texts_.push_back(warning);
    };
  }
  // With the GIL held. A filter that makes warnings errors raises the first.
  void warn() {
    std::vector<std::string> texts;
    {
      std::lock_guard lock(mutex_);
      texts.swap(texts_);
    }
    if (texts.empty()) return;
    py::module_ hostir = py::module_::import("hostir");
    py::object category = hostir.attr("PassWarning");
    // The Python half's _warn points the warning at the line that called the public function.
    for (const std::string& warning : texts) hostir.attr("_warn")(text(warning), category);
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> texts_;
};

// An executable and the flag that Ctrl-C sets while it compiles. A run
// waits on this (the interpreter's) thread with the GIL released; every
// 10 ms the waiting thread takes the GIL to let Python's signal handlers
// run (they run on the main thread only), and Ctrl-C cancels the run.
class PythonExecutable {
 public:
  // What prepares the executable with the options PythonExecutable completes.
  using Make = std::function<std::unique_ptr<api::Executable>(const api::RunOptions&)>;
  // The signature of _hostir_mpi's compile capsule.
  using MpiCompile = api::Executable* (*)(std::intptr_t comm, const api::Program&, const api::RunOptions&);

  // In-process ranks.
  PythonExecutable(const api::Program& program, const api::RunOptions& options)
      : PythonExecutable(options,
                         [&](const api::RunOptions& o) { return std::make_unique<api::Executable>(program, o); }) {}

  // One rank of an MPI team: `compile` is _hostir_mpi's (the capsule keeps
  // this module free of MPI), `comm` the communicator's handle, 0 for
  // MPI_COMM_WORLD. Collective over the communicator.
  PythonExecutable(const api::Program& program, const api::RunOptions& options, const py::capsule& compile,
                   std::intptr_t comm)
      : PythonExecutable(options, [&](const api::RunOptions& o) {
          auto onMpi = reinterpret_cast<MpiCompile>(compile.get_pointer());
          return std::unique_ptr<api::Executable>(onMpi(comm, program, o));
        }) {}

  PythonExecutable(api::RunOptions options, const Make& make) {
    options.cancel = cancel_.get();
    CollectedRemarks remarks;
    options.onRemark = remarks.sink();
    options.interruptCheck = [this] {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0) return false;
      interrupted_.emplace();  // fetches the handler's exception (KeyboardInterrupt)
      return true;
    };
    CollectedWarnings warnings;
    options.onWarning = warnings.sink();
    executable_ = runInterruptibly([&] { return make(options); }, *cancel_);
    remarks_ = remarks.texts();
    warnings.warn();
  }

  py::tuple run(std::map<std::string, py::object> inputs, std::map<std::string, py::object> outputs) {
    std::map<std::string, api::HostBuffer> inputBuffers = hostBuffers(inputs, false);
    std::map<std::string, api::HostBuffer> outputBuffers = hostBuffers(outputs, true);
    interrupted_.reset();
    std::optional<api::RunStats> stats;
    std::optional<api::Error> failure;
    {
      py::gil_scoped_release released;
      try {
        stats = executable_->run(inputBuffers, outputBuffers);
      } catch (const api::Error& error) {
        failure = error;
      }
    }
    // "the run was cancelled", or a failure that came first: the signal wins.
    if (interrupted_) {
      py::error_already_set interrupted = std::move(*interrupted_);
      interrupted_.reset();
      throw interrupted;
    }
    if (failure) throw *failure;
    return statsTuple(*stats);
  }
  void close() {
    py::gil_scoped_release released;  // waits for a call in progress on another thread
    executable_->close();
  }
  bool closed() const { return executable_->closed(); }
  const std::vector<std::string>& remarks() const { return remarks_; }

 private:
  std::vector<std::string> remarks_;
  std::unique_ptr<std::atomic<bool>> cancel_ = std::make_unique<std::atomic<bool>>(false);
  std::optional<py::error_already_set> interrupted_;  // set by interruptCheck, with the GIL held
  std::unique_ptr<api::Executable> executable_;
};

// The row of a run option the Python half names (it names only rows).
const api::RunOptionRow& runOptionRow(const std::string& name) {
  const api::RunOptionRow* row = api::findRunOption(name);
  if (row == nullptr) throw usageError("no run option is named '" + name + "'");
  return *row;
}

}  // namespace

namespace {

// Program values and the calls that parse them.
void bindPrograms(py::module_& m) {
  py::class_<api::Program>(m, "Program")
      .def_property_readonly("name", &api::Program::name)
      .def_property_readonly("source_name", &api::Program::sourceName)
      .def("print", &api::Program::print)
      .def("default_params", &api::Program::defaultParams)
      .def("tensors", &tensorRows, "params"_a, "ranks"_a)
      .def(
          "__eq__", [](const api::Program& a, const api::Program& b) { return a == b; }, py::is_operator());

  m.def("parse", &api::Program::parse, "path_or_text"_a, py::call_guard<py::gil_scoped_release>());
  m.def("parse_file", &api::Program::fromFile, "path"_a, py::call_guard<py::gil_scoped_release>());
}

// check, simulate and the passes.
void bindAnalyses(py::module_& m) {
  m.def(
      "check",
      [](const api::Program& program, int64_t ranks, const api::Params& params, int64_t streams) {
        api::CheckOptions options;
        options.params = params;
        options.ranks = ranks;
        options.streams = streams;
        api::check(program, options);
      },
      "program"_a, "ranks"_a, "params"_a, "streams"_a, py::call_guard<py::gil_scoped_release>());

  m.def(
      "simulate",
      [](const api::Program& program, const std::string& machine, int64_t ranks, const std::vector<std::string>& passes,
         const api::Params& params) {
        api::SimulateOptions options;
        options.params = params;
        options.ranks = ranks;
        options.passes = passes;
        CollectedWarnings warnings;
        options.onWarning = warnings.sink();
        std::optional<api::Prediction> predicted;
        {
          py::gil_scoped_release released;
          predicted = api::simulate(program, machine, options);
        }
        warnings.warn();
        const api::Prediction& prediction = *predicted;
        // In the order `hostir simulate` prints them, then what it assumed.
        return std::pair{std::vector<std::pair<std::string, double>>{{"median_ms", prediction.medianMs},
                                                                     {"compute_ms", prediction.computeMs},
                                                                     {"comm_ms", prediction.commMs},
                                                                     {"exposed_comm_ms", prediction.exposedCommMs},
                                                                     {"E", prediction.overlapEfficiency}},
                         prediction.assumptions};
      },
      "program"_a, "machine"_a, "ranks"_a, "passes"_a, "params"_a);

  m.def(
      "apply_passes",
      [](const api::Program& program, const std::vector<std::string>& passes, int64_t ranks, const api::Params& params,
         int64_t streams, const std::string& machine, double minimumGain) {
        api::PassOptions options;
        options.params = params;
        options.ranks = ranks;
        options.streams = streams;
        options.machine = machine;
        options.minimumGain = minimumGain;
        CollectedWarnings warnings;
        options.onWarning = warnings.sink();
        std::vector<std::string> remarks;
        std::optional<api::Program> rewritten;
        {
          py::gil_scoped_release released;
          rewritten = api::applyPasses(program, passes, options, &remarks);
        }
        warnings.warn();
        return std::make_pair(std::move(*rewritten), std::move(remarks));
      },
      "program"_a, "passes"_a, "ranks"_a, "params"_a, "streams"_a, "machine"_a, "min_gain"_a);
  m.attr("DEFAULT_MIN_GAIN") = hostir::kDefaultMinimumGain;

  m.def("pass_names", &api::passNames);
}

// run and its options.
void bindRun(py::module_& m) {
  // The arrays stay referenced by the maps (and the caller) while the GIL is
  // released, so their memory cannot go away under the run. Returns the
  // timed runs' milliseconds, the peak memory and the trace's size.
  m.def(
      "run",
      [](const api::Program& program, std::map<std::string, py::object> inputs,
         std::map<std::string, py::object> outputs, api::RunOptions options) {
        std::map<std::string, api::HostBuffer> inputBuffers = hostBuffers(inputs, false);
        std::map<std::string, api::HostBuffer> outputBuffers = hostBuffers(outputs, true);
        std::atomic<bool> cancel{false};
        options.cancel = &cancel;
        CollectedWarnings warnings;
        options.onWarning = warnings.sink();
        CollectedRemarks remarks;
        options.onRemark = remarks.sink();
        api::RunStats stats =
            runInterruptibly([&] { return api::run(program, inputBuffers, outputBuffers, options); }, cancel);
        warnings.warn();
        return std::make_pair(statsTuple(stats), remarks.texts());
      },
      "program"_a, "inputs"_a, "outputs"_a, "options"_a);

  // hostir.compile's object; the Python half's Executable wraps it.
  py::class_<PythonExecutable>(m, "Executable")
      .def(py::init<const api::Program&, const api::RunOptions&>(), "program"_a, "options"_a)
      .def(py::init<const api::Program&, const api::RunOptions&, const py::capsule&, std::intptr_t>(), "program"_a,
           "options"_a, "compile"_a, "comm"_a)
      .def("run", &PythonExecutable::run, "inputs"_a, "outputs"_a)
      .def("close", &PythonExecutable::close)
      .def_property_readonly("closed", &PythonExecutable::closed)
      .def_property_readonly("remarks", &PythonExecutable::remarks);

  // The API's run options: the table's rows by name (hostir/run_option_table.h),
  // set from the command line's text, and the fields no row has.
  py::class_<api::RunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_readwrite("params", &api::RunOptions::params)
      .def_readwrite("passes", &api::RunOptions::passes)
      .def_readwrite("reference", &api::RunOptions::reference)
      .def_readwrite("check_replicated_outputs", &api::RunOptions::checkReplicatedOutputs)
      .def("set", [](api::RunOptions& options, const std::string& name,
                     const std::string& value) { api::setRunOption(options, runOptionRow(name), value); })
      .def("get", [](const api::RunOptions& options, const std::string& name) {
        return api::runOptionText(options, runOptionRow(name));
      });

  // (name, type, min, max, choices, default, wanted, help) per row, in the table's order.
  m.def("run_option_rows", [] {
    static const char* const kTypes[] = {"integer", "number", "flag", "text", "path", "choice"};
    py::list rows;
    const api::RunOptions defaults;
    for (const api::RunOptionRow& row : api::runOptionTable()) {
      const bool integer = row.type == api::RunOptionType::Integer;
      py::object lo = integer ? py::object(py::int_(row.minInteger)) : py::object(py::float_(row.minNumber));
      py::object hi = integer ? py::object(py::int_(row.maxInteger)) : py::object(py::float_(row.maxNumber));
      rows.append(py::make_tuple(row.name, kTypes[static_cast<int>(row.type)], lo, hi, row.choices,
                                 api::runOptionText(defaults, row), row.wanted(), row.help));
    }
    return rows;
  });

  // `run --check`'s comparison: (ok, report).
  m.def(
      "compare_outputs",
      [](std::map<std::string, py::object> actual, std::map<std::string, py::object> reference) {
        api::OutputComparison comparison =
            api::compareOutputs(hostBuffers(actual, false), hostBuffers(reference, false));
        return std::make_pair(comparison.ok, comparison.report);
      },
      "actual"_a, "reference"_a);
}

// The bounds of the numbers check, simulate and apply_passes take (run's
// come with the option table's rows), for the Python half, which checks
// every argument against them and refuses it in the command line's words.
void bindBounds(py::module_& m) {
  m.attr("MAX_RANKS") = hostir::kMaxRanks;
  m.attr("MAX_STREAMS") = hostir::kMaxStreams;
  m.attr("MIN_MIN_GAIN") = hostir::kMinMinimumGain;
  m.attr("MAX_MIN_GAIN") = hostir::kMaxMinimumGain;
  m.attr("MAX_PARAM") = std::numeric_limits<int64_t>::max();
}

}  // namespace

PYBIND11_MODULE(_hostir, m) {
  m.doc() = "hostir's C++ API; use the package `hostir`, which wraps it.";
  m.attr("DEFAULT_STREAMS") = hostir::kDefaultStreams;
  bindBounds(m);
  // A dtype parameter's value (params={"DT": "bf16"} becomes DType.bf16 in the Python half).
  py::enum_<api::DType>(m, "DType")
      .value("f32", api::DType::F32)
      .value("f16", api::DType::F16)
      .value("bf16", api::DType::BF16)
      .value("f64", api::DType::F64)
      .value("i32", api::DType::I32);

  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const api::Error& error) {
      raiseAsPythonError(error);
    }
  });

  bindPrograms(m);
  bindAnalyses(m);
  bindRun(m);
}
