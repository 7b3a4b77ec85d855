// The CPU backend: streams are worker threads (a pool created once, plus
// the main stream), GEMMs go through OpenBLAS, and communications run on
// their stream's thread in the order the host issued them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/mesh_groups.h"
#include "executor/cpu/compute_gate.h"
#include "executor/cpu/cpu_kernels.h"
#include "executor/cpu/cpu_stream.h"
#include "executor/cpu/host_memory_pool.h"
#include "executor/cpu/ticket_waiters.h"
#include "executor/rank_failure.h"
#include "hostir/defaults.h"
#include "runtime/backend.h"
#include "runtime/index_fault.h"
#include "runtime/trace.h"

namespace hostir::cpu {

struct CpuBackendOptions {
  int64_t streams = kDefaultStreams;
  // The serial reference: one stream for everything, f64-accumulating GEMMs.
  bool reference = false;
  DelayInjection delays;
  // A communication that has not completed after this long is reported and
  // the team aborted, rather than hanging.
  std::chrono::milliseconds commTimeout = kDefaultCommTimeout;
  // When work on a stream fails, the communicator is aborted once (which
  // releases the other ranks) with this rendering of the failure.
  DescribeFailure describeFailure;
  // Computations of this rank that run at once (0: no limit); the cores
  // the rank may use. More streams than that take turns in issue order.
  int coresPerRank = 0;
  // When set and recording, every task and every issue is traced.
  TraceRecorder* trace = nullptr;
};

class CpuBackend : public Backend {
 public:
  CpuBackend(CpuBackendOptions options, Communicator& comm);
  ~CpuBackend() override;

  std::string_view name() const override { return "cpu"; }
  void beginOperation(const OperationInfo& info) override;
  void useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) override;
  void beginRun() override;
  Stream* mainStream() override { return main_.get(); }
  Stream* workerStream(int64_t number) override;
  Event recordEvent(Stream* stream) override;
  void waitEvent(Stream* waiter, const Event& event) override;
  void synchronizeHost() override;
  void abandonQueuedWork() override;
  bool tensorsInHostMemory() const override { return true; }
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override;
  void deallocate(const TensorView& tensor, Stream* stream) override;
  void compute(Stream* stream, const KernelCall& call) override;
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override;
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void* host, const TensorView& dst) override;
  void download(const TensorView& src, void* host) override;
  MemoryHighWater* tensorMemory() override { return &memory_->usage(); }

 private:
  CpuStream* cpuStream(Stream* stream) const { return static_cast<CpuStream*>(stream); }
  TensorView hostTensor(DType dtype, const Dims& shape);
  // What a task must wait for on its stream before it runs.
  enum class Admission {
    None,
    ComputeSlot,  // a core of the rank (ComputeGate), in issue order
    // Its turn (the communications of a lane run one at a time, in issue
    // order), then a core: Open MPI copies and polls on the CPU, so a
    // communication keeps a core as busy as a GEMM does, and sharing one by
    // time slices slows both.
    CommTurn,
  };
  // What a task is: for admission, traces and the watchdog's messages.
  struct Work {
    const char* category;
    int64_t bytes = 0;
    double flops = 0;
    Admission admission = Admission::None;
    uint64_t ticket = 0;         // the gate's ticket
    uint64_t sequence = 0;       // a communication's place among its lane's on this rank
    uint32_t lane = 0;           // a communication's lane (turnLane)
    OpKind kind = OpKind::Copy;  // the statement that issued it
    SourceLoc loc = {};
    // An indexing statement's tensors, by the program's names, for an index out of range.
    std::shared_ptr<const IndexedTensors> indexed = nullptr;
  };
  void enqueue(Stream* stream, CpuStream::Task task, Work work);
  // Runs the task once admitted;
  // returns when it ran, or nullopt when the rank failed first and the task
  // was dropped. Running out of memory in it, or an index out of range
  // (IndexOutOfRange), is an error at its statement.
  std::optional<ComputeGate::Span> runAdmitted(const Work& work, const CpuStream::Task& task);
  std::optional<ComputeGate::Span> runAdmittedTask(const Work& work, const CpuStream::Task& task);
  void communicate(const CollectiveCall& call);
  void fail(std::exception_ptr error);
  void watch();

  CpuBackendOptions options_;
  Communicator& comm_;
  MeshGroups meshGroups_;  // split on the host while the streams are idle
  GemmKind gemmKind_;
  ComputeGate computeGate_;
  std::shared_ptr<HostMemoryPool> memory_;

  std::atomic<bool> failed_{false};
  std::mutex failureMutex_;
  std::exception_ptr firstFailure_;

  // Communications take turns in issue order, one at a time per lane: the
  // whole team's communications are one lane, and each set of mesh axes
  // (`over`) is a lane of its own where the team's groups may communicate
  // at the same time (Communicator::groupsOverlap), else part of lane 0.
  uint32_t turnLane(const CollectiveCall& call) const;
  // A waiter's ticket: its lane and its place in it.
  static uint64_t turnTicket(uint32_t lane, uint64_t sequence) { return (uint64_t{lane} << 40) ^ sequence; }
  struct InFlight {
    uint64_t sequence;
    OpKind kind;
    SourceLoc loc = {};
    std::chrono::steady_clock::time_point since;
    bool reported;
  };
  struct TurnLane {
    uint64_t nextTurn = 0;             // guarded by turnMutex_
    uint64_t issued = 0;               // host only
    std::optional<InFlight> inFlight;  // guarded by turnMutex_
  };
  std::mutex turnMutex_;
  TicketWaiters turnWaiters_;               // guarded by turnMutex_
  std::map<uint32_t, TurnLane> turnLanes_;  // guarded by turnMutex_ (nodes stay put once made)
  uint64_t communications_ = 0;             // host only: this run's communications, for messages

  std::mutex watchdogMutex_;
  std::condition_variable watchdogWake_;
  bool stopping_ = false;  // guarded by watchdogMutex_
  std::thread watchdog_;

  // The statement being issued, for traces and errors (host only).
  OpKind currentKind_ = OpKind::Copy;
  SourceLoc currentLoc_;
  std::shared_ptr<const IndexedTensors> currentIndexed_;  // set for gather_rows and scatter_add_rows
  std::chrono::steady_clock::time_point issueStart_;

  std::unique_ptr<CpuStream> main_;
  std::vector<std::unique_ptr<CpuStream>> pool_;
};

}  // namespace hostir::cpu
