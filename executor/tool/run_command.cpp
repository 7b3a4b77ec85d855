// `hostir run`: verify, apply the passes, run on the team (MPI ranks under
// mpirun, in-process ranks otherwise), write outputs, check, time.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <iostream>
#include <memory>

#include "comm/mpi_communicator.h"
#include "executor/race_check.h"
#include "executor/runner.h"
#include "executor/tool/commands.h"

namespace hostir::tool {
namespace {

// Splits NAME=FILE items; prints the problem and returns nullopt when malformed.
std::optional<std::map<std::string, std::string>> namedFiles(const std::vector<std::string>& items,
                                                             std::string_view flag) {
  std::map<std::string, std::string> files;
  for (const std::string& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      std::cerr << fmt::format("error: {} expects NAME=FILE.npy, got '{}'\n", flag, item);
      return std::nullopt;
    }
    files[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return files;
}

bool checkNames(const Program& program, const std::map<std::string, std::string>& files, DeclKind kind,
                std::string_view flag) {
  for (const auto& [name, path] : files) {
    const Decl* decl = program.findDecl(name);
    if (!decl || decl->kind != kind) {
      std::cerr << fmt::format("error: {} {}: program '{}' has no {} named '{}'\n", flag, name, program.name,
                               kind == DeclKind::Input ? "input" : "output", name);
      return false;
    }
  }
  return true;
}

std::string timingLine(std::vector<double> millis) {
  std::sort(millis.begin(), millis.end());
  size_t n = millis.size();
  double median = n % 2 ? millis[n / 2] : (millis[n / 2 - 1] + millis[n / 2]) / 2;
  return fmt::format("timing: median_ms={:.3f} min_ms={:.3f} max_ms={:.3f} runs={}", median, millis.front(),
                     millis.back(), n);
}

// What rank 0 does with the result; returns the exit code.
int finish(const RunOptions& o, const RunRequest& request, const RunResult& result, int64_t world,
           const Program& original, const std::map<std::string, std::string>& outputFiles) {
  int code = 0;
  if (!o.tracePath.empty()) {
    std::ofstream out(o.tracePath, std::ios::binary);
    out << chromeTraceJson(result.trace, o.common.file);
    if (!out.flush()) {
      std::cerr << fmt::format("error: cannot write the trace to '{}'\n", o.tracePath);
      code = kProgramError;
    }
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
    reference.reference = true;
    reference.warmup = 0;
    reference.repeat = 1;
    reference.delays = {};
    auto expected = runInProcess(reference, world);
    if (!expected) {
      std::cerr << fmt::format("error: the serial reference failed: {}\n", expected.error().message);
      return kProgramError;
    }
    Comparison comparison = compareOutputs(result.outputs, expected->outputs);
    std::cout << (comparison.ok ? "check: ok\n" : "check: FAILED\n") << comparison.report << "\n";
    if (!comparison.ok) code = kProgramError;
  }
  if (o.repeat > 0) std::cout << timingLine(result.runMillis) << "\n";
  return code;
}

// This MPI rank's run. A failure that escapes it (the backend could not be
// set up, say) ends the whole job with its reason: the other ranks may be
// waiting for this one in a collective, and would otherwise wait forever.
Result<RunResult> runOnMpiRank(const RunRequest& request, Communicator& comm) {
  try {
    return runOnRank(request, comm);
  } catch (const std::exception& e) {
    comm.abort(e.what());  // prints the reason and ends the job (MPI_Abort)
    return Diagnostic{{}, e.what()};
  }
}

}  // namespace

int runRun(const RunOptions& o) {
  auto settings = parseSettings(o.common.settings);
  auto inputFiles = namedFiles(o.inputs, "--input");
  auto outputFiles = namedFiles(o.outputs, "--output");
  if (!settings || !inputFiles || !outputFiles || !checkPassNames(o.passes)) return kUsageError;
  // auto: CUDA when a device is usable here, else the CPU.
  std::optional<std::string> cudaProblem = o.backend == "cpu" ? std::nullopt : cudaUnavailableReason();
  if (o.backend == "cuda" && cudaProblem) {
    std::cerr << fmt::format("error: --backend cuda: {}\n", *cudaProblem);
    return kProgramError;
  }

  // Under mpirun the team is MPI's; otherwise --ranks threads of this process.
  std::unique_ptr<MpiSession> mpi;
  std::unique_ptr<Communicator> mpiComm;
  if (MpiSession::launchedByMpirun()) {
    mpi = std::make_unique<MpiSession>();
    mpiComm = std::make_unique<MpiCommunicator>();
    if (o.common.ranksGiven && o.common.ranks != mpiComm->size()) {
      if (mpiComm->rank() == 0)
        std::cerr << fmt::format("error: --ranks {} disagrees with the {} ranks mpirun started\n", o.common.ranks,
                                 mpiComm->size());
      return kUsageError;
    }
  }
  const int64_t world = mpiComm ? mpiComm->size() : o.common.ranks;
  // auto picks CUDA only when every rank of this node gets a device of its own.
  int64_t ranksOnThisNode = world;
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); mpiComm && local) ranksOnThisNode = std::atoll(local);
  const bool useCuda = o.backend == "cuda" || (o.backend == "auto" && !cudaProblem && ranksOnThisNode <= cudaDeviceCount());
  const BackendKind backendKind = useCuda ? BackendKind::Cuda : BackendKind::Cpu;
  const bool leader = !mpiComm || mpiComm->rank() == 0;
  if (useCuda && ranksOnThisNode > cudaDeviceCount()) {
    // NCCL drives one device per rank; every rank finds this alike, so no rank goes on alone.
    if (leader)
      std::cerr << fmt::format("error: --backend cuda needs a CUDA device per rank: {} ranks share this node's {} "
                               "device{} (use --backend cpu, or fewer ranks per node)\n",
                               ranksOnThisNode, cudaDeviceCount(), cudaDeviceCount() == 1 ? "" : "s");
    return kProgramError;
  }
  if (useCuda && !o.tracePath.empty()) {
    // CUDA streams are timed by the GPU's own tools, which see the kernels.
    if (leader) std::cerr << "error: --trace records the CPU backend; on CUDA use Nsight Systems (nsys profile), or --backend cpu\n";
    return kUsageError;
  }
  // Errors every rank finds alike are printed once, by rank 0.
  auto quietUnlessLeader = [&](auto&& body) {
    std::streambuf* saved = std::cerr.rdbuf();
    if (!leader) std::cerr.rdbuf(nullptr);
    auto result = body();
    std::cerr.rdbuf(saved);
    return result;
  };

  std::optional<SourceProgram> source = quietUnlessLeader([&] { return loadProgram(o.common.file); });
  if (!source) return kProgramError;
  Bindings bindings{*settings, world};
  if (!quietUnlessLeader([&] { return verifyBound(*source, source->program, bindings); })) return kProgramError;
  if (!quietUnlessLeader([&] {
        return checkNames(source->program, *inputFiles, DeclKind::Input, "--input") &&
               checkNames(source->program, *outputFiles, DeclKind::Output, "--output");
      }))
    return kUsageError;
  auto program = quietUnlessLeader([&] { return applyPasses(*source, source->program, o.passes, bindings); });
  if (!program) return kProgramError;

  RunRequest request;
  request.program = std::move(*program);
  request.params = *bindParams(source->program, bindings);
  request.backend = backendKind;
  request.seed = o.seed;
  request.raceCheck = o.raceCheck;
  request.streams = o.common.streams;
  request.warmup = o.warmup;
  request.repeat = std::max(o.repeat, 1);
  request.delays = {o.injectDelaysMicros, o.seed};
  request.commTimeout = std::chrono::milliseconds(static_cast<int64_t>(o.commTimeoutSeconds * 1000));
  request.trace = !o.tracePath.empty();
  // Stream threads beyond the rank's share of the cores would be time-sliced:
  // every chunk would finish late, and no communication could start early.
  request.computeSlots = o.coresPerRank > 0
                             ? o.coresPerRank
                             : static_cast<int>(std::max<int64_t>(1, std::thread::hardware_concurrency() / std::max<int64_t>(1, ranksOnThisNode)));

  // Every rank reads the global input files; a rank that cannot tells the others.
  std::string inputError;
  for (const auto& [name, path] : *inputFiles) {
    auto array = readNpy(path, source->program.findDecl(name)->type.dtype);
    if (!array) {
      inputError = array.error().message;
      break;
    }
    request.inputs[name] = std::move(*array);
  }
  bool inputsFailed = mpiComm ? anyRankFailed(*mpiComm, !inputError.empty()) : !inputError.empty();
  if (inputsFailed) {
    if (!inputError.empty() && (leader || mpiComm))
      std::cerr << fmt::format("{}error: {}\n", mpiComm ? fmt::format("rank {}: ", mpiComm->rank()) : "", inputError);
    return kProgramError;
  }

  Result<RunResult> result = mpiComm ? runOnMpiRank(request, *mpiComm) : runInProcess(request, world);
  if (!result) {
    std::cerr << fmt::format("error: {}\n", result.error().message);
    return kProgramError;
  }
  for (const RaceReport& race : result->races) std::cerr << formatRace(race, o.common.file, source->text);
  int code = leader ? finish(o, request, *result, world, source->program, *outputFiles) : 0;
  bool raced = mpiComm ? anyRankFailed(*mpiComm, !result->races.empty()) : !result->races.empty();
  if (mpiComm) {
    // Every rank exits with rank 0's verdict, or 1 when any rank raced.
    double verdict = code;
    mpiComm->broadcast(&verdict, 1, DType::F64, 0);
    code = static_cast<int>(verdict);
  }
  if (raced) code = kProgramError;
  return code;
}

}  // namespace hostir::tool
