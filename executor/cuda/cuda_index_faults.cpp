#include "executor/cuda/cuda_index_faults.h"

#include <stdexcept>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {

IndexFaults::IndexFaults(cudaStream_t stream) {
  void* record = nullptr;
  checkCuda(cudaMalloc(&record, sizeof(IndexFault)), "cudaMalloc");
  record_ = static_cast<IndexFault*>(record);
  const cudaError_t cleared = cudaMemsetAsync(record_, 0, sizeof(IndexFault), stream);
  const cudaError_t waited = cleared == cudaSuccess ? cudaStreamSynchronize(stream) : cleared;
  if (waited != cudaSuccess) {
    cudaFree(record_);
    checkCuda(waited, "clearing the index fault record");
  }
}

IndexFaults::~IndexFaults() { cudaFree(record_); }

IndexCheck IndexFaults::checkFor(OpKind kind, SourceLoc loc, const std::array<std::string_view, kMaxOperands>& names) {
  armed_ = true;
  // Statements are few and repeat in loops: the last one is the likely match.
  for (size_t i = sites_.size(); i-- > 0;)
    if (sites_[i].kind == kind && sites_[i].loc == loc) return IndexCheck{record_, static_cast<int32_t>(i + 1)};
  if (sites_.size() >= static_cast<size_t>(INT32_MAX)) throw std::logic_error("internal error: too many index sites");
  sites_.push_back(Site{kind, loc, indexedTensors(kind, names)});
  return IndexCheck{record_, static_cast<int32_t>(sites_.size())};
}

std::optional<IndexFaults::Fault> IndexFaults::take(cudaStream_t stream) {
  if (!armed_) return std::nullopt;
  armed_ = false;
  IndexFault fault;
  checkCuda(cudaMemcpyAsync(&fault, record_, sizeof(fault), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (fault.site <= 0 || static_cast<size_t>(fault.site) > sites_.size()) return std::nullopt;
  // Cleared before any later work on another stream can record again.
  checkCuda(cudaMemsetAsync(record_, 0, sizeof(IndexFault), stream), "cudaMemsetAsync");
  checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  const Site& site = sites_[static_cast<size_t>(fault.site - 1)];
  return Fault{site.loc, site.tensors, IndexOutOfRange{fault.index, fault.rows}};
}

}  // namespace hostir::cuda
