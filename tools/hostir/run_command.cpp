// `hostir run`: verify, apply the passes, prove the program race-free, run
// on the team (MPI ranks under mpirun, in-process ranks otherwise), write
// outputs, check, time. Under mpirun every rank prepares its run without
// printing, then the ranks agree that all of them can start and were started
// alike (launch_agreement.h); every later blocking step of the host has a
// deadline (comm/host_watchdog.h), so no rank waits for ever on one that
// stopped.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>

#include "analysis/race_check.h"
#include "api/backend_choice.h"
#include "api/pass_pipeline.h"
#include "api/run_preparation.h"
#include "api/trace_file.h"
#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "executor/runner.h"
#include "ir/printer.h"
#include "runtime/backend_selection.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/fault_injection.h"
#include "tools/hostir/launch_agreement.h"
#include "tools/hostir/mpi_team.h"
#include "tools/hostir/npy.h"
#include "tools/hostir/output_comparison.h"
#include "tools/hostir/progress_line.h"
#include "tools/hostir/source_program.h"

namespace hostir::tool {
namespace {

// Verifies with the params bound: a --set that names no parameter is a
// mistake of the command line (exit 2), anything else of the program.
ToolStatus verifyBound(const SourceProgram& source, const Program& program, const Bindings& bindings) {
  if (auto params = bindParams(source.program, bindings); !params)
    return ToolError{kUsageError, renderDiagnostic(params.error(), source.path, source.text)};
  if (auto error = verifyProgram(program, bindings)) return programError(source, *error);
  return std::nullopt;
}

// The profile named by --machine, loaded; null when none was named.
ToolResult<std::shared_ptr<const MachineProfile>> loadModel(const ModelOptions& model) {
  try {
    return api::loadMachine(model.machine);
  } catch (const api::Error& error) {
    return toolError(error);
  }
}

// Splits NAME=FILE items (a usage error when malformed).
ToolResult<std::map<std::string, std::string>> namedFiles(const std::vector<std::string>& items,
                                                          std::string_view flag) {
  std::map<std::string, std::string> files;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return ToolError{kUsageError, fmt::format("error: {} expects NAME=FILE.npy, got '{}'\n", flag, item)};
    if (!files.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      return ToolError{kUsageError,
                       fmt::format("error: {} {} is given twice; give each tensor once\n", flag, item.substr(0, eq))};
  }
  return files;
}

ToolStatus checkNames(const Program& program, const std::map<std::string, std::string>& files, DeclKind kind,
                      std::string_view flag) {
  for (const auto& [name, path] : files) {
    const Decl* decl = program.findDecl(name);
    if (!decl || decl->kind != kind)
      return ToolError{kUsageError, fmt::format("error: {} {}: program '{}' has no {} named '{}'\n", flag, name,
                                                program.name, kind == DeclKind::Input ? "input" : "output", name)};
  }
  return std::nullopt;
}

std::string timingLine(std::vector<double> millis) {
  std::sort(millis.begin(), millis.end());
  size_t n = millis.size();
  double median = n % 2 ? millis[n / 2] : (millis[n / 2 - 1] + millis[n / 2]) / 2;
  return fmt::format("timing: median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} runs={}", median, millis.front(),
                     millis.back(), n);
}

// A rank's run, prepared: read, verified, passes applied, proved, inputs read.
// Nothing is printed while preparing: under mpirun, which ranks print is
// known only once they have agreed (launch_agreement.h).
struct PreparedRun {
  ToolStatus error;     // why the preparation failed
  std::string remarks;  // what the passes' --remarks rendered, in order, before any error
  std::optional<SourceProgram> source;
  RunRequest request;
  std::map<std::string, std::string> outputFiles;
  LaunchFingerprint fingerprint;
};

std::string namesShown(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("'{}'", fmt::join(names, ","));
}

// What must be alike on every rank, whether or not the preparation got far:
// every option of the command line (launch_agreement.h), then what the
// options that name files or parameters stand for, and what the options
// made of the program. Every rank has the same parts, in the same order.
LaunchFingerprint fingerprintOf(const RunOptions& o, const PreparedRun& prepared, BackendKind backend) {
  LaunchFingerprint f;
  if (prepared.source) f.programText = prepared.source->text;
  f.options = commandLineParts(o.commandLine);
  f.options.push_back(textPart("the backend chosen", std::string(backend.name)));
  // The program the passes made: options and files the command line does
  // not show (a --machine file's content, say) shape it too.
  const bool ready = !prepared.error;
  f.options.push_back(textPart("the program after --passes", ready ? printProgram(prepared.request.program) : ""));
  // Inputs by name and content: every rank reads its own copy of the files.
  std::vector<std::string> inputNames;
  std::string inputData;
  for (const auto& [name, tensor] : prepared.request.inputs) {
    inputNames.push_back(name);
    inputData += fmt::format("{}:{:x};", name,
                             fingerprintHash({reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size()}));
  }
  f.options.push_back(
      LaunchPart{"--input's names and data", namesShown(inputNames), fingerprintHash(inputData), false});
  std::vector<std::string> outputNames;
  for (const std::string& item : o.outputs) outputNames.push_back(item.substr(0, item.find('=')));
  std::sort(outputNames.begin(), outputNames.end());
  const std::string outputs = namesShown(outputNames);
  f.options.push_back(LaunchPart{"--output's names", outputs, fingerprintHash(outputs), false});
  f.options.push_back(numericPart("--trace (given)", !o.api.tracePath.empty()));
  if (ready)
    for (const auto& [name, value] : prepared.request.params)
      f.params.push_back(numericPart("parameter " + name, value));
  return f;
}

// Everything before the run; the first failure is returned, nothing printed.
ToolStatus prepareSteps(PreparedRun& p, const RunOptions& o, const Team& team, const BackendChoice& backend,
                        std::ostream& remarks) {
  // The malformed items of --set, --input and --output are reported together.
  auto settings = parseSettings(o.settings);
  auto inputFiles = namedFiles(o.inputs, "--input");
  auto outputFiles = namedFiles(o.outputs, "--output");
  if (!settings || !inputFiles || !outputFiles) {
    ToolError malformed{kUsageError, ""};
    if (!settings) malformed.text += settings.error().text;
    if (!inputFiles) malformed.text += inputFiles.error().text;
    if (!outputFiles) malformed.text += outputFiles.error().text;
    return malformed;
  }
  const ModelOptions model{o.api.machine, o.api.minimumGain};
  if (auto error = checkPassNames(o.api.passes, {}, &model)) return error;
  auto machine = loadModel(model);
  if (!machine) return machine.error();
  p.outputFiles = *outputFiles;
  if (team.mpi && o.ranksGiven && o.api.ranks != team.world)
    return ToolError{kUsageError, fmt::format("error: --ranks {} disagrees with the {} ranks mpirun started\n",
                                              o.api.ranks, team.world)};
  // NCCL drives one device per rank, copy engines need one process; every
  // rank finds this alike.
  if (backend.refusal) return ToolError{kProgramError, fmt::format("error: --backend {}\n", *backend.refusal)};

  // mpirun gives standard input to rank 0 alone.
  if (team.mpi && o.file == kStandardInput)
    return ToolError{kUsageError, "error: under mpirun only rank 0 reads standard input; give the program as a file\n"};
  auto loaded = loadProgram(o.file);
  if (!loaded) return loaded.error();
  p.source = std::move(*loaded);
  const SourceProgram& source = *p.source;
  Bindings bindings{*settings, team.world};
  if (auto error = verifyBound(source, source.program, bindings)) return error;
  if (auto error = checkNames(source.program, *inputFiles, DeclKind::Input, "--input")) return error;
  if (auto error = checkNames(source.program, *outputFiles, DeclKind::Output, "--output")) return error;
  api::RunSetting setting;
  setting.backend = backend;
  setting.team = TeamPlace{!team.mpi, team.world, team.ranksOnThisNode};
  setting.machine = *machine;
  setting.words = {"hostir run", "hostir check", "--unchecked"};
  api::RunOptions options = o.api;
  if (o.remarks) options.onRemark = [&remarks](const std::string& remark) { remarks << remark; };
  try {
    p.request = api::prepareRunRequest(source, bindings, options, setting);
  } catch (const api::Error& error) {
    // The command line was checked before: what fails here is the program.
    ToolError failure = toolError(error);
    failure.exitCode = kProgramError;
    return failure;
  }
  RunRequest& request = p.request;
  // Every rank reads the global input files.
  for (const auto& [name, path] : *inputFiles) {
    auto array = readNpy(path, source.program.findDecl(name)->type.dtype);
    if (!array) return ToolError{kProgramError, fmt::format("error: {}\n", array.error().message)};
    request.inputs[name] = std::move(*array);
  }
  return std::nullopt;
}

PreparedRun prepare(const RunOptions& o, const Team& team, const BackendChoice& backend) {
  PreparedRun p;
  std::ostringstream remarks;
  try {
    p.error = prepareSteps(p, o, team, backend, remarks);
  } catch (const std::bad_alloc&) {
    p.error = ToolError{kProgramError,
                        "error: out of memory while preparing the run (reading, verifying or "
                        "checking the program)\n"};
  }
  p.remarks = remarks.str();
  p.fingerprint = fingerprintOf(o, p, backend.kind);
  return p;
}

// What rank 0 does with the result; returns the exit code.
int finish(const RunOptions& o, const RunRequest& request, const RunResult& result, int64_t world,
           const Program& original, const std::map<std::string, std::string>& outputFiles) {
  int code = 0;
  if (result.trace && !*result.trace) {
    std::cerr << fmt::format("error: {}\n", result.trace->error().message);
    code = kProgramError;
  } else if (result.trace) {
    const TraceSummary& written = result.trace->value();
    if (written.truncated)
      std::cerr << fmt::format(
          "warning: the trace reached --trace-limit {} MiB; the last {} operations are not in it\n",
          o.api.traceLimitMiB, written.droppedOperations);
    std::cout << fmt::format("trace: wrote {} ({} bytes)\n", o.api.tracePath, written.bytes);
  }
  for (const auto& [name, path] : outputFiles) {
    const HostTensor& t = result.outputs.at(name);
    if (auto error = writeNpy(path, t.dtype, t.shape, t.data.data())) {
      std::cerr << fmt::format("error: {}\n", error->message);
      code = kProgramError;
    }
  }
  if (o.check) {
    // The serial reference: the program before the passes, one stream per
    // rank, in-process ranks, f64-accumulating GEMMs, the same inputs.
    RunRequest reference = request;
    reference.program = original;
    reference.backend.cpu.reference = true;
    reference.warmup = 0;
    reference.repeat = 1;
    reference.backend.cpu.delays = {};
    reference.writeTrace = nullptr;  // the trace is the run's, not the reference's
    reference.watchdog = nullptr;
    reference.matchCommunications = false;
    reference.describeFailure = nullptr;
    reference.atRun = nullptr;
    auto expected = runInProcess(reference, world);
    if (!expected) {
      std::cerr << fmt::format("error: the serial reference failed: {}\n", expected.error().message);
      return kProgramError;
    }
    Comparison comparison = compareOutputs(result.outputs, expected->outputs);
    std::cout << (comparison.ok ? "check: ok\n" : "check: FAILED\n") << comparison.report << "\n";
    if (!comparison.ok) code = kProgramError;
  }
  if (o.timed) {
    std::cout << timingLine(result.runMillis) << "\n";
    if (result.peakMemoryBytes)
      std::cout << fmt::format(
          "memory: peak_mib={:.3f} (the last run's live tensors, inputs included, most of any "
          "rank)\n",
          static_cast<double>(*result.peakMemoryBytes) / (1 << 20));
  }
  return code;
}

}  // namespace

namespace {

// One `hostir run` on its team: the fault to inject, the MPI side when
// mpirun started it, and the steps that every rank takes together.
class RunCommand {
 public:
  RunCommand(const RunOptions& o, std::optional<FaultInjection> fault) : o_(o), fault_(std::move(fault)) {
    // Under mpirun the team is MPI's; otherwise --ranks threads of this process.
    if (MpiSession::launchedByMpirun())
      mpi_ = startMpi(std::chrono::milliseconds(static_cast<int64_t>(o.api.commTimeoutSeconds * 1000)));
    team_.mpi = mpi_.has_value();
    team_.world = mpi_ ? mpi_->comm->size() : o.api.ranks;
    team_.rank = mpi_ ? mpi_->comm->rank() : 0;
    team_.ranksOnThisNode = ranksOnThisNode(!team_.mpi, team_.world).value_or(team_.world);
    watchdog_ = mpi_ ? mpi_->watchdog.get() : nullptr;
    beats_ = mpi_ ? &*mpi_ : nullptr;
  }

  int run() {
    const BackendChoice backend =
        api::chooseBackendFor(o_.api, TeamPlace{!team_.mpi, team_.world, team_.ranksOnThisNode});
    // Preparing is each rank's own work: its peers wait for it at the agreement.
    PreparedRun prepared = whileBeating(beats_, [&] { return prepare(o_, team_, backend); });
    if (std::optional<int> stop = agree(prepared)) return *stop;
    // Remarks: every rank has the same, rank 0 prints them.
    if (team_.leader()) std::cerr << prepared.remarks;
    const SourceProgram& source = *prepared.source;
    RunRequest& request = prepared.request;
    hookUp(request, source);
    // A person at a terminal sees how far a long run is; pipes see nothing.
    RunProgress progress(team_.leader() && stderrIsTerminal(), request);
    Result<RunResult> result =
        mpi_ ? runOnRank(request, *mpi_->comm, mpi_->signatures.get()) : runInProcess(request, team_.world);
    progress.stop();  // erased before anything else is printed
    if (!result) {
      if (team_.leader()) std::cerr << renderDiagnostic(result.error(), source.path, source.text);
      return endTeam(kProgramError);
    }
    for (const RaceReport& race : result->races) std::cerr << formatRace(race, source.path, source.text);
    // Rank 0's outputs and serial reference are its own work, which may take
    // longer than --comm-timeout: its peers, waiting at the vote, hear it beat.
    int code =
        team_.leader()
            ? whileBeating(
                  beats_,
                  [&] { return finish(o_, request, *result, team_.world, source.program, prepared.outputFiles); })
            : 0;
    return endTeam(verdict(code, !result->races.empty()));
  }

 private:
  void injectFault(FaultInjection::Point point, int run = 0) {
    if (fault_) fault_->at(team_.rank, point, run);
  }

  // Before the last barrier of an MPI job: MPI_Finalize waits for every
  // rank, so a rank that stopped would hang it without this deadline.
  int endTeam(int code) {
    if (mpi_) {
      injectFault(FaultInjection::Point::Exit);
      withDeadline(watchdog_, "the barrier that ends the job", [&] { mpi_->comm->barrier(); });
    }
    return code;
  }

  // The exit code when the run must not start (every rank of an MPI job
  // learns it at the agreement); nullopt when it may.
  std::optional<int> agree(const PreparedRun& prepared) {
    // What a failed preparation prints: the remarks made before the failure, then the failure.
    std::string failure = prepared.error ? prepared.remarks + prepared.error->text : std::string();
    if (mpi_) {
      injectFault(FaultInjection::Point::Setup);
      LaunchOutcome outcome = agreeOnLaunch(*mpi_->comm, watchdog_, failure,
                                            prepared.error ? prepared.error->exitCode : kSuccess, prepared.fingerprint);
      if (!outcome.proceed) return endTeam(outcome.exitCode);
    } else if (prepared.error) {
      std::cerr << failure;
      return prepared.error->exitCode;
    }
    return std::nullopt;
  }

  // What only the command line gives a prepared run: the deadlines, the
  // messages against the file, and the testing aids.
  void hookUp(RunRequest& request, const SourceProgram& source) {
    request.watchdog = watchdog_;
    // Rank 0 writes the team's trace file between the chunks it receives: its
    // own work, during which its peers hear it beat.
    if (mpi_ && request.writeTrace)
      request.writeTrace = [write = std::move(request.writeTrace), beats = beats_](Communicator& comm,
                                                                                   const TraceRecorder& recorder) {
        return whileBeating(comm.rank() == 0 ? beats : nullptr, [&] { return write(comm, recorder); });
      };
    request.describeFailure = [this, &source](const Diagnostic& diag) {
      return renderDiagnostic(diag, source.path, source.text);
    };
    if (fault_)
      request.atRun = [this](int run, bool started) {
        injectFault(started ? FaultInjection::Point::Running : FaultInjection::Point::Run, run);
      };
  }

  // Every rank exits with rank 0's code, or 1 when any rank raced.
  int verdict(int code, bool raced) {
    if (mpi_) {
      raced = withDeadline(watchdog_, "the vote on races", [&] { return anyRankFailed(*mpi_->comm, raced); });
      double agreed = code;
      withDeadline(watchdog_, "the broadcast of the verdict",
                   [&] { mpi_->comm->broadcast(&agreed, 1, DType::F64, 0); });
      code = static_cast<int>(agreed);
    }
    return raced ? kProgramError : code;
  }

  const RunOptions& o_;
  std::optional<FaultInjection> fault_;
  std::optional<MpiTeam> mpi_;
  Team team_;
  HostWatchdog* watchdog_ = nullptr;
  MpiTeam* beats_ = nullptr;  // null: no peers to keep waiting
};

}  // namespace

int runRun(const RunOptions& o) {
  std::optional<FaultInjection> fault;
  if (!o.injectFault.empty()) {
    auto parsed = FaultInjection::parse(o.injectFault);
    if (!parsed) {
      std::cerr << fmt::format("error: {}\n", parsed.error().message);
      return kUsageError;
    }
    fault = *parsed;
  }
  return RunCommand(o, std::move(fault)).run();
}

}  // namespace hostir::tool
