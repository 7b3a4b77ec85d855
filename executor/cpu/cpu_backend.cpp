#include "executor/cpu/cpu_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>

#include "executor/cpu/blas_library.h"
#include "ir/thread_start.h"
#include "runtime/collective_plan.h"
#include "runtime/index_fault.h"
#include "runtime/work_cost.h"

namespace hostir::cpu {
namespace {

TensorView borrowed(const void* data, DType dtype, const Dims& shape) {
  TensorView v = TensorView::contiguous(nullptr, dtype, shape);
  v.buffer = std::make_shared<BorrowedBuffer>(data, v.bytes());
  return v;
}

// A computation's operands held by value: the task runs after the evaluator
// has moved on, when the views a KernelCall points to may have changed.
class KernelOperands {
 public:
  explicit KernelOperands(const KernelCall& call) : kind_(call.kind) {
    const size_t positions = call.positions();
    std::copy_n(call.scalars.begin(), positions, scalars_.begin());
    std::copy_n(call.integers.begin(), positions, integers_.begin());
    for (size_t i = 0; i < positions; ++i)
      if (call.operands[i]) {
        views_[count_] = *call.operands[i];
        slots_[count_++] = static_cast<uint8_t>(i);
      }
  }
  KernelCall call() const {
    KernelCall call{kind_};
    for (size_t k = 0; k < count_; ++k) call.operands[slots_[k]] = &views_[k];
    call.scalars = scalars_;
    call.integers = integers_;
    return call;
  }

 private:
  OpKind kind_;
  std::array<double, kMaxOperands> scalars_{};
  std::array<int64_t, kMaxOperands> integers_{};
  // The views present, packed: a call has at most kMaxTensorOperands.
  size_t count_ = 0;
  std::array<uint8_t, kMaxTensorOperands> slots_{};
  std::array<TensorView, kMaxTensorOperands> views_;
};

}  // namespace

CpuBackend::CpuBackend(CpuBackendOptions options, Communicator& comm)
    : options_(options),
      comm_(comm),
      gemmKind_(options.reference ? GemmKind::ReferenceF64 : GemmKind::Blas),
      computeGate_(options.reference ? 0 : options.coresPerRank),
      memory_(HostMemoryPool::create()) {
  if (!options.reference) blasLibrary();  // loaded now, on the host: a missing OpenBLAS fails here
  auto skip = [this] { return failed_.load(std::memory_order_acquire); };
  auto onFailure = [this](std::exception_ptr e) { fail(e); };
  DelayInjection delays = options_.delays;
  delays.seed = delays.seed * 1000003u + static_cast<uint64_t>(comm.rank());
  main_ = std::make_unique<CpuStream>(-1, delays, skip, onFailure);
  if (!options_.reference)
    for (int64_t slot = 0; slot < options_.streams; ++slot)
      pool_.push_back(std::make_unique<CpuStream>(static_cast<int>(slot), delays, skip, onFailure));
  watchdog_ = startThread("the CPU backend's watchdog", [this] { watch(); });
}

CpuBackend::~CpuBackend() {
  {
    std::lock_guard lock(watchdogMutex_);
    stopping_ = true;
  }
  watchdogWake_.notify_all();
  watchdog_.join();
  pool_.clear();
  main_.reset();
}

void CpuBackend::beginRun() {
  // The CPU main stream is the backend's own thread; nothing to capture.
  failed_.store(false, std::memory_order_release);
  computeGate_.reset();
  std::lock_guard lock(failureMutex_);
  firstFailure_ = nullptr;
}

Stream* CpuBackend::workerStream(int64_t number) {
  if (options_.reference) return main_.get();  // one stream for everything
  return pool_[static_cast<size_t>(number % options_.streams)].get();
}

void CpuBackend::beginOperation(const OperationInfo& info) {
  currentKind_ = info.kind;
  currentLoc_ = info.loc;
  const bool indexes = info.kind == OpKind::GatherRows || info.kind == OpKind::ScatterAddRows;
  currentIndexed_ = indexes ? std::make_shared<const IndexedTensors>(indexedTensors(info.kind, info.names)) : nullptr;
  if (options_.trace && options_.trace->recording()) issueStart_ = std::chrono::steady_clock::now();
}

void CpuBackend::enqueue(Stream* stream, CpuStream::Task task, Work work) {
  if (work.admission != Admission::None) work.ticket = computeGate_.nextTicket();
  if (!work.loc.valid()) {
    work.kind = currentKind_;
    work.loc = currentLoc_;
    work.indexed = currentIndexed_;
  }
  TraceRecorder* trace = options_.trace;
  if (!trace || !trace->recording()) {
    if (work.admission == Admission::None) {
      cpuStream(stream)->enqueue(std::move(task));
    } else {
      cpuStream(stream)->enqueue([this, work, task = std::move(task)] { runAdmitted(work, task); });
    }
    return;
  }
  std::string_view name = signatureOf(work.kind).name;
  std::string loc = work.loc.valid() ? fmt::format("{}:{}", work.loc.line, work.loc.col) : std::string();
  int track = stream->slot();
  cpuStream(stream)->enqueue([this, trace, track, name, loc, work, task = std::move(task)] {
    auto queued = std::chrono::steady_clock::now();
    std::optional<ComputeGate::Span> span = runAdmitted(work, task);
    if (!span) return;
    auto micros = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
    // Waiting for a core or for the communication's turn is shown apart from the work.
    if (span->start - queued > std::chrono::microseconds(5))
      trace->add(TraceSlice{track, work.admission == Admission::CommTurn ? "wait for its turn" : "wait for a core",
                            "sync", loc, trace->microsSinceOrigin(queued), micros(span->start - queued), 0, 0});
    trace->add(TraceSlice{track, name, work.category, loc, trace->microsSinceOrigin(span->start),
                          micros(span->end - span->start), work.bytes, work.flops});
  });
  // The host's share: from the statement's start to its work being queued.
  auto now = std::chrono::steady_clock::now();
  trace->add(TraceSlice{kHostTrack, name, "host", loc, trace->microsSinceOrigin(issueStart_),
                        std::chrono::duration<double, std::micro>(now - issueStart_).count(), 0, 0});
  issueStart_ = now;
}

std::optional<ComputeGate::Span> CpuBackend::runAdmitted(const Work& work, const CpuStream::Task& task) {
  // Memory that runs out inside a kernel or a communication (a workspace, a
  // staging copy), and a kernel's data at fault (an index out of range), are
  // errors at the statement that issued it.
  try {
    return runAdmittedTask(work, task);
  } catch (const std::bad_alloc&) {
    throw DiagnosticError{
        Diagnostic{work.loc, fmt::format("out of memory while running {}", signatureOf(work.kind).name)}};
  } catch (const IndexOutOfRange& fault) {
    const IndexedTensors tensors = work.indexed ? *work.indexed : indexedTensors(work.kind, {});
    throw DiagnosticError{Diagnostic{work.loc, onRank(indexOutOfRange(tensors, fault), comm_.rank(), comm_.size())}};
  }
}

std::optional<ComputeGate::Span> CpuBackend::runAdmittedTask(const Work& work, const CpuStream::Task& task) {
  switch (work.admission) {
    case Admission::ComputeSlot: return computeGate_.run(work.ticket, task);
    case Admission::CommTurn: {
      TurnLane* lane = nullptr;
      {
        std::unique_lock lock(turnMutex_);
        lane = &turnLanes_[work.lane];
        turnWaiters_.wait(lock, turnTicket(work.lane, work.sequence),
                          [&] { return lane->nextTurn == work.sequence || failed_.load(std::memory_order_acquire); });
        if (lane->nextTurn != work.sequence) return std::nullopt;  // failed: the stream is draining
        lane->inFlight = InFlight{work.sequence, work.kind, work.loc, std::chrono::steady_clock::now(), false};
      }
      // The lane's next communication's turn comes even if this one throws.
      struct TakeTurn {
        CpuBackend* self;
        TurnLane* lane;
        uint32_t number;
        ~TakeTurn() {
          std::lock_guard lock(self->turnMutex_);
          ++lane->nextTurn;
          lane->inFlight.reset();
          self->turnWaiters_.wake(turnTicket(number, lane->nextTurn));
        }
      } takeTurn{this, lane, work.lane};
      // Every earlier-issued computation has started before this takes a core
      // (and none waits for a later communication), so this never deadlocks.
      return computeGate_.run(work.ticket, task);
    }
    case Admission::None: break;
  }
  ComputeGate::Span span;
  span.start = std::chrono::steady_clock::now();
  task();
  span.end = std::chrono::steady_clock::now();
  return span;
}

void CpuBackend::fail(std::exception_ptr error) {
  bool first = false;
  {
    std::lock_guard lock(failureMutex_);
    if (!firstFailure_) {
      firstFailure_ = error;
      first = true;
    }
  }
  failed_.store(true, std::memory_order_release);
  computeGate_.abort();
  {
    std::lock_guard lock(turnMutex_);  // a waiter between its check and its wait must not miss this
    turnWaiters_.wakeAll();
  }
  if (!first) return;
  // Peers may be blocked in a communication with this rank: release them.
  // Under mpirun this abort ends the job, and its reason is all the user
  // reads: the failure as the rank session would report it, position and all.
  comm_.abort(abortReason(failureDiagnostic(error), options_.describeFailure));
}

void CpuBackend::abandonQueuedWork() {
  // As after a stream's failure, minus the failure: the streams skip what
  // is queued and the compute gate lets nobody wait for a turn.
  failed_.store(true, std::memory_order_release);
  computeGate_.abort();
  std::lock_guard lock(turnMutex_);
  turnWaiters_.wakeAll();
}

Event CpuBackend::recordEvent(Stream* stream) { return Event{stream, cpuStream(stream)->issued()}; }

void CpuBackend::waitEvent(Stream* waiter, const Event& event) {
  if (event.stream == waiter) return;  // a stream already runs in order
  CpuStream* target = cpuStream(event.stream);
  if (target->reached(event.position)) return;
  uint64_t position = event.position;
  enqueue(
      waiter, [target, position] { target->waitFor(position); }, Work{"sync"});
}

void CpuBackend::synchronizeHost() {
  TraceRecorder* trace = options_.trace;
  auto start = std::chrono::steady_clock::now();
  main_->waitFor(main_->issued());
  for (auto& stream : pool_) stream->waitFor(stream->issued());
  if (trace && trace->recording()) {
    auto end = std::chrono::steady_clock::now();
    trace->add(TraceSlice{kHostTrack, "wait for the streams", "sync", "", trace->microsSinceOrigin(start),
                          std::chrono::duration<double, std::micro>(end - start).count(), 0, 0});
  }
  std::lock_guard lock(failureMutex_);
  if (firstFailure_) std::rethrow_exception(firstFailure_);
}

TensorView CpuBackend::hostTensor(DType dtype, const Dims& shape) {
  // A size that does not fit in size_t is one no allocation can satisfy.
  size_t bytes = dtypeSize(dtype);
  for (int64_t e : shape)
    if (e < 0 || __builtin_mul_overflow(bytes, static_cast<size_t>(e), &bytes)) throw std::bad_alloc();
  return TensorView::contiguous(memory_->allocate(bytes), dtype, shape);
}

TensorView CpuBackend::allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) {
  TensorView t = hostTensor(dtype, shape);
  if (zero) {
    OpCost cost = costOfCall(OpKind::Allocate, {{operands::Allocate::type, &t}});
    enqueue(
        stream, [t] { fillZero(t); }, Work{traceCategory(OpKind::Allocate), cost.bytes});
  }
  return t;
}

void CpuBackend::deallocate(const TensorView&, Stream*) {
  // Every queued task holds its buffers: memory is freed when the last user is done.
}

void CpuBackend::compute(Stream* stream, const KernelCall& call) {
  OpCost cost = costOfCall(call);
  Work work{traceCategory(call.kind), cost.bytes, cost.flops, Admission::ComputeSlot};
  enqueue(
      stream, [gemm = gemmKind_, operands = KernelOperands(call)] { runKernel(gemm, operands.call()); }, work);
}

void CpuBackend::copy(Stream* stream, const TensorView& src, const TensorView& dst) {
  using O = operands::Copy;
  OpCost cost = costOfCall(OpKind::Copy, {{O::src, &src}, {O::out, &dst}});
  enqueue(
      stream, [src, dst] { cpu::copy(src, dst); }, Work{traceCategory(OpKind::Copy), cost.bytes, cost.flops});
}

uint32_t CpuBackend::turnLane(const CollectiveCall& call) const {
  return call.over != 0 && comm_.groupsOverlap() ? call.over : 0;
}

void CpuBackend::collective(Stream* stream, const CollectiveCall& call) {
  const uint32_t lane = turnLane(call);
  uint64_t sequence = 0;
  {
    std::lock_guard lock(turnMutex_);
    sequence = turnLanes_[lane].issued++;
  }
  OpCost cost = costOfCommunication(call.kind, call.input, call.output);
  enqueue(
      stream, [this, call] { communicate(call); },
      Work{traceCategory(call.kind), cost.bytes, cost.flops, Admission::CommTurn, 0, sequence, lane, call.kind,
           call.loc});
}

void CpuBackend::useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) {
  meshGroups_.use(comm_, extents, overs);
}

void CpuBackend::communicate(const CollectiveCall& call) {
  Communicator& comm = meshGroups_.of(comm_, call.over);
  CollectivePlan plan =
      planCollective(call, comm.size(), [this](DType dtype, const Dims& shape) { return hostTensor(dtype, shape); });
  for (const CopyStep& step : plan.pack) cpu::copy(step.src, step.dst);
  if (options_.delays.maxMicros) {
    thread_local std::mt19937_64 rng(options_.delays.seed + static_cast<uint64_t>(comm_.rank()));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % (options_.delays.maxMicros + 1)));
  }
  plan.communicate(comm);
  for (const CopyStep& step : plan.unpack) cpu::copy(step.src, step.dst);
}

void CpuBackend::watch() {
  std::unique_lock lock(watchdogMutex_);
  while (!stopping_) {
    watchdogWake_.wait_for(lock, std::chrono::milliseconds(100));
    std::string stuck;
    {
      std::lock_guard turn(turnMutex_);
      for (auto& [number, lane] : turnLanes_) {
        std::optional<InFlight>& inFlight = lane.inFlight;
        if (!inFlight || inFlight->reported ||
            std::chrono::steady_clock::now() - inFlight->since <= options_.commTimeout)
          continue;
        const InFlight& call = *inFlight;
        stuck = fmt::format(
            "rank {}: communication #{}{} ({} issued at {}:{}) has not completed after {} s; "
            "another rank failed or issued different communications",
            comm_.rank(), call.sequence, number == 0 ? "" : " of its mesh group", signatureOf(call.kind).name,
            call.loc.line, call.loc.col,
            std::chrono::duration_cast<std::chrono::seconds>(options_.commTimeout).count());
        inFlight->reported = true;
        break;
      }
    }
    if (!stuck.empty()) fail(std::make_exception_ptr(CommError(stuck)));
  }
}

void CpuBackend::upload(const void* host, const TensorView& dst) {
  cpu::copy(borrowed(host, dst.dtype, dst.shape), dst);
}

void CpuBackend::download(const TensorView& src, void* host) { cpu::copy(src, borrowed(host, src.dtype, src.shape)); }

}  // namespace hostir::cpu
