// The run-time check of gather_rows' and scatter_add_rows' indices on a
// device: their kernels record the first index out of range in a small
// record in device memory (cuda_gather.cuh) instead of trapping, which
// would end the context, and the backend reads it back when the host
// synchronizes. The record names the statement by a site number: each
// statement that launched such a kernel gets one, so the check costs no
// host synchronization per operation, and nothing at all for a run that
// indexes nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "executor/cuda/cuda_gather.cuh"
#include "ir/diagnostic.h"
#include "ir/ops.h"
#include "runtime/index_fault.h"

namespace hostir::cuda {

class IndexFaults {
 public:
  // Allocates the record on the current device and clears it in `stream`'s order.
  explicit IndexFaults(cudaStream_t stream);
  ~IndexFaults();
  IndexFaults(const IndexFaults&) = delete;
  IndexFaults& operator=(const IndexFaults&) = delete;

  // Where a kernel of the statement `kind` at `loc` records its fault;
  // `names` are the program's names of its operands (OperationInfo::names).
  IndexCheck checkFor(OpKind kind, SourceLoc loc, const std::array<std::string_view, kMaxOperands>& names);

  // A fault recorded since the last call, if any, then cleared. Call only
  // when the host has seen every stream that may record one idle; the read
  // goes through `stream`, on which the host then waits.
  struct Fault {
    SourceLoc loc;
    IndexedTensors tensors;
    IndexOutOfRange fault;
  };
  std::optional<Fault> take(cudaStream_t stream);
  // Whether a kernel may have recorded since the last take; arm(): one may
  // have (a replayed graph launches kernels that checkFor never saw).
  bool armed() const { return armed_; }
  void arm() { armed_ = true; }

 private:
  struct Site {
    OpKind kind;
    SourceLoc loc;
    IndexedTensors tensors;
  };
  IndexFault* record_ = nullptr;  // device memory
  std::vector<Site> sites_;       // site number i + 1 is sites_[i]
  bool armed_ = false;            // a kernel may have recorded since the last take
};

}  // namespace hostir::cuda
