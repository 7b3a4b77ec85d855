// The collective kinds of the language, one table: each kind's name (as the
// op table and machine profiles spell it), its shape rule, its bus factor
// and whether it reduces. The verifier's communication rules, the
// collective plan (pack and unpack), the communicators' count checks, the
// cross-rank signature and the cost model read it, so adding a collective
// (docs/architecture.md, "Adding a collective") is its row here, its op
// table row, its cases in the communicators' switches and its copy-engine
// schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

// In OpKind order (ops.h): a collective's statement is the op of its row.
enum class CollectiveKind : uint8_t { Allreduce, Allgather, ReduceScatter, AllToAll, Broadcast, SendRecv };

// How a collective's output relates to its input along `axis` on a team of
// `world` ranks. Buffers that a communicator takes are laid out as `world`
// blocks along that axis (the collective plan packs other views).
enum class CollectiveShape : uint8_t {
  Same,       // allreduce: the output is shaped like the input (in place without `out`)
  Gathered,   // allgather: the output's extent along axis is world times the input's
  Scattered,  // reduce_scatter: the output's extent is the input's / world, which world must divide
  Exchanged,  // all_to_all: the output is shaped like the input, whose extent world must divide
  InPlace,    // broadcast: one tensor, read on the root and written on every rank
  PerPeer,    // sendrecv: sent and received tensors sized apart, paired with the peers' across ranks
};

// Whether the shape rule splits the tensors into blocks along an axis.
constexpr bool splitsAlongAxis(CollectiveShape shape) {
  return shape == CollectiveShape::Gathered || shape == CollectiveShape::Scattered ||
         shape == CollectiveShape::Exchanged;
}

// The rule itself: the output's extent along the axis for an input extent
// on a team of `world` (the same for element counts of the contiguous
// buffers a communicator takes, whose blocks lie along that axis). Nullopt
// when the rule refuses the extent: Scattered and Exchanged need one that
// world divides, and Gathered's product must fit in 64 bits. PerPeer sizes
// its output apart: the input's extent, which nothing checks against.
std::optional<int64_t> outputExtent(CollectiveShape shape, int64_t extent, int64_t world);

struct CollectiveInfo {
  CollectiveKind kind;
  OpKind op;              // its statement's row in the op table
  std::string_view name;  // as the op table and machine profiles spell it
  CollectiveShape shape;
  // nccl-tests' factor from algorithm bandwidth to bus bandwidth on a team
  // of n ≥ 2 ranks (a team of one moves nothing: busFactor says 0).
  double (*busFactor)(double n);
  bool reduces;  // takes `op` and combines elements: i32 (indices) is refused
  // What prices it on a machine profile that has no entries of its own
  // (itself when it must have its own).
  CollectiveKind pricedAs;
};

// Every collective, in CollectiveKind order.
std::span<const CollectiveInfo> allCollectives();
const CollectiveInfo& collectiveInfo(CollectiveKind kind);
std::string_view collectiveName(CollectiveKind kind);

// The collective a statement of `op` issues; nullopt when `op` is not a communication.
std::optional<CollectiveKind> collectiveOf(OpKind op);
std::optional<CollectiveKind> collectiveByName(std::string_view name);

// The row's bus factor on a team of `ranks`; 0 for a team of one.
double busFactor(CollectiveKind kind, int64_t ranks);

// Whether a statement of this kind takes the operand `name` (axis, op, root,
// to, from), by its op table row: the fields of a signature it uses.
bool takesOperand(CollectiveKind kind, std::string_view name);

// Whether `kind` takes tensors of `dtype`: a reducing collective refuses
// i32 (indices only move), the others move every dtype.
bool acceptsDType(CollectiveKind kind, DType dtype);

}  // namespace hostir
