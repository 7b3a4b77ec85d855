// The CUDA backend: streams are CUDA streams (a pool created once, plus a
// main stream of the backend's own), events are positions in a stream (a
// ring of events per stream), computations go through cuda_compute (cuBLAS
// for GEMMs, kernels for the rest), and communications through NCCL or the
// copy-engine communicator on the issuing stream.
//
// The main stream is a non-blocking stream the backend owns rather than
// the legacy default stream (which would serialize against every other
// stream) or cudaStreamPerThread (bound to whichever host thread calls, and
// a stream the backend could not give events of its own). It exists from
// construction, so the runner can allocate inputs before the first run;
// beginRun() makes it the run's main stream afresh (device, failure state).
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/mesh_groups.h"
#include "executor/cuda/cuda_graph.h"
#include "executor/cuda/cuda_index_faults.h"
#include "executor/cuda/cuda_memory.h"
#include "executor/cuda/cuda_stream.h"
#include "executor/cuda/cuda_trace.h"
#include "executor/cuda/nvtx_ranges.h"
#include "hostir/defaults.h"
#include "runtime/backend.h"
#include "runtime/buffer_users.h"

namespace hostir::cuda {

struct CudaBackendOptions {
  int device = 0;
  int64_t streams = kDefaultStreams;
  // A wait for the streams that has not ended after this long, with
  // communications pending, is reported and the team aborted.
  std::chrono::milliseconds commTimeout = kDefaultCommTimeout;
  // The caller's stream as the main stream, never destroyed; null: a stream of the backend's own.
  cudaStream_t externalMainStream = nullptr;
  // The devices of the ranks that read this rank's tensors directly (the
  // copy-engine communicator); they are granted access to its memory.
  std::vector<int> peerDevices;
  TraceRecorder* trace = nullptr;  // set: operations are timed on their streams while it records
  // The first run is captured into a CUDA graph that later runs replay
  // (cuda_graph.h); `graphTeam`: the in-process team that shares the graph
  // (null: this rank's own).
  bool graph = false;
  Communicator* graphTeam = nullptr;
};

class CudaBackend final : public Backend {
 public:
  // `comm` runs the collectives on the backend's streams (NCCL or copy
  // engines); it must outlive the backend.
  CudaBackend(CudaBackendOptions options, Communicator& comm);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string_view name() const override { return "cuda"; }
  void beginOperation(const OperationInfo& info) override;
  // Splits the device team per set of mesh axes (NCCL: a communicator per
  // group; copy engines: a sub-team), kept for the backend's life.
  void useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) override;
  void beginRun() override;
  Stream* mainStream() override { return main_.get(); }
  Stream* workerStream(int64_t number) override;
  Event recordEvent(Stream* stream) override;
  void waitEvent(Stream* waiter, const Event& event) override;
  void synchronizeHost() override;
  bool replaysRuns() const override { return graph_ && graph_->captured(); }
  void replayRun() override;
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override;
  void deallocate(const TensorView& tensor, Stream* stream) override;
  void compute(Stream* stream, const KernelCall& call) override;
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override;
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void* host, const TensorView& dst) override;
  void download(const TensorView& src, void* host) override;
  MemoryHighWater* tensorMemory() override { return &memory_->usage(); }

 private:
  // The stream behind `stream`, marked as having new work that uses the
  // buffers of `uses` (null entries skipped).
  CudaStream& issueOn(Stream* stream, std::span<const TensorView* const> uses = {});
  // Runs `issue`, which puts one call's work on `s`; while the trace
  // records, that work is one slice of `kind` costing `cost()`.
  template <typename Cost, typename Issue>
  void traced(CudaStream& s, OpKind kind, Cost&& cost, Issue&& issue);
  // Every computation, through cuda_compute.h's one case per operation.
  void computeOn(CudaStream& stream, const KernelCall& call);
  // Throws the first index out of range a gather_rows or scatter_add_rows
  // kernel recorded since the last check, as its statement's error.
  void checkIndexFaults();
  // Waits for every stream, watching the pending communications; returns
  // the first failure, if any.
  struct Failure {
    std::string message;
    bool communication;  // a communication failed or never completed
  };
  std::optional<Failure> waitForStreams();
  // Blocks until every stream is idle, without watching (transfers, teardown).
  void drainStreams();
  // Makes every rank's pending work fail (this rank's NCCL kernels end too).
  void abortTeam(const std::string& reason);
  std::vector<CudaStream*> allStreams() const;
  // Graph runs: the host forgets what it knew of the streams' work (they
  // are idle), so no wait of the capture reaches back before it.
  void forgetIssuedWork();
  // Joins the rank's streams into the main one, frees the buffers retired
  // meanwhile there, ends the capture and launches the graph.
  void endCapture();

  CudaBackendOptions options_;
  Communicator& comm_;
  MeshGroups meshGroups_;  // split on the host while the streams are idle
  std::shared_ptr<DeviceMemory> memory_;
  std::unique_ptr<CudaStream> main_;
  std::unique_ptr<IndexFaults> indexFaults_;
  std::vector<std::unique_ptr<CudaStream>> pool_;
  BufferUsers users_;                 // the streams that used each live tensor buffer since the host last synchronized
  std::unique_ptr<CudaTrace> trace_;  // with options_.trace
  NvtxRanges nvtx_;
  SourceLoc currentLoc_;  // of the statement being issued
  // Its operands' names in the program: they live in the evaluator, valid while it is issued.
  std::array<std::string_view, kMaxOperands> currentNames_{};
  std::chrono::steady_clock::time_point issueStart_;  // when it began, while tracing

  // A communication of this run, until the host has seen its stream idle.
  struct PendingCollective {
    uint64_t sequence;
    OpKind kind;
    SourceLoc loc;
    CudaStream* stream;
    uint64_t end;  // the stream's position once it has completed
  };
  uint64_t collectivesIssued_ = 0;
  std::vector<PendingCollective> pending_;
  bool aborted_ = false;
  std::unique_ptr<RunGraph> graph_;  // with options_.graph
  bool graphCommunicates_ = false;   // the captured run issued communications
  bool graphChecksIndices_ = false;  // and index checks
};

}  // namespace hostir::cuda
