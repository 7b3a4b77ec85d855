#include "executor/cuda/cuda_trace.h"

#include <chrono>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {

CudaTrace::~CudaTrace() {
  // The backend destroys the trace after its streams are idle.
  for (auto& track : tracks_)
    for (const Pending& p : track) free_.insert(free_.end(), {p.start, p.end});
  if (open_) free_.push_back(open_);
  for (cudaEvent_t event : free_) cudaEventDestroy(event);
  if (anchor_) cudaEventDestroy(anchor_);
}

cudaEvent_t CudaTrace::take() {
  if (!free_.empty()) {
    cudaEvent_t event = free_.back();
    free_.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  checkCuda(cudaEventCreate(&event), "cudaEventCreate");  // with timing
  return event;
}

void CudaTrace::anchor(cudaStream_t stream) {
  if (!anchor_) checkCuda(cudaEventCreate(&anchor_), "cudaEventCreate");
  using Clock = TraceRecorder::Clock;
  const Clock::time_point before = Clock::now();
  checkCuda(cudaEventRecord(anchor_, stream), "cudaEventRecord");
  checkCuda(cudaEventSynchronize(anchor_), "cudaEventSynchronize");
  const Clock::time_point after = Clock::now();
  anchorMicros_ = recorder_.microsSinceOrigin(before + (after - before) / 2);
}

void CudaTrace::begin(cudaStream_t stream) {
  open_ = take();
  checkCuda(cudaEventRecord(open_, stream), "cudaEventRecord");
}

void CudaTrace::end(cudaStream_t stream, int track, OpKind kind, const char* category, std::string loc, int64_t bytes,
                    double flops) {
  cudaEvent_t finish = take();
  checkCuda(cudaEventRecord(finish, stream), "cudaEventRecord");
  const auto index = static_cast<size_t>(track + 1);
  if (tracks_.size() <= index) tracks_.resize(index + 1);
  tracks_[index].push_back(Pending{open_, finish, kind, category, std::move(loc), bytes, flops});
  open_ = nullptr;
  flush(false);
}

void CudaTrace::write(int track, const Pending& slice) {
  float startMillis = 0, endMillis = 0;
  checkCuda(cudaEventElapsedTime(&startMillis, anchor_, slice.start), "cudaEventElapsedTime");
  checkCuda(cudaEventElapsedTime(&endMillis, anchor_, slice.end), "cudaEventElapsedTime");
  recorder_.add(TraceSlice{track, signatureOf(slice.kind).name, slice.category, slice.loc,
                           anchorMicros_ + startMillis * 1000.0, (endMillis - startMillis) * 1000.0, slice.bytes,
                           slice.flops});
}

void CudaTrace::flush(bool all) {
  for (size_t index = 0; index < tracks_.size(); ++index) {
    std::deque<Pending>& track = tracks_[index];
    while (!track.empty()) {
      const Pending& slice = track.front();
      if (!all) {
        const cudaError_t status = cudaEventQuery(slice.end);
        if (status == cudaErrorNotReady) break;
        checkCuda(status, "cudaEventQuery");
      }
      write(static_cast<int>(index) - 1, slice);
      free_.insert(free_.end(), {slice.start, slice.end});
      track.pop_front();
    }
  }
}

}  // namespace hostir::cuda
