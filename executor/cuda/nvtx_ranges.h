// NVTX ranges in a "hostir" domain around the host's issue of each
// statement, named after it ("c = allreduce 9:5"), so that Nsight Systems
// shows the program's own names over the kernels and copies each one
// launched. A range lasts from the statement's start to the next one's (or
// to the host's wait for the streams). The names are registered once per
// statement; without a tool attached, NVTX calls cost next to nothing.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "runtime/backend.h"

namespace hostir::cuda {

class NvtxRanges {
 public:
  NvtxRanges();
  ~NvtxRanges();
  NvtxRanges(const NvtxRanges&) = delete;
  NvtxRanges& operator=(const NvtxRanges&) = delete;

  // Ends the open range, if any, and opens the statement's.
  void enter(const OperationInfo& info);
  // Ends the open range, if any.
  void leave();

 private:
  void* domain_ = nullptr;                     // nvtxDomainHandle_t
  std::unordered_map<uint64_t, void*> names_;  // by kind and position: nvtxStringHandle_t
  bool open_ = false;
};

}  // namespace hostir::cuda
