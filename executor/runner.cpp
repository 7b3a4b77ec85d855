#include "executor/runner.h"

#include <fmt/format.h>

#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

#include "analysis/race_check_backend.h"
#include "comm/in_process_communicator.h"
#include "executor/backend_factory.h"
#include "executor/communication_match_backend.h"
#include "ir/byte_size.h"
#include "ir/thread_start.h"
#include "runtime/evaluator.h"
#include "runtime/forwarding_backend.h"

namespace hostir {
namespace {

// The shape check of a user-supplied global input.
std::string checkInput(const HostTensor& t, const TensorSpec& spec) {
  if (t.dtype != spec.dtype)
    return fmt::format("input '{}' must be {}, but the file holds {}", spec.name, dtypeName(spec.dtype),
                       dtypeName(t.dtype));
  if (Dims(t.shape) != spec.globalShape)
    return fmt::format("input '{}' must have the global shape [{}], but the file holds [{}]", spec.name,
                       fmt::join(spec.globalShape, ", "), fmt::join(t.shape, ", "));
  return {};
}

}  // namespace

Diagnostic failureDiagnostic(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const DiagnosticError& e) {
    return e.diag;
  } catch (const std::bad_alloc&) {
    return Diagnostic{{}, "out of memory while running the program"};
  } catch (const std::exception& e) {
    return Diagnostic{{}, e.what()};
  } catch (...) {
    return Diagnostic{{}, "unknown error"};
  }
}

bool anyRankFailed(Communicator& comm, bool failed) {
  double flag = failed ? 1.0 : 0.0;
  comm.allreduce(&flag, &flag, 1, DType::F64, ReduceOp::Max);
  return flag != 0.0;
}

namespace {

[[noreturn]] void throwCancelled(SourceLoc loc = {}) {
  throw DiagnosticError{Diagnostic{loc, "the run was cancelled"}};
}

// Stops the rank at its next operation once the caller cancels the run: the
// evaluator calls beginOperation before issuing each one, so a cancelled
// rank stops between operations and its failure unwinds the team (the
// peers blocked in a communication with it are released by the abort).
class CancellableBackend : public ForwardingBackend {
 public:
  CancellableBackend(Backend& forward, const std::atomic<bool>& cancel) : ForwardingBackend(forward), cancel_(cancel) {}

  void beginOperation(const OperationInfo& info) override {
    if (cancel_.load(std::memory_order_relaxed)) throwCancelled(info.loc);
    forward_.beginOperation(info);
  }

 private:
  const std::atomic<bool>& cancel_;
};

// One rank's run; everything that can fail is inside, and the caller aborts
// the team while the backend (whose streams may be blocked in a
// communication with the other ranks) is still alive.
struct RankRun {
  const RunRequest& request;
  Communicator& comm;
  Communicator* signatures;
  TraceRecorder recorder;
  RankBackend rankBackend;
  std::unique_ptr<RaceCheckBackend> raceChecker;
  std::unique_ptr<CommunicationMatchBackend> matcher;
  std::unique_ptr<CancellableBackend> cancellable;

  template <typename Step>
  auto hostStep(std::string what, Step&& step) {
    return withDeadline(request.watchdog, std::move(what), std::forward<Step>(step));
  }

  Result<RunResult> run();

  // The backend of this rank, with the race checker and the communication
  // matcher on top when asked for; returns the one to issue work to.
  Backend* setUpBackend();
  // Run number `run` of `runs` (the warmup ones first), timed between two
  // barriers; the last one also measures the peak memory and records the trace.
  void timedRun(int run, int runs, Evaluator& evaluator, Backend& backend,
                const std::map<std::string, HostTensor>& hostInputs, const std::map<std::string, TensorView>& inputs,
                std::map<std::string, TensorView>& outputs, RunResult& result);
  // The team's peak memory: every rank's backend holds memory of the same kind.
  void teamPeakMemory(RunResult& result);
  // The global outputs, gathered onto rank 0.
  void gatherOutputs(const Evaluator& evaluator, Backend& backend, const std::map<std::string, TensorView>& outputs,
                     RunResult& result);

  // This rank's shard of every input, from the given global tensor or the
  // seed, on the host and in the backend; the reason a given tensor does
  // not fit its declaration, or "".
  std::string prepareInputs(const Evaluator& evaluator, Backend& backend, std::map<std::string, HostTensor>& host,
                            std::map<std::string, TensorView>& device);
};

std::string RankRun::prepareInputs(const Evaluator& evaluator, Backend& backend,
                                   std::map<std::string, HostTensor>& host, std::map<std::string, TensorView>& device) {
  const int64_t rank = comm.rank(), world = comm.size();
  for (const TensorSpec& spec : evaluator.inputs()) {
    try {
      if (auto given = request.inputs.find(spec.name); given != request.inputs.end()) {
        if (std::string error = checkInput(given->second, spec); !error.empty()) return error;
        host[spec.name] = shardOf(given->second, spec, rank, world);
      } else {
        host[spec.name] = seededShard(request.seed, spec, rank, world);
      }
      device[spec.name] = backend.allocate(spec.dtype, spec.localShape, backend.mainStream(), false);
    } catch (const std::bad_alloc&) {
      // An input too large for this rank's memory is an error at its declaration.
      const Decl* decl = request.program.findDecl(spec.name);
      throw DiagnosticError{Diagnostic{
          decl ? decl->loc : SourceLoc{},
          fmt::format("cannot allocate {} for input '{}' (rank {})",
                      formatBytes(tensorBytes(dtypeSize(spec.dtype), {spec.localShape.begin(), spec.localShape.size})),
                      spec.name, rank)}};
    }
  }
  return {};
}

Backend* RankRun::setUpBackend() {
  BackendOptions options = request.backend;
  if (options.cpu.reference) {  // the serial reference runs on the host team's own communicator
    options.kind = BackendKind::Cpu;
    options.communicator = CommunicatorChoice::Auto;
  }
  if (request.writeTrace) options.trace = &recorder;
  rankBackend = hostStep("setting up the backend", [&] { return createBackend(options, comm); });
  Backend* backend = rankBackend.backend.get();
  // --race-check: observe the work as it is issued, on top of the real backend.
  if (request.raceCheck) {
    raceChecker = std::make_unique<RaceCheckBackend>(request.backend.streams, backend);
    backend = raceChecker.get();
  }
  if (request.matchCommunications && signatures) {
    matcher = std::make_unique<CommunicationMatchBackend>(*backend, *signatures);
    backend = matcher.get();
  }
  if (request.cancel) {
    cancellable = std::make_unique<CancellableBackend>(*backend, *request.cancel);
    backend = cancellable.get();
  }
  return backend;
}

void RankRun::timedRun(int run, int runs, Evaluator& evaluator, Backend& backend,
                       const std::map<std::string, HostTensor>& hostInputs,
                       const std::map<std::string, TensorView>& inputs, std::map<std::string, TensorView>& outputs,
                       RunResult& result) {
  const int64_t rank = comm.rank(), world = comm.size();
  const bool last = run == runs - 1;
  outputs.clear();  // the previous run's outputs would count in this one's memory
  MemoryHighWater* memory = rankBackend.backend->tensorMemory();
  if (memory && last) {
    // The streams are idle: this frees what earlier runs left retired
    // (CUDA), so the peak is this run's alone.
    rankBackend.backend->synchronizeHost();
    memory->resetPeak();
  }
  // A program may write its inputs: every run starts from the same ones.
  for (auto& [name, host] : hostInputs) backend.upload(host.data.data(), inputs.at(name));
  if (request.cancel && request.cancel->load(std::memory_order_relaxed)) throwCancelled();
  if (request.atRun) request.atRun(run, false);
  hostStep(fmt::format("the barrier before run {}", run + 1), [&] { comm.barrier(); });  // all ranks start together
  if (request.atRun) request.atRun(run, true);
  auto start = std::chrono::steady_clock::now();
  // The barrier's exit is the time origin every rank's trace shares.
  if (request.writeTrace && last)
    recorder.start(start, TraceSettings{static_cast<int>(rank), static_cast<int>(world), request.traceSourceName,
                                        request.traceLimitBytes});
  outputs = evaluator.run(backend, inputs);
  recorder.stop();
  if (memory && last) result.peakMemoryBytes = memory->peak();
  hostStep(fmt::format("the barrier after run {}", run + 1), [&] { comm.barrier(); });
  auto millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (run >= request.warmup) result.runMillis.push_back(millis);
  if (raceChecker && result.races.empty())
    for (const Race& race : raceChecker->analysis().races()) result.races.push_back(RaceReport{race, rank});
}

void RankRun::teamPeakMemory(RunResult& result) {
  double peak = static_cast<double>(*result.peakMemoryBytes);
  hostStep("the maximum of the peak memory", [&] { comm.allreduce(&peak, &peak, 1, DType::F64, ReduceOp::Max); });
  result.peakMemoryBytes = static_cast<uint64_t>(peak);
}

void RankRun::gatherOutputs(const Evaluator& evaluator, Backend& backend,
                            const std::map<std::string, TensorView>& outputs, RunResult& result) {
  for (const TensorSpec& spec : evaluator.outputs()) {
    HostTensor local = makeHostTensor(spec.dtype, spec.localShape);
    backend.download(outputs.at(spec.name), local.data.data());
    HostTensor global = hostStep(fmt::format("the gathering of output '{}'", spec.name),
                                 [&] { return gatherGlobal(comm, local, spec); });
    if (comm.rank() == 0) result.outputs[spec.name] = std::move(global);
  }
}

Result<RunResult> RankRun::run() {
  Evaluator evaluator(request.program, request.params, comm.rank(), comm.size());
  Backend* backend = setUpBackend();

  std::map<std::string, HostTensor> hostInputs;
  std::map<std::string, TensorView> inputs;
  const std::string inputError = prepareInputs(evaluator, *backend, hostInputs, inputs);
  if (hostStep("the vote on the inputs", [&] { return anyRankFailed(comm, !inputError.empty()); }))
    return Diagnostic{{}, inputError.empty() ? "another rank failed to prepare its inputs" : inputError};

  RunResult result;
  std::map<std::string, TensorView> outputs;
  const int runs = request.warmup + request.repeat;
  for (int run = 0; run < runs; ++run) timedRun(run, runs, evaluator, *backend, hostInputs, inputs, outputs, result);
  result.issuedOperationsPerRun = evaluator.issuedOperations();
  if (result.peakMemoryBytes) teamPeakMemory(result);
  if (request.writeTrace)
    result.trace = hostStep("the writing of the trace", [&] { return request.writeTrace(comm, recorder); });
  gatherOutputs(evaluator, *backend, outputs, result);
  return result;
}

// A rank's run, and whether its failure was caused by another rank's (the
// team was aborted under it) rather than its own.
struct RankOutcome {
  Result<RunResult> result;
  bool failedBecauseOfPeer = false;
};

bool causedByPeer(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const CommError&) {
    return true;
  } catch (...) {
    return false;
  }
}

// The exception boundary of a rank's run: whatever its run throws becomes
// the returned Diagnostic, and the team is aborted with it.
RankOutcome runRank(const RunRequest& request, Communicator& comm, Communicator* signatures) {
  RankRun rankRun{request, comm, signatures, {}, {}, {}, {}, {}};
  try {
    return RankOutcome{rankRun.run()};
  } catch (...) {
    // Abort before the backend is destroyed: a stream blocked in a
    // communication with the other ranks is released instead of hanging the
    // join, and under mpirun this prints the reason before the job ends.
    std::exception_ptr error = std::current_exception();
    RankOutcome outcome{failureDiagnostic(error), causedByPeer(error)};
    const Diagnostic& diag = outcome.result.error();
    std::string reason = diag.message;
    if (request.describeFailure) {
      try {
        reason = request.describeFailure(diag);
      } catch (...) {  // the plain message, then
      }
    }
    comm.abort(reason);
    return outcome;
  }
}

}  // namespace

Result<RunResult> runOnRank(const RunRequest& request, Communicator& comm, Communicator* signatures) {
  loadBackendLibraries(request.backend, request.program, 1);
  return runRank(request, comm, signatures).result;
}

Result<RunResult> runInProcess(const RunRequest& request, int64_t world) {
  InProcessTeam team(static_cast<int>(world));
  // The signature exchange of --unchecked runs has a team of its own.
  std::optional<InProcessTeam> signatureTeam;
  if (request.matchCommunications) signatureTeam.emplace(static_cast<int>(world));
  std::vector<std::optional<RankOutcome>> outcomes(static_cast<size_t>(world));
  // Written before the ranks start: a rank that runs out of memory while it
  // is set up could not allocate its message then.
  std::vector<Diagnostic> outOfMemoryAtStart;
  for (int64_t rank = 0; rank < world; ++rank)
    outOfMemoryAtStart.push_back(Diagnostic{{}, fmt::format("out of memory while starting rank {}", rank)});
  auto rankBody = [&](int64_t rank) {
    std::optional<RankOutcome>& outcome = outcomes[static_cast<size_t>(rank)];
    try {
      auto comm = team.communicator(static_cast<int>(rank));
      std::unique_ptr<Communicator> signatures;
      if (signatureTeam) signatures = signatureTeam->communicator(static_cast<int>(rank));
      outcome = runRank(request, *comm, signatures.get());
    } catch (const std::bad_alloc&) {
      // An exception must not leave the thread, and the ranks already
      // running wait for this one: the team is aborted.
      outcome = RankOutcome{std::move(outOfMemoryAtStart[static_cast<size_t>(rank)]), false};
      team.abort(outcome->result.error().message);
    } catch (...) {
      outcome = RankOutcome{failureDiagnostic(std::current_exception()), false};
      team.abort(outcome->result.error().message);
    }
    // A failure that happened to this rank must also release the signature team.
    if (!outcome->result && signatureTeam) signatureTeam->abort(outcome->result.error().message);
  };
  loadBackendLibraries(request.backend, request.program, world);
  std::vector<std::thread> threads;
  // A rank whose thread cannot start fails the run: the ranks already
  // started wait for it in their first barrier, so the team is aborted.
  std::optional<Diagnostic> notStarted;
  for (int64_t rank = 1; rank < world && !notStarted; ++rank) {
    try {
      threads.push_back(startThread(fmt::format("rank {}'s thread", rank), [&rankBody, rank] { rankBody(rank); }));
    } catch (const ResourceError& e) {
      notStarted = Diagnostic{{}, e.what()};
      team.abort(e.what());
      if (signatureTeam) signatureTeam->abort(e.what());
    }
  }
  if (!notStarted) rankBody(0);
  for (auto& t : threads) t.join();
  if (notStarted) return *notStarted;
  // The error to report is the one that started the failure: a rank's own,
  // not the communication errors it caused in its peers.
  const Diagnostic* cause = nullptr;
  for (const auto& outcome : outcomes) {
    if (outcome->result) continue;
    if (!outcome->failedBecauseOfPeer) {
      cause = &outcome->result.error();
      break;
    }
    if (!cause) cause = &outcome->result.error();
  }
  if (cause) return *cause;
  // Races may differ between ranks (rank-dependent programs): report every rank's.
  RunResult result = std::move(outcomes[0]->result.value());
  for (size_t rank = 1; rank < outcomes.size(); ++rank)
    for (RaceReport& race : outcomes[rank]->result.value().races) result.races.push_back(std::move(race));
  return result;
}

}  // namespace hostir
