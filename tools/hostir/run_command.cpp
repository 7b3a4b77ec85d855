// `hostir run`: one compilation of the program (an api::Executable: the
// passes, the proof, the team, the backend) and one call of it, its warmup
// and timed runs; then the outputs written, checked and timed. Under mpirun
// every rank prepares without printing, then the ranks agree that all of
// them can start and were started alike (launch_agreement.h); every later
// blocking step of the host has a deadline (comm/host_watchdog.h), so no
// rank waits for ever on one that stopped.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <sstream>

#include "api/command_line.h"
#include "hostir/error.h"
#include "hostir/executable.h"
#include "hostir/npy.h"
#include "hostir/program.h"
#include "tools/hostir/commands.h"
#include "tools/hostir/fault_injection.h"
#include "tools/hostir/launch_agreement.h"
#include "tools/hostir/mpi_team.h"
#include "tools/hostir/progress_line.h"

namespace hostir::tool {
namespace {

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

const api::TensorDecl* findTensor(const std::vector<api::TensorDecl>& decls, const std::string& name, bool input) {
  for (const api::TensorDecl& decl : decls)
    if (decl.name == name && decl.input == input) return &decl;
  return nullptr;
}

ToolStatus checkNames(const api::Program& program, const std::vector<api::TensorDecl>& decls,
                      const std::map<std::string, std::string>& files, bool input, std::string_view flag) {
  for (const auto& [name, path] : files)
    if (!findTensor(decls, name, input))
      return ToolError{kUsageError, fmt::format("error: {} {}: program '{}' has no {} named '{}'\n", flag, name,
                                                program.name(), input ? "input" : "output", name)};
  return std::nullopt;
}

std::string timingLine(std::vector<double> millis) {
  std::sort(millis.begin(), millis.end());
  size_t n = millis.size();
  double median = n % 2 ? millis[n / 2] : (millis[n / 2 - 1] + millis[n / 2]) / 2;
  return fmt::format("timing: median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} runs={}", median, millis.front(),
                     millis.back(), n);
}

std::string namesShown(const std::vector<std::string>& names) {
  return names.empty() ? "(none)" : fmt::format("'{}'", fmt::join(names, ","));
}

// The arrays as the buffers a run takes (it only reads the inputs).
std::map<std::string, api::HostBuffer> buffersOf(const std::map<std::string, api::HostArray>& arrays) {
  std::map<std::string, api::HostBuffer> buffers;
  for (const auto& [name, array] : arrays)
    buffers[name] = api::HostBuffer{array.dtype, array.shape, const_cast<std::byte*>(array.data.data())};
  return buffers;
}

// A zeroed array for each output `wanted` says yes to.
template <typename Wanted>
std::map<std::string, api::HostArray> outputArrays(const std::vector<api::TensorDecl>& decls, Wanted wanted) {
  std::map<std::string, api::HostArray> outputs;
  for (const api::TensorDecl& decl : decls)
    if (!decl.input && wanted(decl.name)) outputs[decl.name] = api::HostArray::zeros(decl.dtype, decl.shape);
  return outputs;
}

// What a rank reads before compiling: the command line's items, the
// program and the input files. Nothing is printed while preparing: under
// mpirun, which ranks print is known only once they have agreed.
struct Inputs {
  ToolStatus error;  // why reading failed
  std::optional<api::Program> program;
  api::Params params;
  std::vector<api::TensorDecl> decls;  // the program's tensors for params and the team
  std::map<std::string, api::HostArray> inputs;
  std::map<std::string, std::string> outputFiles;
};

// Inputs from --input and others from nowhere: a mistake (an input
// generator that forgot a tensor), unless --fill-missing. With no --input
// at all, every input is seeded from --seed.
ToolStatus checkNoneMissing(const std::vector<api::TensorDecl>& decls,
                            const std::map<std::string, std::string>& inputFiles, bool fillMissing) {
  if (inputFiles.empty() || fillMissing) return std::nullopt;
  std::vector<std::string> missing;
  for (const api::TensorDecl& decl : decls)
    if (decl.input && !inputFiles.count(decl.name)) missing.push_back(decl.name);
  if (missing.empty()) return std::nullopt;
  return ToolError{
      kUsageError,
      fmt::format("error: {} {} given no --input: give {}, or --fill-missing to fill {} from --seed\n",
                  missing.size() == 1 ? "input" : "inputs", fmt::format("'{}'", fmt::join(missing, "', '")),
                  missing.size() == 1 ? "it" : "them", missing.size() == 1 ? "it" : "them")};
}

// Everything the command line names, read; the first failure is returned.
ToolStatus readSteps(Inputs& in, const RunOptions& o, const Team& team) {
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
  in.params = *settings;
  in.outputFiles = *outputFiles;
  if (team.mpi && o.ranksGiven && o.api.ranks != team.world)
    return ToolError{kUsageError, fmt::format("error: --ranks {} disagrees with the {} ranks mpirun started\n",
                                              o.api.ranks, team.world)};
  // mpirun gives standard input to rank 0 alone.
  if (team.mpi && o.file == "-")
    return ToolError{kUsageError, "error: under mpirun only rank 0 reads standard input; give the program as a file\n"};
  try {
    in.program = api::Program::fromFile(o.file);
    in.decls = in.program->tensors(in.params, team.world);
  } catch (const api::Error& error) {
    return toolError(error);
  }
  if (auto error = checkNames(*in.program, in.decls, *inputFiles, true, "--input")) return error;
  if (auto error = checkNames(*in.program, in.decls, *outputFiles, false, "--output")) return error;
  // Every rank reads the global input files.
  for (const auto& [name, path] : *inputFiles) {
    const api::TensorDecl& decl = *findTensor(in.decls, name, true);
    api::HostArray array;
    try {
      array = api::readNpy(path, decl.dtype);
    } catch (const api::Error& error) {
      return toolError(error);
    }
    if (array.shape != decl.shape)
      return ToolError{kProgramError,
                       fmt::format("error: {}: input '{}' must have the global shape [{}], but the file "
                                   "holds [{}]\n",
                                   path, name, fmt::join(decl.shape, ", "), fmt::join(array.shape, ", "))};
    in.inputs[name] = std::move(array);
  }
  return checkNoneMissing(in.decls, *inputFiles, o.api.fillMissingInputs);
}

Inputs readInputs(const RunOptions& o, const Team& team) {
  Inputs in;
  try {
    in.error = readSteps(in, o, team);
  } catch (const std::bad_alloc&) {
    in.error = ToolError{kProgramError, "error: out of memory while reading the program or its inputs\n"};
  }
  return in;
}

// What must be alike on every rank, whether or not its preparation got far:
// every option of the command line (launch_agreement.h), then what the
// options that name files or parameters stand for, and what the options
// made of the program. Every rank has the same parts, in the same order.
LaunchFingerprint fingerprintOf(const RunOptions& o, const Inputs& in, const api::PreparedForAgreement& prepared) {
  LaunchFingerprint f;
  if (in.program) f.programText = in.program->sourceText();
  f.options = commandLineParts(o.commandLine);
  f.options.push_back(textPart("the backend chosen", prepared.backend));
  // The program the passes made: options and files the command line does
  // not show (a --machine file's content, say) shape it too.
  f.options.push_back(textPart("the program after --passes", prepared.programAfterPasses));
  // Inputs by name and content: every rank reads its own copy of the files.
  std::vector<std::string> inputNames;
  std::string inputData;
  for (const auto& [name, tensor] : in.inputs) {
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
  for (const auto& [name, value] : prepared.params) f.params.push_back(numericPart("parameter " + name, value));
  for (const auto& [name, value] : prepared.values) f.options.push_back(textPart("parameter " + name, value));
  return f;
}

// The serial reference of `--check`: the program before the passes, on
// in-process ranks, one stream each, f64-accumulating GEMMs, the same inputs.
ToolResult<std::map<std::string, api::HostArray>> serialReference(const RunOptions& o, const Inputs& in,
                                                                  int64_t world) {
  api::RunOptions options;
  options.params = in.params;
  options.ranks = world;
  options.streams = o.api.streams;  // as the program was proved for; the reference issues on one
  options.seed = o.api.seed;
  options.fillMissingInputs = o.api.fillMissingInputs;
  options.checked = o.api.checked;  // as the run: unchecked, refused only for a program proved for another team
  options.commTimeoutSeconds = o.api.commTimeoutSeconds;
  options.coresPerRank = o.api.coresPerRank;
  options.reference = true;
  std::map<std::string, api::HostArray> outputs = outputArrays(in.decls, [](const std::string&) { return true; });
  try {
    api::run(*in.program, buffersOf(in.inputs), buffersOf(outputs), options);
  } catch (const api::Error& error) {
    return ToolError{kProgramError, fmt::format("error: the serial reference failed: {}\n", error.what())};
  }
  return outputs;
}

// One `hostir run` on its team: the fault to inject, the MPI side when
// mpirun started it, and the steps that every rank takes together.
class RunCommand {
 public:
  // Under mpirun the team is MPI's; otherwise --ranks threads of this process.
  RunCommand(const RunOptions& o, std::optional<FaultInjection> fault)
      : o_(o),
        fault_(std::move(fault)),
        team_(
            Team::start(o.api.ranks, std::chrono::milliseconds(static_cast<int64_t>(o.api.commTimeoutSeconds * 1000)))),
        mpi_(team_.mpi.get()) {}

  int run() {
    // Reading is each rank's own work: its peers wait for it at the agreement.
    Inputs in = team_.whileBeating([&] { return readInputs(o_, team_); });
    if (in.error) return refuse(in, *in.error);
    std::optional<api::Executable> exe;
    std::optional<ToolError> failure;
    try {
      exe.emplace(compile(in));
    } catch (const api::Error& error) {
      failure = toolError(error);
    } catch (const std::bad_alloc&) {
      failure = ToolError{kProgramError, "error: out of memory while preparing the run\n"};
    }
    if (stopped_) return endTeam(*stopped_);  // the ranks agreed not to start: each has said why
    if (failure) {
      if (mpi_) {  // after the agreement: a rank's team failed to start, and the team with it
        if (team_.leader()) std::cerr << failure->text;
        return endTeam(kProgramError);
      }
      std::cerr << remarks_.str() << failure->text;
      return failure->exitCode;
    }
    // Remarks: every rank has the same, rank 0 prints them.
    if (team_.leader()) std::cerr << remarks_.str();
    return runOnce(*exe, in);
  }

 private:
  api::Executable compile(const Inputs& in) {
    api::RunOptions options = o_.api;
    options.params = in.params;
    options.ranks = team_.world;
    options.checkReplicatedOutputs = o_.check;
    if (o_.remarks) options.onRemark = [this](const std::string& remark) { remarks_ << remark; };
    options.onWarning = [this](const std::string& warning) { remarks_ << warning; };
    api::CommandLineHooks hooks;
    hooks.words = {"hostir run", "hostir check", "--unchecked"};
    hooks.atRun = [this](int run, bool started) {
      if (progress_) progress_->atRun(run, started);
      injectFault(started ? FaultInjection::Point::Running : FaultInjection::Point::Run, run);
    };
    if (!mpi_) return api::compileForCommandLine(*in.program, options, hooks);
    hooks.watchdog = mpi_->watchdog();
    hooks.ranksOnThisNode = team_.ranksOnThisNode;
    hooks.whileOwnWork = [this](const std::function<void()>& work) { mpi_->whileBeating(work); };
    hooks.agree = [this, &in](const api::PreparedForAgreement& prepared) {
      std::optional<ToolError> failure;
      if (prepared.failure) failure = toolError(*prepared.failure);
      return agree(failure, fingerprintOf(o_, in, prepared));
    };
    return api::compileOnMpiWorldForCommandLine(*in.program, options, hooks);
  }

  // A rank that could not read what it was given: alone, it says why; under
  // mpirun the ranks agree first, so that none waits for the others.
  int refuse(const Inputs& in, const ToolError& error) {
    if (!mpi_) {
      std::cerr << error.text;
      return error.exitCode;
    }
    agree(error, fingerprintOf(o_, in, {}));
    return endTeam(stopped_.value_or(error.exitCode));
  }

  // The start-up agreement (launch_agreement.h): true when every rank may
  // start; otherwise stopped_ holds the exit code every rank ends with.
  bool agree(const std::optional<ToolError>& failure, const LaunchFingerprint& fingerprint) {
    // What a failed preparation prints: the remarks made before the failure, then the failure.
    std::string text = failure ? remarks_.str() + failure->text : std::string();
    injectFault(FaultInjection::Point::Setup);
    LaunchOutcome outcome = agreeOnLaunch(*mpi_, text, failure ? failure->exitCode : kSuccess, fingerprint);
    if (!outcome.proceed) stopped_ = outcome.exitCode;
    return outcome.proceed;
  }

  // The call, then rank 0's outputs, check and timing line.
  int runOnce(api::Executable& exe, const Inputs& in) {
    std::map<std::string, api::HostArray> outputs =
        outputArrays(exe.tensors(), [&](const std::string& name) { return o_.check || in.outputFiles.count(name); });
    api::RunStats stats;
    try {
      // A person at a terminal sees how far a long run is; pipes see nothing.
      progress_.emplace(team_.leader() && stderrIsTerminal(), o_.api.warmup, std::max(o_.api.repeat, 1));
      stats = exe.run(buffersOf(in.inputs), buffersOf(outputs));
      progress_.reset();  // erased before anything else is printed
    } catch (const api::Error& error) {
      progress_.reset();
      if (team_.leader()) std::cerr << toolError(error).text;
      return endTeam(kProgramError);
    }
    for (const std::string& race : stats.races) std::cerr << race;
    // Rank 0's outputs and serial reference are its own work, which may take
    // longer than --comm-timeout: its peers, waiting at the vote, hear it beat.
    int code =
        team_.leader() ? team_.whileBeating([&] { return finish(in, stats, outputs); }) : static_cast<int>(kSuccess);
    return endTeam(verdict(code, !stats.races.empty()));
  }

  // What rank 0 does with the result; returns the exit code.
  int finish(const Inputs& in, const api::RunStats& stats, const std::map<std::string, api::HostArray>& outputs) {
    int code = kSuccess;
    if (!o_.api.tracePath.empty()) {
      if (stats.traceTruncated)
        std::cerr << fmt::format(
            "warning: the trace reached --trace-limit {} MiB; the last {} operations are not in it\n",
            o_.api.traceLimitMiB, stats.traceDroppedOperations);
      std::cout << fmt::format("trace: wrote {} ({} bytes)\n", o_.api.tracePath, stats.traceBytes);
    }
    const std::map<std::string, api::HostBuffer> buffers = buffersOf(outputs);
    for (const auto& [name, path] : in.outputFiles) {
      try {
        api::writeNpy(path, buffers.at(name));
      } catch (const api::Error& error) {
        std::cerr << toolError(error).text;
        code = kProgramError;
      }
    }
    if (o_.check) {
      auto expected = serialReference(o_, in, team_.world);
      if (!expected) {
        std::cerr << expected.error().text;
        return kProgramError;
      }
      api::OutputComparison comparison = api::compareOutputs(buffers, buffersOf(*expected));
      // A replicated output is rank 0's copy: the reference checks that one,
      // and the ranks' copies must agree with it.
      const bool ok = comparison.ok && stats.replicaDisagreements.empty();
      std::cout << (ok ? "check: ok\n" : "check: FAILED\n") << comparison.report << "\n";
      for (const std::string& disagreement : stats.replicaDisagreements) std::cout << disagreement << "\n";
      if (!ok) code = kProgramError;
    }
    if (o_.timed) {
      std::cout << timingLine(stats.runMillis) << "\n";
      if (stats.peakMemoryBytes > 0)
        std::cout << fmt::format(
            "memory: peak_mib={:.3f} (the last run's live tensors, inputs included, most of any rank)\n",
            static_cast<double>(stats.peakMemoryBytes) / (1 << 20));
    }
    return code;
  }

  void injectFault(FaultInjection::Point point, int run = 0) {
    if (fault_) fault_->at(team_.rank, point, run);
  }

  // Before the last barrier of an MPI job: MPI_Finalize waits for every
  // rank, so a rank that stopped would hang it without this deadline.
  int endTeam(int code) {
    if (mpi_) {
      injectFault(FaultInjection::Point::Exit);
      mpi_->barrier("the barrier that ends the job");
    }
    return code;
  }

  // Every rank exits with rank 0's code, or 1 when any rank raced.
  int verdict(int code, bool raced) {
    if (mpi_) {
      raced = mpi_->anyRank(raced, "the vote on races");
      code = static_cast<int>(mpi_->fromRank0(code, "the broadcast of the verdict"));
    }
    return raced ? kProgramError : code;
  }

  const RunOptions& o_;
  std::optional<FaultInjection> fault_;
  Team team_;
  api::MpiLaunch* mpi_;         // team_'s MPI side; null in process
  std::ostringstream remarks_;  // the passes' remarks, printed once the ranks agreed
  std::optional<int> stopped_;  // the ranks agreed not to start: every rank's exit code
  std::optional<RunProgress> progress_;
};

}  // namespace

int runRun(const RunOptions& o) {
  std::optional<FaultInjection> fault;
  if (!o.injectFault.empty()) {
    auto parsed = FaultInjection::parse(o.injectFault);
    if (!parsed) {
      std::cerr << parsed.error().text;
      return parsed.error().exitCode;
    }
    fault = *parsed;
  }
  return RunCommand(o, std::move(fault)).run();
}

}  // namespace hostir::tool
