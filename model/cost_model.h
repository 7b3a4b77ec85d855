// What one operation costs alone on one rank of a profiled machine
// (machine_profile.h): the simulator's price list. Times are in seconds at
// the operation's full units; contention with other work is the
// simulator's (timeline_simulator.h).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/ops.h"
#include "model/machine_profile.h"

namespace hostir {

// Every time below is interpolated between the times the profile measured
// at its points (point_times.h), never between rates, and past a curve's or
// grid's ends at the nearest point's rate: with the points' times
// non-decreasing, as the reader leaves them, a larger operation of a kind
// is never priced faster than a smaller one on the same profile and team.

// A GEMM out[m, n] = a[m, k] · b[k, n]: the grid's time for the dtype,
// trilinear in (m, n, k) between its points (at the nearest point's rate
// past the grid's edges), never faster than the dtype's peak nor than its
// bytes at the memory bandwidth (the roofline). Zero for an empty GEMM. An
// error when the profile has no rate for the dtype: "the profile 'x' has
// no bf16 GEMM rates".
Result<double, std::string> gemmSeconds(const MachineProfile& profile, DType dtype, int64_t m, int64_t n, int64_t k);

// An elementwise operation or copy that touches `bytes` (read plus
// written), on the memory curve: linear in bytes between the times of its
// points, at the first or last point's bandwidth past its ends.
double memorySeconds(const MachineProfile& profile, int64_t bytes);

// A copy that touches `bytes` in runs of `runBytes` contiguous bytes (0 or
// at least half the bytes: contiguous): memorySeconds times the profile's
// strided slowdown at that run length (interpolated in log2, clamped at the
// ends, never below 1).
double copySeconds(const MachineProfile& profile, int64_t bytes, int64_t runBytes);

// Elementwise kernels (add, mul, silu, ...) and row reductions (rms_norm,
// softmax) that touch `bytes`: at the profile's measured curve for them
// (kernels.elementwise, kernels.row_reduction), or, where it has none, at
// the copy bandwidth (memorySeconds), which is the assumption
// PricingAssumption names.
double elementwiseSeconds(const MachineProfile& profile, int64_t bytes);
double rowReductionSeconds(const MachineProfile& profile, int64_t bytes);

// What the simulator assumed to price work the profile has no figure for.
// `hostir simulate` states each one a prediction rests on.
struct PricingAssumption {
  enum class Kind : uint8_t {
    ElementwiseAtCopyBandwidth,   // no kernels.elementwise curve
    RowReductionAtCopyBandwidth,  // no kernels.row_reduction curve
    AttentionAtGemmRate,          // no kernels.attention rates for the dtype
    CommunicationAsAnother,       // no entries for a collective: the ones its table row names price it
  };
  Kind kind = Kind::ElementwiseAtCopyBandwidth;
  DType dtype = DType::F32;                  // AttentionAtGemmRate: the dtype it lacks
  OpKind communication = OpKind::Allreduce;  // CommunicationAsAnother: the collective without entries
  auto operator<=>(const PricingAssumption&) const = default;
};
// "attention (bf16) at the bf16 GEMM rate: the profile 'h100-nvlink' measured no bf16 attention rate"
std::string describeAssumption(const PricingAssumption& assumption, std::string_view profileName);

// Attention of `flops` (costOf's count, 4 · pairs · H·D) touching `bytes`,
// computing `pairs` (query, key) pairs (Tq · Tk, about half with a causal
// mask) over tk key rows at head dim d: H heads at the grid's time for the
// dtype, bilinear in (t², d) between its points at t = sqrt(pairs), the
// length of a square unmasked block of as many pairs (at the nearest
// point's rate past the grid's edges), never faster than its bytes at the
// memory bandwidth. A profile without attention rates for the dtype prices
// it as the GEMM QKᵀ of as many pairs, (m, n, k) = (pairs / tk, tk, d),
// twice (PV), and sets `assumed`. An error when it has neither: "the
// profile 'x' has no bf16 attention or GEMM rates".
Result<double, std::string> attentionSeconds(const MachineProfile& profile, DType dtype, double pairs, int64_t tk,
                                             int64_t d, double flops, int64_t bytes,
                                             std::optional<PricingAssumption>* assumed = nullptr);

// The contention class of a computation priced by `rule`: Gemm for GEMMs
// (batched matmul included) and attention, compute-bound kernels that fill
// the SMs; kernels that only move elements are Memory, every other kernel
// (merge_attention included: it combines partial results) Elementwise.
WorkClass workClassOf(CostRule rule);

// One computation (a KernelCall's kind, the dtype of its first operand,
// its operands' extents and scalars, as costOf takes them) priced alone:
// by its cost rule, a GEMM at the GEMM rates, attention at the attention
// rate, elementwise and row kernels at their bandwidth curves, kernels
// that only move elements (gather_rows, scatter_add_rows, cast) at the
// copy bandwidth. Errors: what the profile cannot price.
struct ComputeCost {
  double seconds = 0;
  WorkClass workClass = WorkClass::Elementwise;
  OpCost counted;                            // costOf's flops and bytes
  std::optional<PricingAssumption> assumed;  // set when a figure was missing
};
Result<ComputeCost, std::string> computeCost(const MachineProfile& profile, OpKind kind, DType dtype,
                                             std::span<const TensorExtent> tensors, std::span<const double> scalars);

// nccl-tests' factor from algorithm bandwidth to bus bandwidth, from the
// collectives table (ir/collectives.h): allreduce 2(n-1)/n, allgather,
// reduce-scatter and all-to-all (n-1)/n, broadcast and sendrecv 1; 0 for a
// team of one and for an operation that is not a communication.
double busFactor(OpKind kind, int64_t ranks);

// A communication of `bytes` (nccl-tests' size: the allreduce's buffer,
// the allgather's whole output, the reduce-scatter's whole input, the
// broadcast's buffer, the larger of sendrecv's two) on a team of `ranks`:
// latency + bytes * busFactor / busbw. The profile's entry for the kind at
// the team size, or else the one at the largest smaller size (else the
// smallest), its latency scaled by its algorithm's steps; of several
// algorithms, the fastest for these bytes. An entry with measured sizes at
// exactly this team size is priced from them instead (linear in bytes
// between them; beyond the last size at the last segment's rate). A profile with no
// entry for all_to_all prices it with its allgather entries (the kind its
// row of the collectives table names), at all_to_all's own bus factor. An
// error when the profile has no entry for the kind (nor for the one that
// prices it): "the profile 'x' has no allgather costs". `assumed` is set when
// another kind's entries priced it.
//
// `placement`: where the team's ranks sit, when the profile knows its nodes
// (ranksPerNode): within one node it is priced on the entries of at most
// ranksPerNode ranks (NVLink), across nodes on the larger ones (the
// network), their bandwidth capped at nicBusGbps times the group's ranks on
// a node, which share the node's NICs with the node's other groups
// (docs/machine-profiles.md, "Groups across nodes").
struct GroupPlacement {
  int64_t nodes = 1;    // the nodes the team spans
  int64_t perNode = 1;  // the most of its ranks on one node
};
Result<double, std::string> communicationSeconds(const MachineProfile& profile, OpKind kind, int64_t bytes,
                                                 int64_t ranks, std::optional<PricingAssumption>* assumed = nullptr,
                                                 const GroupPlacement* placement = nullptr);

}  // namespace hostir
