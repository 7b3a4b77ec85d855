#include "ir/collectives.h"

#include <array>

namespace hostir {
namespace {

using K = CollectiveKind;
using S = CollectiveShape;

// nccl-tests' bus factors (doc/PERFORMANCE.md there).
constexpr double twiceRing(double n) { return 2 * (n - 1) / n; }  // reduce-scatter then allgather
constexpr double ring(double n) { return (n - 1) / n; }           // each rank receives n - 1 of n parts
constexpr double one(double) { return 1; }                        // the whole buffer crosses one link

constexpr std::array<CollectiveInfo, 6> kCollectives = {{
    {K::Allreduce, OpKind::Allreduce, "allreduce", S::Same, twiceRing, true, K::Allreduce},
    {K::Allgather, OpKind::Allgather, "allgather", S::Gathered, ring, false, K::Allgather},
    {K::ReduceScatter, OpKind::ReduceScatter, "reduce_scatter", S::Scattered, ring, true, K::ReduceScatter},
    // Each rank sends n - 1 of its n parts, as allgather receives them:
    // a profile without all_to_all entries prices it at allgather's.
    {K::AllToAll, OpKind::AllToAll, "all_to_all", S::Exchanged, ring, false, K::Allgather},
    {K::Broadcast, OpKind::Broadcast, "broadcast", S::InPlace, one, false, K::Broadcast},
    {K::SendRecv, OpKind::SendRecv, "sendrecv", S::PerPeer, one, false, K::SendRecv},
}};

// The rows are in CollectiveKind order, and a row that prices another kind
// names one that has its own prices.
constexpr bool wellFormed() {
  for (size_t i = 0; i < kCollectives.size(); ++i) {
    const CollectiveInfo& row = kCollectives[i];
    if (static_cast<size_t>(row.kind) != i || row.name.empty() || row.busFactor == nullptr) return false;
    const CollectiveInfo& pricing = kCollectives[static_cast<size_t>(row.pricedAs)];
    if (pricing.pricedAs != pricing.kind) return false;
  }
  return true;
}
static_assert(wellFormed());

}  // namespace

std::span<const CollectiveInfo> allCollectives() { return kCollectives; }

const CollectiveInfo& collectiveInfo(CollectiveKind kind) { return kCollectives[static_cast<size_t>(kind)]; }

std::string_view collectiveName(CollectiveKind kind) { return collectiveInfo(kind).name; }

std::optional<CollectiveKind> collectiveOf(OpKind op) {
  for (const CollectiveInfo& row : kCollectives)
    if (row.op == op) return row.kind;
  return std::nullopt;
}

std::optional<CollectiveKind> collectiveByName(std::string_view name) {
  for (const CollectiveInfo& row : kCollectives)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

std::optional<int64_t> outputExtent(CollectiveShape shape, int64_t extent, int64_t world) {
  switch (shape) {
    case CollectiveShape::Same:
    case CollectiveShape::InPlace:
    case CollectiveShape::PerPeer: return extent;
    case CollectiveShape::Gathered: {
      int64_t gathered = 0;
      if (__builtin_mul_overflow(extent, world, &gathered)) return std::nullopt;
      return gathered;
    }
    case CollectiveShape::Scattered:
    case CollectiveShape::Exchanged:
      if (world <= 0 || extent % world != 0) return std::nullopt;
      return shape == CollectiveShape::Scattered ? extent / world : extent;
  }
  return std::nullopt;
}

double busFactor(CollectiveKind kind, int64_t ranks) {
  if (ranks <= 1) return 0;  // a team of one moves nothing
  return collectiveInfo(kind).busFactor(static_cast<double>(ranks));
}

bool takesOperand(CollectiveKind kind, std::string_view name) {
  return operandIndex(signatureOf(collectiveInfo(kind).op), name).has_value();
}

bool acceptsDType(CollectiveKind kind, DType dtype) { return isFloating(dtype) || !collectiveInfo(kind).reduces; }

}  // namespace hostir
