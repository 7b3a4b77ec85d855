#include "model/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ir/collectives.h"
#include "model/point_times.h"

namespace hostir {
namespace {

// Where `value` falls on an ascending axis of sizes: the segment's lower
// point and the fraction of the way to the next point in log2 of the size.
// Past an end, the nearest point and `beyond`, how many times that point's
// work the value's is (the work grows as the size, or for attention's t as
// its square), so that work past the measured sizes runs at that point's
// rate. An axis of one point is that point's rate at every size.
struct AxisPosition {
  size_t lower = 0;
  double fraction = 0;
  double beyond = 1;
};

template <typename T>
AxisPosition positionOn(const std::vector<T>& axis, double value, int power = 1) {
  const double front = static_cast<double>(axis.front()), back = static_cast<double>(axis.back());
  if (value <= front) return {0, 0, std::pow(value / front, power)};
  if (value >= back)
    return {axis.size() - (axis.size() < 2 ? 1 : 2), axis.size() < 2 ? 0.0 : 1.0, std::pow(value / back, power)};
  const size_t upper = std::upper_bound(axis.begin(), axis.end(), value,
                                        [](double v, T point) { return v < static_cast<double>(point); }) -
                       axis.begin();
  const size_t lower = upper - 1;
  const double low = std::log2(static_cast<double>(axis[lower])), high = std::log2(static_cast<double>(axis[upper]));
  return {lower, (std::log2(value) - low) / (high - low), 1};
}

// The time `fraction` of the way (in log2 of the size) from a point's time
// `low` to the next one's `high`, on the power law through both: low ·
// (high / low)^fraction. The rate then changes by the same factor at each
// doubling of the size, as GEMM rates and bandwidths change by octaves; a
// constant rate is exact, and the time grows wherever high >= low. Kept
// within [low, high], so that rounding cannot take a segment past its upper
// point's time, where the next segment starts.
double between(double low, double high, double fraction) {
  const double ratio = high / low;
  if (!(ratio > 0) || !std::isfinite(ratio)) return low + fraction * (high - low);  // a profile built without times
  const double time = low * std::pow(ratio, fraction);
  return low <= high ? std::clamp(time, low, high) : time;
}

// Interpolates `at(offset)`, the time at the position's lower point plus
// `offset` (0 or 1), along one axis.
template <typename At>
double along(const AxisPosition& position, const At& at) {
  return position.fraction > 0 ? between(at(0), at(1), position.fraction) : at(0);
}

// The grid's time for the GEMM (m, n, k): between its points, along each
// axis in turn (`between`); past the grid's edges at the rate of the
// nearest point. It grows with each of m, n and k wherever the points'
// times do (makeTimesNonDecreasing).
double gridSeconds(const GemmGrid& grid, double m, double n, double k) {
  const AxisPosition pm = positionOn(grid.m, m), pn = positionOn(grid.n, n), pk = positionOn(grid.k, k);
  const double time = along(pm, [&](size_t cm) {
    return along(pn, [&](size_t cn) {
      return along(pk, [&](size_t ck) { return gemmPointSeconds(grid, pm.lower + cm, pn.lower + cn, pk.lower + ck); });
    });
  });
  return time * pm.beyond * pn.beyond * pk.beyond;
}

// The time of the GEMM's flops alone: the grid's, never faster than the peak.
double gemmComputeSeconds(const MachineProfile& profile, const GemmGrid& grid, DType dtype, double m, double n,
                          double k) {
  double seconds = gridSeconds(grid, m, n, k);
  if (auto peak = profile.peakTflops.find(dtype); peak != profile.peakTflops.end())
    seconds = std::max(seconds, 2 * m * n * k / (peak->second * 1e12));
  return seconds;
}

// The curve's time for `bytes`: between the times of its points
// (`between`), past its ends at the nearest point's bandwidth; 0 (no bound)
// for a profile built without a curve.
double curveTime(const MemoryCurve& curve, double bytes) {
  if (curve.bytes.empty() || curve.gbps.size() != curve.bytes.size() || bytes <= 0) return 0;
  const AxisPosition at = positionOn(curve.bytes, bytes);
  if (at.beyond != 1) return bytes / (curve.gbps[at.lower + (at.fraction > 0 ? 1 : 0)] * 1e9);  // past an end
  return along(at, [&](size_t c) { return curvePointSeconds(curve, at.lower + c); });
}

std::string_view communicationName(OpKind kind) { return signatureOf(kind).name; }

// The kind whose entries price `kind` on `profile`: its own, or where the
// profile has none of them, the one its row of the collectives table names
// (all_to_all: allgather's latency and bus bandwidth, an assumption
// docs/machine-profiles.md states).
OpKind pricingKind(const MachineProfile& profile, OpKind kind) {
  for (const CommunicationCost& cost : profile.communication)
    if (cost.kind == kind) return kind;
  std::optional<CollectiveKind> collective = collectiveOf(kind);
  return collective ? collectiveInfo(collectiveInfo(*collective).pricedAs).op : kind;
}

// The latency-bearing steps of an algorithm on a team of `ranks`.
double algorithmSteps(CommAlgorithm algorithm, OpKind kind, int64_t ranks) {
  if (ranks <= 1) return 0;
  if (kind == OpKind::SendRecv) return 1;  // one transfer to a peer, whatever the team
  bool allreduce = kind == OpKind::Allreduce;
  switch (algorithm) {
    case CommAlgorithm::Ring: return static_cast<double>(allreduce ? 2 * (ranks - 1) : ranks - 1);
    case CommAlgorithm::Tree: {
      double depth = std::ceil(std::log2(static_cast<double>(ranks)));
      return allreduce ? 2 * depth : depth;
    }
    case CommAlgorithm::Flat: return 1;
  }
  return 1;
}

// The entry that prices `algorithm` for a team of `ranks`: the one at that
// size, else the largest smaller one, else the smallest. Null if none.
// Entries of team sizes in [fewest, most] only (a node's, or the network's).
const CommunicationCost* entryFor(const MachineProfile& profile, OpKind kind, CommAlgorithm algorithm, int64_t ranks,
                                  int64_t fewest = 0, int64_t most = std::numeric_limits<int64_t>::max()) {
  const CommunicationCost* below = nullptr;
  const CommunicationCost* smallest = nullptr;
  for (const CommunicationCost& cost : profile.communication) {
    if (cost.kind != kind || cost.algorithm != algorithm || cost.ranks < fewest || cost.ranks > most) continue;
    if (cost.ranks == ranks) return &cost;
    if (cost.ranks < ranks && (!below || cost.ranks > below->ranks)) below = &cost;
    if (!smallest || cost.ranks < smallest->ranks) smallest = &cost;
  }
  return below ? below : smallest;
}

// Seconds from an entry's measured sizes: linear in bytes between two
// points, the first point's time below it, and beyond the last point the
// last segment's time per byte (never negative: the reader leaves the
// times non-decreasing).
double measuredSeconds(const CommunicationCost& cost, int64_t bytes) {
  const std::vector<int64_t>& at = cost.measuredBytes;
  const std::vector<double>& us = cost.measuredMicros;
  if (bytes <= at.front() || at.size() == 1) {
    if (at.size() == 1 && bytes > at.front()) return us.front() * 1e-6 * static_cast<double>(bytes) / at.front();
    return us.front() * 1e-6;
  }
  const size_t upper = static_cast<size_t>(std::upper_bound(at.begin(), at.end(), bytes) - at.begin());
  if (upper == at.size()) {  // beyond the last point: extend the last segment
    const size_t last = at.size() - 1;
    const double slope = std::max(0.0, (us[last] - us[last - 1]) / static_cast<double>(at[last] - at[last - 1]));
    return (us[last] + slope * static_cast<double>(bytes - at[last])) * 1e-6;
  }
  // Linear, exact for a latency plus bytes at a bandwidth; kept within the two points' times.
  const size_t lower = upper - 1;
  const double fraction = static_cast<double>(bytes - at[lower]) / static_cast<double>(at[upper] - at[lower]);
  const double micros = us[lower] + fraction * (us[upper] - us[lower]);
  return (us[lower] <= us[upper] ? std::clamp(micros, us[lower], us[upper]) : micros) * 1e-6;
}

}  // namespace

Result<double, std::string> gemmSeconds(const MachineProfile& profile, DType dtype, int64_t m, int64_t n, int64_t k) {
  auto grid = profile.gemm.find(dtype);
  if (grid == profile.gemm.end())
    return fmt::format("the profile '{}' has no {} GEMM rates", profile.name, dtypeName(dtype));
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double compute = gemmComputeSeconds(profile, grid->second, dtype, dm, dn, dk);
  // Each operand read once and the output written once: the least traffic a GEMM can have.
  const double bytes = (dm * dk + dk * dn + dm * dn) * static_cast<double>(dtypeSize(dtype));
  return std::max(compute, curveTime(profile.memory, bytes));
}

double memorySeconds(const MachineProfile& profile, int64_t bytes) {
  return curveTime(profile.memory, static_cast<double>(bytes));
}

double copySeconds(const MachineProfile& profile, int64_t bytes, int64_t runBytes) {
  const double contiguous = memorySeconds(profile, bytes);
  const MemoryCurve& memory = profile.memory;
  if (runBytes <= 0 || 2 * runBytes >= bytes || memory.stridedRunBytes.empty()) return contiguous;
  // The slowdown, a ratio of times rather than a time, is linear in log2 of the row's bytes, clamped at the ends.
  const AxisPosition at = positionOn(memory.stridedRunBytes, static_cast<double>(runBytes));
  double slowdown = memory.stridedSlowdown[at.lower];
  if (at.fraction > 0) slowdown += at.fraction * (memory.stridedSlowdown[at.lower + 1] - slowdown);
  return contiguous * std::max(slowdown, 1.0);
}

double busFactor(OpKind kind, int64_t ranks) {
  // The collectives table has every communication's factor; any other
  // operation moves nothing between ranks.
  std::optional<CollectiveKind> collective = collectiveOf(kind);
  return collective ? busFactor(*collective, ranks) : 0;
}

Result<double, std::string> communicationSeconds(const MachineProfile& profile, OpKind kind, int64_t bytes,
                                                 int64_t ranks, std::optional<PricingAssumption>* assumed,
                                                 const GroupPlacement* placement) {
  if (assumed) assumed->reset();
  if (ranks <= 1) return 0.0;
  const OpKind priced = pricingKind(profile, kind);
  if (assumed && priced != kind) {
    PricingAssumption another{PricingAssumption::Kind::CommunicationAsAnother};
    another.communication = kind;
    *assumed = another;
  }
  // Within a node: its entries (at most ranksPerNode ranks); across nodes:
  // the network's (more ranks), each member's NIC share capping the bandwidth.
  const bool placed = placement && profile.ranksPerNode > 0;
  const bool acrossNodes = placed && placement->nodes > 1;
  const int64_t fewest = acrossNodes ? profile.ranksPerNode + 1 : 0;
  const int64_t most = placed && !acrossNodes ? profile.ranksPerNode : std::numeric_limits<int64_t>::max();
  const double nicCap = acrossNodes && profile.nicBusGbps > 0
                            ? profile.nicBusGbps * static_cast<double>(placement->perNode)
                            : std::numeric_limits<double>::infinity();
  double best = std::numeric_limits<double>::infinity();
  for (CommAlgorithm algorithm : {CommAlgorithm::Ring, CommAlgorithm::Tree, CommAlgorithm::Flat}) {
    const CommunicationCost* entry = entryFor(profile, priced, algorithm, ranks, fewest, most);
    // A profile without entries on that side of the node prices it as before.
    if (!entry && placed) entry = entryFor(profile, priced, algorithm, ranks);
    if (!entry) continue;
    if (entry->ranks == ranks && !entry->measuredBytes.empty() && !acrossNodes) {
      best = std::min(best, measuredSeconds(*entry, bytes));
      continue;
    }
    double latencyScale =
        algorithmSteps(algorithm, kind, ranks) / algorithmSteps(algorithm, kind, std::max<int64_t>(entry->ranks, 2));
    const double busGbps = std::min(entry->busGbps, nicCap);
    double seconds = entry->latencyMicros * latencyScale * 1e-6 +
                     static_cast<double>(std::max<int64_t>(bytes, 0)) * busFactor(kind, ranks) / (busGbps * 1e9);
    best = std::min(best, seconds);
  }
  if (best == std::numeric_limits<double>::infinity()) {
    if (priced != kind)
      return fmt::format("the profile '{}' has no {} costs (nor {} costs, which price it where it has none)",
                         profile.name, communicationName(kind), communicationName(priced));
    return fmt::format("the profile '{}' has no {} costs", profile.name, communicationName(kind));
  }
  return best;
}

namespace {

// The grid's time for one head of attention over `pairs` (query, key)
// pairs at head dim d: between its points along t and d (`between`) at
// t = sqrt(pairs), a point at t computing t² pairs; past the grid's edges
// at the rate of the nearest point.
double gridSeconds(const AttentionGrid& grid, double pairs, double d) {
  const AxisPosition pt = positionOn(grid.t, std::sqrt(pairs), 2), pd = positionOn(grid.d, d);
  const double time = along(pt, [&](size_t ct) {
    return along(pd, [&](size_t cd) { return attentionPointSeconds(grid, pt.lower + ct, pd.lower + cd); });
  });
  return time * pt.beyond * pd.beyond;
}

// A measured curve's time for `bytes`, or the copy bandwidth's without one.
double curveSeconds(const MachineProfile& profile, const MemoryCurve& curve, int64_t bytes) {
  if (curve.bytes.empty()) return memorySeconds(profile, bytes);
  return curveTime(curve, static_cast<double>(bytes));
}

// attention's pairs, key rows and head dim from q [Tq, H·D], k [Tk, G·D],
// `heads` and costOf's flops (4 · pairs · H·D).
struct AttentionShape {
  double pairs = 0;
  int64_t tk = 0, d = 0;
};
AttentionShape attentionShapeOf(std::span<const TensorExtent> tensors, std::span<const double> scalars, double flops) {
  using O = operands::Attention;
  AttentionShape shape;
  if (tensors.size() <= O::k || tensors[O::q].shape.size() != 2 || tensors[O::k].shape.empty()) return shape;
  const int64_t heads = O::heads < scalars.size() ? static_cast<int64_t>(scalars[O::heads]) : 0;
  const int64_t width = tensors[O::q].shape[1];
  shape.pairs = width > 0 ? flops / (4 * static_cast<double>(width)) : 0;
  shape.tk = tensors[O::k].shape[0];
  shape.d = heads > 0 ? width / heads : width;
  return shape;
}

}  // namespace

double elementwiseSeconds(const MachineProfile& profile, int64_t bytes) {
  return curveSeconds(profile, profile.kernels.elementwise, bytes);
}

double rowReductionSeconds(const MachineProfile& profile, int64_t bytes) {
  return curveSeconds(profile, profile.kernels.rowReduction, bytes);
}

std::string describeAssumption(const PricingAssumption& assumption, std::string_view profileName) {
  switch (assumption.kind) {
    case PricingAssumption::Kind::ElementwiseAtCopyBandwidth:
      return fmt::format(
          "elementwise kernels (add, mul, silu, ...) at the copy bandwidth: the profile '{}' measured no "
          "elementwise bandwidth",
          profileName);
    case PricingAssumption::Kind::RowReductionAtCopyBandwidth:
      return fmt::format(
          "row reductions (rms_norm, softmax) at the copy bandwidth: the profile '{}' measured no row-reduction "
          "bandwidth",
          profileName);
    case PricingAssumption::Kind::AttentionAtGemmRate: {
      const std::string_view dtype = dtypeName(assumption.dtype);
      return fmt::format(
          "attention ({0}) at the {0} GEMM rate of (Tq, Tk, head dim): the profile '{1}' "
          "measured no {0} attention rate",
          dtype, profileName);
    }
    case PricingAssumption::Kind::CommunicationAsAnother: {
      const CollectiveInfo& row = collectiveInfo(*collectiveOf(assumption.communication));
      const std::string_view pricedAs = collectiveName(row.pricedAs);
      return fmt::format(
          "{0} at the latency and bus bandwidth of the {1} entries, at {0}'s own bus factor: the profile '{2}' has no "
          "{0} entries",
          row.name, pricedAs, profileName);
    }
  }
  return "?";
}

Result<double, std::string> attentionSeconds(const MachineProfile& profile, DType dtype, double pairs, int64_t tk,
                                             int64_t d, double flops, int64_t bytes,
                                             std::optional<PricingAssumption>* assumed) {
  if (assumed) assumed->reset();
  if (!(pairs > 0) || tk <= 0 || d <= 0) return memorySeconds(profile, bytes);
  const double dk = static_cast<double>(tk), dd = static_cast<double>(d);
  // The grids time one head's 4 · pairs · d flops; the call's flops are that many times as much work.
  const double heads = flops / (4 * pairs * dd);
  double seconds = 0;
  if (auto grid = profile.kernels.attention.find(dtype); grid != profile.kernels.attention.end()) {
    seconds = heads * gridSeconds(grid->second, pairs, dd);
  } else if (auto gemm = profile.gemm.find(dtype); gemm != profile.gemm.end()) {
    // QKᵀ as a GEMM of as many (query, key) pairs: (pairs / Tk) query rows by Tk keys, 2 · pairs · d flops.
    seconds = 2 * heads * gemmComputeSeconds(profile, gemm->second, dtype, pairs / dk, dk, dd);
    if (assumed) *assumed = PricingAssumption{PricingAssumption::Kind::AttentionAtGemmRate, dtype};
  } else {
    return fmt::format("the profile '{}' has no {} attention or GEMM rates", profile.name, dtypeName(dtype));
  }
  return std::max(seconds, memorySeconds(profile, bytes));
}

WorkClass workClassOf(CostRule rule) {
  switch (rule) {
    case CostRule::Linear:
    case CostRule::Matmul:
    case CostRule::Attention: return WorkClass::Gemm;
    case CostRule::Gather:
    case CostRule::Copy:
    case CostRule::Fill: return WorkClass::Memory;
    case CostRule::Collective: return WorkClass::Communication;
    case CostRule::None:
    case CostRule::Elementwise:
    case CostRule::RowReduction: return WorkClass::Elementwise;
  }
  return WorkClass::Elementwise;
}

Result<ComputeCost, std::string> computeCost(const MachineProfile& profile, OpKind kind, DType dtype,
                                             std::span<const TensorExtent> tensors, std::span<const double> scalars) {
  const CostRule rule = signatureOf(kind).cost;
  ComputeCost cost;
  cost.workClass = workClassOf(rule);
  cost.counted = costOf(kind, tensors, scalars);
  const int64_t bytes = cost.counted.bytes;
  using Assumed = PricingAssumption::Kind;
  switch (rule) {
    case CostRule::Linear:
    case CostRule::Matmul: {
      const GemmShape shape = gemmShapeOf(kind, tensors, scalars).value_or(GemmShape{});
      Result<double, std::string> seconds = gemmSeconds(profile, dtype, shape.m, shape.n, shape.k);
      if (!seconds) return seconds.error();
      // A batched matmul runs its GEMM once per batch entry (the leading dims of its result).
      double batch = 1;
      if (kind == OpKind::Matmul && shape.m * shape.n > 0 && operands::Matmul::out < tensors.size())
        batch = static_cast<double>(tensors[operands::Matmul::out].numel()) / static_cast<double>(shape.m * shape.n);
      cost.seconds = *seconds * std::max(batch, 1.0);
      break;
    }
    case CostRule::Elementwise:
      cost.seconds = elementwiseSeconds(profile, bytes);
      if (profile.kernels.elementwise.bytes.empty())
        cost.assumed = PricingAssumption{Assumed::ElementwiseAtCopyBandwidth};
      break;
    case CostRule::RowReduction:
      cost.seconds = rowReductionSeconds(profile, bytes);
      if (profile.kernels.rowReduction.bytes.empty())
        cost.assumed = PricingAssumption{Assumed::RowReductionAtCopyBandwidth};
      break;
    case CostRule::Attention: {
      const AttentionShape shape = attentionShapeOf(tensors, scalars, cost.counted.flops);
      Result<double, std::string> seconds =
          attentionSeconds(profile, dtype, shape.pairs, shape.tk, shape.d, cost.counted.flops, bytes, &cost.assumed);
      if (!seconds) return seconds.error();
      cost.seconds = *seconds;
      break;
    }
    case CostRule::Gather:
    case CostRule::Copy:
    case CostRule::Fill:
    case CostRule::None:
    case CostRule::Collective: cost.seconds = memorySeconds(profile, bytes); break;
  }
  return cost;
}

}  // namespace hostir
