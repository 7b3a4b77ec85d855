#include "executor/cuda/cuda_graph.h"

#include <cstdint>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {
namespace {

// An event's handle as every in-process rank may use it.
struct EventHandle {
  uint64_t event;
};

cudaEvent_t eventOf(const EventHandle& handle) { return reinterpret_cast<cudaEvent_t>(handle.event); }

}  // namespace

RunGraph::RunGraph(Communicator* team) : team_(team) {
  checkCuda(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  const cudaError_t status = cudaEventCreateWithFlags(&join_, cudaEventDisableTiming);
  if (status != cudaSuccess) cudaEventDestroy(fork_);
  checkCuda(status, "cudaEventCreateWithFlags");
}

RunGraph::~RunGraph() {
  if (exec_) cudaGraphExecDestroy(exec_);
  cudaEventDestroy(join_);
  cudaEventDestroy(fork_);
}

void RunGraph::begin(cudaStream_t main, const std::vector<cudaStream_t>& others) {
  if (launcher()) {
    // Relaxed: the team's other threads keep calling the runtime (their own
    // streams, events and pools) while this one captures.
    checkCuda(cudaStreamBeginCapture(main, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    capturing_ = true;
    checkCuda(cudaEventRecord(fork_, main), "cudaEventRecord");
  }
  cudaEvent_t fork = fork_;
  if (team_) fork = eventOf(exchangeValues(*team_, EventHandle{reinterpret_cast<uint64_t>(fork_)}).front());
  capturing_ = true;
  if (!launcher()) checkCuda(cudaStreamWaitEvent(main, fork, 0), "cudaStreamWaitEvent");
  for (cudaStream_t stream : others) checkCuda(cudaStreamWaitEvent(stream, fork, 0), "cudaStreamWaitEvent");
}

void RunGraph::end(cudaStream_t main) {
  if (team_) {
    checkCuda(cudaEventRecord(join_, main), "cudaEventRecord");
    const std::vector<EventHandle> joins = exchangeValues(*team_, EventHandle{reinterpret_cast<uint64_t>(join_)});
    if (launcher())
      for (size_t rank = 1; rank < joins.size(); ++rank)
        checkCuda(cudaStreamWaitEvent(main, eventOf(joins[rank]), 0), "cudaStreamWaitEvent");
  }
  capturing_ = false;
  captured_ = true;
  if (launcher()) {
    cudaGraph_t graph = nullptr;
    checkCuda(cudaStreamEndCapture(main, &graph), "cudaStreamEndCapture");
    // The outputs are allocated in the graph and freed by nothing in it:
    // each launch frees the previous launch's.
    const cudaError_t status = cudaGraphInstantiateWithFlags(&exec_, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
    cudaGraphDestroy(graph);
    checkCuda(status, "cudaGraphInstantiateWithFlags");
  }
  // The other ranks leave their streams alone until the graph has run.
  if (team_) team_->barrier();
}

void RunGraph::launch(cudaStream_t main) {
  launched_ = true;
  if (launcher()) checkCuda(cudaGraphLaunch(exec_, main), "cudaGraphLaunch");
}

void RunGraph::meet() {
  if (!launched_) return;
  launched_ = false;
  if (team_) team_->barrier();
}

void RunGraph::abandon(cudaStream_t main) noexcept {
  if (!capturing_) return;
  capturing_ = false;
  if (!launcher()) return;
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(main, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
  cudaGetLastError();  // an invalidated capture's error is not the run's
}

}  // namespace hostir::cuda
