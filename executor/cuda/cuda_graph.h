// A run recorded once into a CUDA graph and replayed (`run --graph`). The
// first run's work is captured from the rank's streams instead of being run:
// every kernel, cuBLAS call, copy, stream-ordered allocation and free, event
// and collective becomes a node, and the waits between streams its edges.
// Later runs launch the graph with one call.
//
// The ranks of an in-process team capture into one graph, since the
// copy-engine communicator's streams wait for their peers' fences: rank 0's
// main stream starts the capture, every other stream of every rank joins it
// by waiting for rank 0's fork event, and at the end every rank's main stream
// (which first waits for the rank's other streams) joins back into rank 0's,
// which ends the capture. The host rendezvous of each collective happens
// once, while capturing. Rank 0 launches the team's graph; every rank waits
// for it to complete at the team's barrier. A rank of an MPI job has a graph
// of its own (NCCL collectives are captured as kernels).
//
// Buffers a run allocates are the graph's (allocation nodes), at addresses
// fixed for the graph's life; the outputs are never freed in the graph, so
// each launch first frees the previous launch's outputs (the caller has read
// them by then).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "comm/communicator.h"

namespace hostir::cuda {

class RunGraph {
 public:
  // `team`: the in-process team whose ranks share one graph; null for a
  // rank that captures alone.
  explicit RunGraph(Communicator* team);
  ~RunGraph();
  RunGraph(const RunGraph&) = delete;
  RunGraph& operator=(const RunGraph&) = delete;

  bool capturing() const { return capturing_; }
  bool captured() const { return captured_; }

  // Collective over the team: `main` and `others` (every stream of the
  // rank) start capturing into the team's graph.
  void begin(cudaStream_t main, const std::vector<cudaStream_t>& others);
  // Collective: ends the capture. Every stream of the rank must have joined
  // `main` (it waited for their work), and no other work may be issued on
  // them until the graph has run.
  void end(cudaStream_t main);
  // Rank 0 (or a rank alone) launches the graph on `main`; the others do
  // nothing, since their work is in it.
  void launch(cudaStream_t main);
  // Collective, after the launching rank has seen its stream complete: the
  // graph has run, on every rank.
  void meet();
  // Ends a capture that failed, discarding what it recorded.
  void abandon(cudaStream_t main) noexcept;

 private:
  bool launcher() const { return !team_ || team_->rank() == 0; }

  Communicator* team_;
  cudaEvent_t fork_ = nullptr;  // rank 0's main stream at the capture's start
  cudaEvent_t join_ = nullptr;  // this rank's main stream at the capture's end
  cudaGraphExec_t exec_ = nullptr;
  bool capturing_ = false;
  bool captured_ = false;
  bool launched_ = false;  // since the last meet
};

}  // namespace hostir::cuda
