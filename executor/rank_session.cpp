#include "executor/rank_session.h"

#include <fmt/format.h>

#include <exception>
#include <new>
#include <optional>

#include "analysis/race_check_backend.h"
#include "executor/backend_factory.h"
#include "executor/communication_match_backend.h"
#include "executor/cpu/cpu_kernels.h"
#include "ir/byte_size.h"
#include "runtime/evaluator.h"
#include "runtime/forwarding_backend.h"

namespace hostir {
namespace {

[[noreturn]] void throwCancelled(SourceLoc loc = {}) {
  throw DiagnosticError{Diagnostic{loc, "the run was cancelled"}};
}

bool cancelled(const std::atomic<bool>* flag) { return flag && flag->load(std::memory_order_relaxed); }

// Stops the rank at its next operation once the call is cancelled: the
// evaluator calls beginOperation before issuing each one, so a cancelled
// rank stops between operations and its failure unwinds the team (the
// peers blocked in a communication with it are released by the abort).
class CancellableBackend : public ForwardingBackend {
 public:
  explicit CancellableBackend(Backend& forward) : ForwardingBackend(forward) {}
  void setFlag(const std::atomic<bool>* flag) { flag_ = flag; }

  void beginOperation(const OperationInfo& info) override {
    if (cancelled(flag_)) throwCancelled(info.loc);
    forward_.beginOperation(info);
  }
  // A run's work is all issued once the host waits for it.
  void synchronizeHost() override {
    issuedAt_ = std::chrono::steady_clock::now();
    forward_.synchronizeHost();
  }
  std::chrono::steady_clock::time_point issuedAt() const { return issuedAt_; }

 private:
  const std::atomic<bool>* flag_ = nullptr;
  std::chrono::steady_clock::time_point issuedAt_;
};

// Why a caller's global tensor does not fit its declaration, or "".
std::string inputProblem(const HostTensorRef& t, const TensorSpec& spec) {
  if (t.dtype != spec.dtype)
    return fmt::format("input '{}' must be {}, but the file holds {}", spec.name, dtypeName(spec.dtype),
                       dtypeName(t.dtype));
  if (Dims(t.shape) != spec.globalShape)
    return fmt::format("input '{}' must have the global shape [{}], but the file holds [{}]", spec.name,
                       fmt::join(spec.globalShape, ", "), fmt::join(t.shape, ", "));
  return {};
}

bool causedByPeer(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const CommError&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

const Diagnostic* firstCause(const std::vector<RankOutcome>& outcomes) {
  const Diagnostic* cause = nullptr;
  for (const RankOutcome& outcome : outcomes) {
    if (outcome.result) continue;
    if (!outcome.failedBecauseOfPeer) return &outcome.result.error();
    if (!cause) cause = &outcome.result.error();
  }
  return cause;
}

// Everything a rank keeps between calls. Device tensors of the inputs are
// allocated once; a program may write its inputs, so each run uploads
// them, except those it never writes, which a host-memory backend reads in
// place.
struct RankSession::State {
  const RunRequest& request;
  Communicator& comm;
  Communicator* signatures;
  TraceRecorder recorder;
  RankBackend rankBackend;
  std::optional<Evaluator> evaluator;
  std::unique_ptr<RaceCheckBackend> raceChecker;
  std::unique_ptr<CommunicationMatchBackend> matcher;
  std::unique_ptr<CancellableBackend> cancellable;
  Backend* backend = nullptr;  // the top of the stack above: what work is issued to
  std::map<std::string, TensorView> inputs;
  // This run's inputs: `inputs`, or the caller's memory for those read in
  // place (RunRequest::inputsReadInPlace).
  std::map<std::string, TensorView> runInputs;
  std::map<std::string, HostTensor> seeded;   // inputs the calls did not give, filled once
  std::map<std::string, HostTensor> staging;  // strided shards made contiguous for their upload
  // A graph's outputs: the captured run allocated them, and every replay writes them.
  std::map<std::string, TensorView> graphOutputs;

  template <typename Step>
  auto hostStep(std::string what, Step&& step) {
    return withDeadline(request.watchdog, std::move(what), std::forward<Step>(step));
  }

  void setUp();
  void setUpBackend();
  // The reason an input could not be allocated, as a positioned error.
  [[noreturn]] void inputTooLarge(const TensorSpec& spec) const;
  RunResult run(const RunCall& call);
  // This call's shard of every input, uploaded into the rank's tensors.
  void uploadInputs(const RunCall& call);
  // Whether this rank reads the caller's tensor of `spec` in place when its shard is contiguous.
  bool readsInPlace(const TensorSpec& spec) const;
  // The rank's own buffer for an input, allocated on first need.
  const TensorView& inputBuffer(const TensorSpec& spec);
  void timedRun(int run, int runs, const RunCall& call, std::map<std::string, TensorView>& outputs, RunResult& result);
  // The outputs' global tensors onto rank 0: into the call's destinations,
  // or into the result.
  void gatherOutputs(const RunCall& call, const std::map<std::string, TensorView>& outputs, RunResult& result);
  // Runs `step`; whatever it throws becomes the outcome's Diagnostic, and the team is aborted with it.
  template <typename Step>
  RankOutcome guarded(Step&& step);
};

void RankSession::State::setUpBackend() {
  BackendOptions options = request.backend;
  options.describeFailure = request.describeFailure;  // a stream's failure aborts the team as the host's would
  if (options.cpu.reference) {                        // the serial reference runs on the host team's own communicator
    options.kind = BackendKind::Cpu;
    options.communicator = CommunicatorChoice::Auto;
  }
  if (request.writeTrace) options.trace = &recorder;
  rankBackend = hostStep("setting up the backend", [&] { return createBackend(options, comm); });
  backend = rankBackend.backend.get();
  // --race-check: observe the work as it is issued, on top of the real backend.
  if (request.raceCheck) {
    raceChecker = std::make_unique<RaceCheckBackend>(request.backend.streams, backend);
    backend = raceChecker.get();
  }
  if (request.matchCommunications && signatures) {
    matcher = std::make_unique<CommunicationMatchBackend>(*backend, *signatures, request.program);
    backend = matcher.get();
  }
  cancellable = std::make_unique<CancellableBackend>(*backend);
  backend = cancellable.get();
}

void RankSession::State::inputTooLarge(const TensorSpec& spec) const {
  const Decl* decl = request.program.findDecl(spec.name);
  throw DiagnosticError{Diagnostic{
      decl ? decl->loc : SourceLoc{},
      fmt::format("cannot allocate {} for input '{}' (rank {})",
                  formatBytes(tensorBytes(dtypeSize(spec.dtype), {spec.localShape.begin(), spec.localShape.size})),
                  spec.name, comm.rank())}};
}

void RankSession::State::setUp() {
  evaluator.emplace(request.program, request.params, comm.rank(), comm.size());
  setUpBackend();
  const TensorSpec* tooLarge = nullptr;
  for (const TensorSpec& spec : evaluator->inputs()) {
    if (readsInPlace(spec)) continue;  // allocated only if a run cannot read the caller's memory
    try {
      inputs[spec.name] = backend->allocate(spec.dtype, spec.localShape, backend->mainStream(), false);
    } catch (const std::bad_alloc&) {
      tooLarge = &spec;
      break;
    }
  }
  if (hostStep("the vote on the inputs", [&] { return anyRankFailed(comm, tooLarge != nullptr); })) {
    if (tooLarge) inputTooLarge(*tooLarge);
    throw DiagnosticError{Diagnostic{{}, "another rank failed to allocate its inputs"}};
  }
}

bool RankSession::State::readsInPlace(const TensorSpec& spec) const {
  // The race checker tracks the buffers it allocated: it sees copies.
  return rankBackend.backend->tensorsInHostMemory() && !raceChecker && request.inputsReadInPlace.count(spec.name);
}

const TensorView& RankSession::State::inputBuffer(const TensorSpec& spec) {
  auto found = inputs.find(spec.name);
  if (found != inputs.end()) return found->second;
  try {
    return inputs[spec.name] = backend->allocate(spec.dtype, spec.localShape, backend->mainStream(), false);
  } catch (const std::bad_alloc&) {
    inputs.erase(spec.name);
    inputTooLarge(spec);
  }
}

void RankSession::State::uploadInputs(const RunCall& call) {
  const int64_t rank = comm.rank(), world = comm.size();
  for (const TensorSpec& spec : evaluator->inputs()) {
    auto given = call.inputs.find(spec.name);
    if (given != call.inputs.end() && readsInPlace(spec)) {
      TensorView shard = shardView(given->second, spec, rank, world);
      if (shard.isContiguous()) {
        runInputs[spec.name] = shard;
        continue;
      }
    }
    const TensorView& device = runInputs[spec.name] = inputBuffer(spec);
    if (given == call.inputs.end()) {
      auto [seed, fresh] = seeded.try_emplace(spec.name);
      if (fresh) seed->second = seededShard(request.seed, spec, rank, world);
      backend->upload(seed->second.data.data(), device);
      continue;
    }
    TensorView shard = shardView(given->second, spec, rank, world);
    if (rankBackend.backend->tensorsInHostMemory()) {  // one copy, strided or not
      cpu::copy(shard, device);
      continue;
    }
    if (shard.isContiguous()) {
      backend->upload(shard.data(), device);
      continue;
    }
    auto [stage, fresh] = staging.try_emplace(spec.name);
    if (fresh) stage->second = makeHostTensor(spec.dtype, spec.localShape);
    cpu::copy(shard, viewOf(stage->second));
    backend->upload(stage->second.data.data(), device);
  }
}

void RankSession::State::timedRun(int run, int runs, const RunCall& call, std::map<std::string, TensorView>& outputs,
                                  RunResult& result) {
  const int64_t rank = comm.rank(), world = comm.size();
  const bool last = run == runs - 1;
  // A replayed graph writes the outputs the captured run allocated.
  const bool replay = backend->replaysRuns();
  if (!replay) outputs.clear();  // the previous run's outputs would count in this one's memory
  MemoryHighWater* memory = rankBackend.backend->tensorMemory();
  if (memory && last && !replay) {
    // The streams are idle: this frees what earlier runs left retired
    // (CUDA), so the peak is this run's alone.
    rankBackend.backend->synchronizeHost();
    memory->resetPeak();
  }
  // A program may write its inputs: every run starts from the same ones.
  uploadInputs(call);
  if (cancelled(call.cancel)) throwCancelled();
  if (request.atRun) request.atRun(run, false);
  hostStep(fmt::format("the barrier before run {}", run + 1), [&] { comm.barrier(); });  // all ranks start together
  if (request.atRun) request.atRun(run, true);
  auto start = std::chrono::steady_clock::now();
  // The barrier's exit is the time origin every rank's trace shares.
  if (request.writeTrace && last)
    recorder.start(start, TraceSettings{static_cast<int>(rank), static_cast<int>(world), request.traceSourceName,
                                        request.traceLimitBytes});
  if (replay) {
    backend->replayRun();
    backend->synchronizeHost();
    outputs = graphOutputs;
  } else {
    outputs = evaluator->run(*backend, runInputs);
    if (request.backend.graph) graphOutputs = outputs;
  }
  recorder.stop();
  const auto issued = cancellable->issuedAt();
  if (memory && last) {
    // The team's peak, agreed on where the ranks meet anyway: this
    // allreduce is the barrier that ends the run.
    double peak = static_cast<double>(memory->peak());
    hostStep(fmt::format("the barrier after run {}", run + 1),
             [&] { comm.allreduce(&peak, &peak, 1, DType::F64, ReduceOp::Max); });
    result.peakMemoryBytes = static_cast<uint64_t>(peak);
  } else {
    hostStep(fmt::format("the barrier after run {}", run + 1), [&] { comm.barrier(); });
  }
  auto millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (run >= request.warmup) {
    result.runMillis.push_back(millis);
    result.issueMillis.push_back(std::chrono::duration<double, std::milli>(issued - start).count());
  }
  if (raceChecker && result.races.empty())
    for (const Race& race : raceChecker->analysis().races()) result.races.push_back(RaceReport{race, rank});
}

void RankSession::State::gatherOutputs(const RunCall& call, const std::map<std::string, TensorView>& outputs,
                                       RunResult& result) {
  const bool leader = comm.rank() == 0;
  for (const TensorSpec& spec : evaluator->outputs()) {
    auto destination = call.outputs.find(spec.name);
    const bool direct = destination != call.outputs.end();
    if (!direct && !call.gatherOtherOutputs) continue;
    const TensorView& output = outputs.at(spec.name);
    if (!spec.shardAxis && call.gatherCopies) {
      HostTensor mine = makeHostTensor(spec.dtype, spec.localShape);
      backend->download(output, mine.data.data());
      std::vector<HostTensor> copies =
          hostStep(fmt::format("the gathering of output '{}'", spec.name), [&] { return gatherCopies(comm, mine); });
      if (leader) result.copies[spec.name] = std::move(copies);
    }
    if (!spec.shardAxis) {  // every rank holds it whole: rank 0's copy is the global tensor
      if (direct && (leader || call.everyRankWritesReplicatedOutputs)) {
        backend->download(output, destination->second);
        continue;
      }
      if (!leader) continue;
      HostTensor whole = makeHostTensor(spec.dtype, spec.localShape);
      backend->download(output, whole.data.data());
      result.outputs[spec.name] = std::move(whole);
      continue;
    }
    HostTensor local = makeHostTensor(spec.dtype, spec.localShape);
    backend->download(output, local.data.data());
    std::byte* global = nullptr;
    if (leader && !direct)
      global =
          result.outputs.emplace(spec.name, makeHostTensor(spec.dtype, spec.globalShape)).first->second.data.data();
    if (leader && direct) global = destination->second;
    hostStep(fmt::format("the gathering of output '{}'", spec.name),
             [&] { gatherGlobalInto(comm, local, spec, global); });
  }
}

RunResult RankSession::State::run(const RunCall& call) {
  cancellable->setFlag(call.cancel);
  RunResult result;
  std::map<std::string, TensorView> outputs;
  const int runs = request.warmup + request.repeat;
  for (int run = 0; run < runs; ++run) timedRun(run, runs, call, outputs, result);
  result.issuedOperationsPerRun = evaluator->issuedOperations();
  if (request.writeTrace)
    result.trace = hostStep("the writing of the trace", [&] { return request.writeTrace(comm, recorder); });
  gatherOutputs(call, outputs, result);
  return result;
}

template <typename Step>
RankOutcome RankSession::State::guarded(Step&& step) {
  try {
    return RankOutcome{step()};
  } catch (...) {
    // Abort while the backend is alive: a stream blocked in a communication
    // with the other ranks is released instead of hanging the join, and
    // under mpirun this prints the reason before the job ends. The streams
    // drop what they have queued rather than run it to no purpose.
    std::exception_ptr error = std::current_exception();
    RankOutcome outcome{failureDiagnostic(error), causedByPeer(error), true};
    if (rankBackend.backend) rankBackend.backend->abandonQueuedWork();
    comm.abort(abortReason(outcome.result.error(), request.describeFailure));
    // Peers may wait in an exchange of signatures instead (a mesh group's
    // mismatch leaves the rest of the team in the team's exchange).
    if (signatures) signatures->abort(abortReason(outcome.result.error(), request.describeFailure));
    return outcome;
  }
}

RankSession::RankSession(const RunRequest& request, Communicator& comm, Communicator* signatures)
    : state_(new State{request, comm, signatures, {}, {}, {}, {}, {}, {}, nullptr, {}, {}, {}, {}, {}}) {}

RankSession::~RankSession() = default;

RankOutcome RankSession::setUp() {
  return state_->guarded([&] {
    state_->setUp();
    return RunResult{};
  });
}

RankOutcome RankSession::run(const RunCall& call) {
  if (!state_->backend) return RankOutcome{Diagnostic{{}, "the rank could not be set up"}};
  // Every rank sees the same inputs, so every rank refuses them alike and
  // none enters a communication alone: the team stays usable.
  for (const TensorSpec& spec : state_->evaluator->inputs())
    if (auto given = call.inputs.find(spec.name); given != call.inputs.end())
      if (std::string problem = inputProblem(given->second, spec); !problem.empty())
        return RankOutcome{Diagnostic{{}, problem}};
  return state_->guarded([&] { return state_->run(call); });
}

void RankSession::abandonQueuedWork() {
  if (state_->rankBackend.backend) state_->rankBackend.backend->abandonQueuedWork();
}

}  // namespace hostir
