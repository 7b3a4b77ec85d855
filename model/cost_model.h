// What one operation costs alone on one rank of a profiled machine
// (machine_profile.h): the simulator's price list. Times are in seconds at
// the operation's full units; contention with other work is the
// simulator's (timeline_simulator.h).
#pragma once

#include <cstdint>
#include <string>

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/ops.h"
#include "model/machine_profile.h"

namespace hostir {

// A GEMM out[m, n] = a[m, k] · b[k, n]: the grid's rate for the dtype,
// interpolated in log2(m), log2(n), log2(k) (clamped to the grid's edges),
// at most the dtype's peak, and never faster than its bytes at the memory
// bandwidth (the roofline). Zero for an empty GEMM. An error when the
// profile has no rate for the dtype: "the profile 'x' has no bf16 GEMM rates".
Result<double, std::string> gemmSeconds(const MachineProfile& profile, DType dtype, int64_t m, int64_t n, int64_t k);

// An elementwise operation or copy that touches `bytes` (read plus
// written), at the memory curve's bandwidth for that many bytes
// (interpolated in log2(bytes), clamped at the ends).
double memorySeconds(const MachineProfile& profile, int64_t bytes);

// A copy that touches `bytes` in runs of `runBytes` contiguous bytes (0 or
// at least half the bytes: contiguous): memorySeconds times the profile's
// strided slowdown at that run length (interpolated in log2, clamped at the
// ends, never below 1).
double copySeconds(const MachineProfile& profile, int64_t bytes, int64_t runBytes);

// nccl-tests' factor from algorithm bandwidth to bus bandwidth:
// allreduce 2(n-1)/n, allgather and reduce-scatter (n-1)/n, broadcast and
// sendrecv 1.
double busFactor(OpKind kind, int64_t ranks);

// A communication of `bytes` (nccl-tests' size: the allreduce's buffer,
// the allgather's whole output, the reduce-scatter's whole input, the
// broadcast's buffer, the larger of sendrecv's two) on a team of `ranks`:
// latency + bytes * busFactor / busbw. The profile's entry for the kind at
// the team size, or else the one at the largest smaller size (else the
// smallest), its latency scaled by its algorithm's steps; of several
// algorithms, the fastest for these bytes. An entry with measured sizes at
// exactly this team size is priced from them instead (interpolated in
// bytes; beyond the last size at the last segment's rate). An error when the profile has no
// entry for the kind: "the profile 'x' has no allgather costs".
Result<double, std::string> communicationSeconds(const MachineProfile& profile, OpKind kind, int64_t bytes,
                                                 int64_t ranks);

}  // namespace hostir
