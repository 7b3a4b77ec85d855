#include "executor/cuda/cuda_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_compute.h"
#include "executor/cuda/cuda_copy.h"
#include "runtime/collective_plan.h"
#include "runtime/index_fault.h"
#include "runtime/work_cost.h"

namespace hostir::cuda {
namespace {

std::string streamName(const CudaStream& s) {
  return s.slot() < 0 ? std::string("the main stream") : fmt::format("stream slot {}", s.slot());
}

}  // namespace

CudaBackend::CudaBackend(CudaBackendOptions options, Communicator& comm) : options_(std::move(options)), comm_(comm) {
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  memory_ = DeviceMemory::create(options_.device);
  memory_->grantAccess(options_.peerDevices);
  if (options_.trace) trace_ = std::make_unique<CudaTrace>(*options_.trace);
  main_ = std::make_unique<CudaStream>(-1, options_.externalMainStream);
  for (int64_t slot = 0; slot < std::max<int64_t>(options_.streams, 1); ++slot)
    pool_.push_back(std::make_unique<CudaStream>(static_cast<int>(slot)));
  // Through a stream of the backend's own (the main one may be the caller's, busy).
  indexFaults_ = std::make_unique<IndexFaults>(pool_.front()->native());
  if (options_.graph) graph_ = std::make_unique<RunGraph>(options_.graphTeam);
}

CudaBackend::~CudaBackend() {
  cudaSetDevice(options_.device);
  // Leaving by an exception, peers may never join this rank's pending
  // communications: end them (ncclCommAbort) so that the wait below returns.
  if (std::uncaught_exceptions() > 0 && !aborted_) {
    aborted_ = true;
    try {
      comm_.abort(fmt::format("rank {} failed during the run", comm_.rank()));
    } catch (...) {
    }
  }
  if (graph_) graph_->abandon(main_->native());
  // No buffer may be freed while work can still use it.
  for (CudaStream* s : allStreams()) cudaStreamSynchronize(s->native());
  trace_.reset();
  try {
    memory_->reclaim();
  } catch (...) {
  }
  indexFaults_.reset();
  pool_.clear();
  main_.reset();
  graph_.reset();
  memory_.reset();  // the pools go once the last buffer does
}

std::vector<CudaStream*> CudaBackend::allStreams() const {
  std::vector<CudaStream*> streams{main_.get()};
  for (const auto& s : pool_) streams.push_back(s.get());
  return streams;
}

void CudaBackend::forgetIssuedWork() {
  for (CudaStream* s : allStreams()) s->markIdle();
  pending_.clear();
  users_.clear();
}

void CudaBackend::beginRun() {
  // In-process ranks are threads, and the current device is per thread.
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  pending_.clear();
  if (graph_ && !graph_->captured()) {
    drainStreams();  // the uploads
    forgetIssuedWork();
    std::vector<cudaStream_t> others;
    for (const auto& s : pool_) others.push_back(s->native());
    collectivesIssued_ = 0;
    graph_->begin(main_->native(), others);
    // Each stream joined the capture: each rejoins the main one at its end.
    for (const auto& s : pool_) s->issued();
  }
  if (trace_ && trace_->recording()) {
    trace_->anchor(main_->native());  // the runner starts a run with the streams idle
    issueStart_ = std::chrono::steady_clock::now();
  }
}

void CudaBackend::beginOperation(const OperationInfo& info) {
  currentLoc_ = info.loc;
  currentNames_ = info.names;
  nvtx_.enter(info);
  if (trace_ && trace_->recording()) issueStart_ = std::chrono::steady_clock::now();
}

template <typename Cost, typename Issue>
void CudaBackend::traced(CudaStream& s, OpKind kind, Cost&& cost, Issue&& issue) {
  if (!trace_ || !trace_->recording()) {
    issue();
    return;
  }
  std::string loc = currentLoc_.valid() ? fmt::format("{}:{}", currentLoc_.line, currentLoc_.col) : std::string();
  trace_->begin(s.native());
  issue();
  const OpCost c = cost();
  trace_->end(s.native(), s.slot(), kind, traceCategory(kind), loc, c.bytes, c.flops);
  // The host's share: from the statement's start to its work being queued.
  TraceRecorder& recorder = trace_->recorder();
  const auto now = std::chrono::steady_clock::now();
  recorder.add(TraceSlice{kHostTrack, signatureOf(kind).name, "host", loc, recorder.microsSinceOrigin(issueStart_),
                          std::chrono::duration<double, std::micro>(now - issueStart_).count(), 0, 0});
  issueStart_ = now;
}

Stream* CudaBackend::workerStream(int64_t number) {
  const auto size = static_cast<int64_t>(pool_.size());
  return pool_[static_cast<size_t>((number % size + size) % size)].get();
}

CudaStream& CudaBackend::issueOn(Stream* stream, std::span<const TensorView* const> uses) {
  auto* s = static_cast<CudaStream*>(stream);
  s->issued();
  for (const TensorView* view : uses)
    if (view) users_.noteUse(view->buffer.get(), s);
  return *s;
}

Event CudaBackend::recordEvent(Stream* stream) { return Event{stream, static_cast<CudaStream*>(stream)->record()}; }

void CudaBackend::waitEvent(Stream* waiter, const Event& event) {
  if (event.stream == waiter || !event.stream) return;  // a stream already runs in order
  static_cast<CudaStream*>(waiter)->waitFor(*static_cast<CudaStream*>(event.stream), event.position);
}

// ---- waiting ---------------------------------------------------------------------

std::optional<CudaBackend::Failure> CudaBackend::waitForStreams() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  Clock::time_point nextCheck = start;
  // A graph's communications have no positions to name: the graph is watched whole.
  const bool graphWatched = graph_ && graph_->captured() && graphCommunicates_;
  for (CudaStream* s : allStreams()) {
    // Polled rather than cudaStreamSynchronize: a communication whose peer
    // failed never completes, and only NCCL's error state or the timeout
    // can tell.
    for (;;) {
      const cudaError_t status = cudaStreamQuery(s->native());
      if (status == cudaSuccess) break;
      if (status != cudaErrorNotReady)
        return Failure{
            fmt::format("rank {}: the work on {} failed: {}", comm_.rank(), streamName(*s), cudaGetErrorString(status)),
            false};
      const Clock::time_point now = Clock::now();
      if ((!pending_.empty() || graphWatched) && now >= nextCheck) {
        nextCheck = now + std::chrono::milliseconds(1);
        if (auto error = comm_.asyncError())
          return Failure{fmt::format("rank {}: the communicator reported an error: {}", comm_.rank(), *error), true};
        if (now - start > options_.commTimeout && pending_.empty())
          return Failure{
              fmt::format("rank {}: the CUDA graph's communications have not completed after {} s; "
                          "another rank failed",
                          comm_.rank(), std::chrono::duration_cast<std::chrono::seconds>(options_.commTimeout).count()),
              true};
        if (now - start > options_.commTimeout) {
          const PendingCollective* stuck = &pending_.front();
          for (const PendingCollective& p : pending_) {
            if (!p.stream->reached(p.end)) {
              stuck = &p;
              break;
            }
          }
          return Failure{
              fmt::format("rank {}: communication #{} ({} issued at {}:{}) has not completed after {} s; "
                          "another rank failed or issued different communications",
                          comm_.rank(), stuck->sequence, signatureOf(stuck->kind).name, stuck->loc.line, stuck->loc.col,
                          std::chrono::duration_cast<std::chrono::seconds>(options_.commTimeout).count()),
              true};
        }
      }
      std::this_thread::yield();
    }
  }
  return std::nullopt;
}

void CudaBackend::drainStreams() {
  for (CudaStream* s : allStreams()) checkCuda(cudaStreamSynchronize(s->native()), "cudaStreamSynchronize");
}

void CudaBackend::abortTeam(const std::string& reason) {
  if (aborted_) return;
  aborted_ = true;
  comm_.abort(reason);  // the device communicator first (NCCL: this rank's kernels end), then the host team
}

void CudaBackend::endCapture() {
  for (const auto& s : pool_) main_->waitFor(*s, s->record());
  memory_->freeRetiredOn(main_->native());
  graphCommunicates_ = collectivesIssued_ > 0;
  graphChecksIndices_ = indexFaults_->armed();
  graph_->end(main_->native());
  forgetIssuedWork();
  graph_->launch(main_->native());
}

void CudaBackend::replayRun() {
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  if (graphChecksIndices_) indexFaults_->arm();
  graph_->launch(main_->native());
}

void CudaBackend::synchronizeHost() {
  if (graph_ && graph_->capturing()) endCapture();
  nvtx_.leave();
  const auto start = std::chrono::steady_clock::now();
  if (std::optional<Failure> failure = waitForStreams()) {
    abortTeam(failure->message);
    if (failure->communication) throw CommError(failure->message);
    throw CudaError(failure->message);
  }
  if (trace_ && trace_->recording()) {
    trace_->flush(true);
    TraceRecorder& recorder = trace_->recorder();
    recorder.add(TraceSlice{kHostTrack, "wait for the streams", "sync", "", recorder.microsSinceOrigin(start),
                            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
                            0, 0});
  }
  if (graph_) graph_->meet();  // the team's graph has run, on every rank
  forgetIssuedWork();          // every stream is idle: no use is left to wait for
  memory_->reclaim();          // and retired tensors can go
  checkIndexFaults();
}

void CudaBackend::checkIndexFaults() {
  const std::optional<IndexFaults::Fault> fault = indexFaults_->take(pool_.front()->native());
  if (!fault) return;
  throw DiagnosticError{
      Diagnostic{fault->loc, onRank(indexOutOfRange(fault->tensors, fault->fault), comm_.rank(), comm_.size())}};
}

// ---- memory ----------------------------------------------------------------------

TensorView CudaBackend::allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) {
  CudaStream& s = issueOn(stream);
  TensorView t = TensorView::contiguous(nullptr, dtype, shape);
  t.buffer = memory_->allocateTensor(t.bytes(), s.native());
  users_.noteUse(t.buffer.get(), &s);
  if (zero && t.bytes() > 0)
    traced(
        s, OpKind::Allocate,
        [&] {
          return costOfCall(OpKind::Allocate, {{operands::Allocate::type, &t}});
        },
        [&] { checkCuda(cudaMemsetAsync(t.data(), 0, t.bytes(), s.native()), "cudaMemsetAsync"); });
  return t;
}

void CudaBackend::deallocate(const TensorView& tensor, Stream* stream) {
  // record_stream's rule: the free waits for every stream that used the
  // buffer, then goes in this stream's order, so the pool can hand the
  // memory out again within the run. The verifier has proved that nothing
  // uses the tensor after its deallocate.
  CudaStream& s = issueOn(stream);
  for (Stream* user : users_.release(tensor.buffer.get(), &s)) {
    auto& other = *static_cast<CudaStream*>(user);
    s.waitFor(other, other.record());
  }
  memory_->freeInStreamOrder(tensor.buffer, s.native());
}

// ---- kernels ---------------------------------------------------------------------

void CudaBackend::compute(Stream* stream, const KernelCall& call) {
  CudaStream& s = issueOn(stream, std::span<const TensorView* const>(call.operands).first(call.positions()));
  traced(
      s, call.kind, [&] { return costOfCall(call); }, [&] { computeOn(s, call); });
}

void CudaBackend::computeOn(CudaStream& s, const KernelCall& call) {
  runComputation(ComputeContext{s.native(), s.blas(), *memory_, *indexFaults_, currentLoc_, currentNames_}, call);
}

void CudaBackend::copy(Stream* stream, const TensorView& src, const TensorView& dst) {
  const TensorView* uses[] = {&src, &dst};
  CudaStream& s = issueOn(stream, uses);
  using O = operands::Copy;
  auto cost = [&] { return costOfCall(OpKind::Copy, {{O::src, &src}, {O::out, &dst}}); };
  traced(s, OpKind::Copy, cost, [&] { copyView(s.native(), src, dst); });
}

// ---- communication ---------------------------------------------------------------

void CudaBackend::useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) {
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  meshGroups_.use(comm_, extents, overs);
}

void CudaBackend::collective(Stream* stream, const CollectiveCall& call) {
  Communicator& comm = meshGroups_.of(comm_, call.over);
  const TensorView* uses[] = {&call.input, &call.output};
  CudaStream& s = issueOn(stream, uses);
  // One communication at a time, in issue order, as on the CPU backend:
  // this one starts after the previous one completed, whatever its stream.
  if (!pending_.empty()) s.waitFor(*pending_.back().stream, pending_.back().end);
  auto cost = [&] { return costOfCommunication(call.kind, call.input, call.output); };
  traced(s, call.kind, cost, [&] {
    CollectivePlan plan = planCollective(call, comm.size(), [&](DType dtype, const Dims& shape) {
      TensorView t = TensorView::contiguous(nullptr, dtype, shape);
      t.buffer = memory_->allocateScratch(t.bytes(), s.native());
      return t;
    });
    for (const CopyStep& step : plan.pack) copyView(s.native(), step.src, step.dst);
    plan.communicate(comm, s.native());
    for (const CopyStep& step : plan.unpack) copyView(s.native(), step.src, step.dst);
  });  // the plan's temporaries are freed in the stream's order, after the unpack
  s.issued();
  pending_.push_back(PendingCollective{collectivesIssued_++, call.kind, call.loc, &s, s.record()});
}

// ---- transfers -------------------------------------------------------------------

void CudaBackend::upload(const void* host, const TensorView& dst) {
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  drainStreams();
  if (dst.numel() == 0) return;
  CudaStream& s = issueOn(main_.get());
  if (dst.isContiguous()) {
    checkCuda(cudaMemcpyAsync(dst.data(), host, dst.bytes(), cudaMemcpyHostToDevice, s.native()), "cudaMemcpyAsync");
  } else {
    TensorView staging =
        TensorView::contiguous(memory_->allocateScratch(dst.bytes(), s.native()), dst.dtype, dst.shape);
    checkCuda(cudaMemcpyAsync(staging.data(), host, dst.bytes(), cudaMemcpyHostToDevice, s.native()),
              "cudaMemcpyAsync");
    copyView(s.native(), staging, dst);
  }
  checkCuda(cudaStreamSynchronize(s.native()), "cudaStreamSynchronize");
}

void CudaBackend::download(const TensorView& src, void* host) {
  checkCuda(cudaSetDevice(options_.device), "cudaSetDevice");
  drainStreams();
  if (src.numel() == 0) return;
  CudaStream& s = issueOn(main_.get());
  if (src.isContiguous()) {
    checkCuda(cudaMemcpyAsync(host, src.data(), src.bytes(), cudaMemcpyDeviceToHost, s.native()), "cudaMemcpyAsync");
  } else {
    TensorView staging =
        TensorView::contiguous(memory_->allocateScratch(src.bytes(), s.native()), src.dtype, src.shape);
    copyView(s.native(), src, staging);
    checkCuda(cudaMemcpyAsync(host, staging.data(), src.bytes(), cudaMemcpyDeviceToHost, s.native()),
              "cudaMemcpyAsync");
  }
  checkCuda(cudaStreamSynchronize(s.native()), "cudaStreamSynchronize");
}

}  // namespace hostir::cuda
