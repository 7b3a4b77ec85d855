// `hostir run --trace` on the CUDA backend: each operation's work is timed
// on its stream between two timing events, taken from a pool that grows to
// the work in flight and is reused, and written as the CPU backend writes
// its slices (runtime/trace.h), on the same time origin. GPU times become
// host times through an anchor: an event recorded on an idle stream at the
// start of the run, whose host time is taken as the middle of the record
// and the host's wait for it (a few microseconds' uncertainty).
//
// Slices are resolved in each stream's order as their end events complete,
// polled whenever work is issued and all of them once the streams are idle,
// so the events in use stay about as many as the operations queued on the GPU.
#pragma once

#include <cuda_runtime_api.h>

#include <deque>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "runtime/trace.h"

namespace hostir::cuda {

class CudaTrace {
 public:
  explicit CudaTrace(TraceRecorder& recorder) : recorder_(recorder) {}
  ~CudaTrace();
  CudaTrace(const CudaTrace&) = delete;
  CudaTrace& operator=(const CudaTrace&) = delete;

  bool recording() const { return recorder_.recording(); }
  TraceRecorder& recorder() { return recorder_; }

  // At the start of a recorded run, with `stream` idle.
  void anchor(cudaStream_t stream);
  // Brackets the work one operation issues on `stream` (track: its slot).
  void begin(cudaStream_t stream);
  void end(cudaStream_t stream, int track, OpKind kind, const char* category, std::string loc, int64_t bytes,
           double flops);
  // Writes the slices whose work has completed; with `all`, every slice
  // (call once the streams are idle).
  void flush(bool all);

 private:
  struct Pending {
    cudaEvent_t start;
    cudaEvent_t end;
    OpKind kind;
    const char* category;
    std::string loc;
    int64_t bytes;
    double flops;
  };
  cudaEvent_t take();
  void write(int track, const Pending& slice);

  TraceRecorder& recorder_;
  cudaEvent_t anchor_ = nullptr;
  double anchorMicros_ = 0;
  cudaEvent_t open_ = nullptr;               // the start event of the operation being issued
  std::vector<cudaEvent_t> free_;            // the pool
  std::vector<std::deque<Pending>> tracks_;  // by track + 1 (the main stream is track -1)
};

}  // namespace hostir::cuda
