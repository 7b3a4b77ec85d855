#include "model/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ir/collectives.h"

namespace hostir {
namespace {

// Where `value` falls on an ascending axis, in log2 space: the index of the
// segment's lower point and the fraction of the way to the next point.
// Values outside the axis clamp to its ends; an axis of one point is constant.
struct AxisPosition {
  size_t lower = 0;
  double fraction = 0;
};

template <typename T>
AxisPosition positionOn(const std::vector<T>& axis, double value) {
  if (axis.size() < 2 || value <= static_cast<double>(axis.front())) return {0, 0};
  if (value >= static_cast<double>(axis.back())) return {axis.size() - 2, 1};
  size_t upper = std::upper_bound(axis.begin(), axis.end(), value,
                                  [](double v, T point) { return v < static_cast<double>(point); }) -
                 axis.begin();
  size_t lower = upper - 1;
  double low = std::log2(static_cast<double>(axis[lower]));
  double high = std::log2(static_cast<double>(axis[upper]));
  return {lower, (std::log2(value) - low) / (high - low)};
}

// The grid's rate at (m, n, k), trilinear in the rate over log2 of the sizes.
double interpolatedTflops(const GemmGrid& grid, double m, double n, double k) {
  AxisPosition pm = positionOn(grid.m, m), pn = positionOn(grid.n, n), pk = positionOn(grid.k, k);
  double rate = 0;
  for (int cm = 0; cm < 2; ++cm)
    for (int cn = 0; cn < 2; ++cn)
      for (int ck = 0; ck < 2; ++ck) {
        double weight = (cm ? pm.fraction : 1 - pm.fraction) * (cn ? pn.fraction : 1 - pn.fraction) *
                        (ck ? pk.fraction : 1 - pk.fraction);
        if (weight == 0) continue;  // also keeps a one-point axis's missing neighbour unread
        size_t im = pm.lower + cm, in = pn.lower + cn, ik = pk.lower + ck;
        rate += weight * grid.tflops[(im * grid.n.size() + in) * grid.k.size() + ik];
      }
  return rate;
}

// The curve's bandwidth for `bytes`, linear in the bandwidth over log2(bytes);
// infinite (no bound) for a profile built without a curve.
double bandwidthGbps(const MemoryCurve& curve, double bytes) {
  if (curve.bytes.empty() || curve.gbps.size() != curve.bytes.size()) return std::numeric_limits<double>::infinity();
  AxisPosition at = positionOn(curve.bytes, bytes);
  double gbps = curve.gbps[at.lower];
  if (at.fraction > 0) gbps += at.fraction * (curve.gbps[at.lower + 1] - gbps);
  return gbps;
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
const CommunicationCost* entryFor(const MachineProfile& profile, OpKind kind, CommAlgorithm algorithm, int64_t ranks) {
  const CommunicationCost* below = nullptr;
  const CommunicationCost* smallest = nullptr;
  for (const CommunicationCost& cost : profile.communication) {
    if (cost.kind != kind || cost.algorithm != algorithm) continue;
    if (cost.ranks == ranks) return &cost;
    if (cost.ranks < ranks && (!below || cost.ranks > below->ranks)) below = &cost;
    if (!smallest || cost.ranks < smallest->ranks) smallest = &cost;
  }
  return below ? below : smallest;
}

// Seconds from an entry's measured sizes: linear in bytes between two
// points, the first point's time below it, and beyond the last point the
// last segment's rate per byte.
double measuredSeconds(const CommunicationCost& cost, int64_t bytes) {
  const std::vector<int64_t>& at = cost.measuredBytes;
  const std::vector<double>& us = cost.measuredMicros;
  if (bytes <= at.front() || at.size() == 1) {
    if (at.size() == 1 && bytes > at.front()) return us.front() * 1e-6 * static_cast<double>(bytes) / at.front();
    return us.front() * 1e-6;
  }
  size_t upper = static_cast<size_t>(std::upper_bound(at.begin(), at.end(), bytes) - at.begin());
  if (upper == at.size()) upper = at.size() - 1;  // beyond the last point: extend the last segment
  const size_t lower = upper - 1;
  const double slope = (us[upper] - us[lower]) / static_cast<double>(at[upper] - at[lower]);
  return std::max(0.0, us[lower] + slope * static_cast<double>(bytes - at[lower])) * 1e-6;
}

}  // namespace

Result<double, std::string> gemmSeconds(const MachineProfile& profile, DType dtype, int64_t m, int64_t n, int64_t k) {
  auto grid = profile.gemm.find(dtype);
  if (grid == profile.gemm.end())
    return fmt::format("the profile '{}' has no {} GEMM rates", profile.name, dtypeName(dtype));
  if (m <= 0 || n <= 0 || k <= 0) return 0.0;
  double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  double tflops = interpolatedTflops(grid->second, dm, dn, dk);
  if (auto peak = profile.peakTflops.find(dtype); peak != profile.peakTflops.end())
    tflops = std::min(tflops, peak->second);
  double computeSeconds = 2 * dm * dn * dk / (tflops * 1e12);
  // Each operand read once and the output written once: the least traffic a GEMM can have.
  double bytes = (dm * dk + dk * dn + dm * dn) * static_cast<double>(dtypeSize(dtype));
  double memory = bytes / (bandwidthGbps(profile.memory, bytes) * 1e9);
  return std::max(computeSeconds, memory);
}

double memorySeconds(const MachineProfile& profile, int64_t bytes) {
  if (bytes <= 0) return 0;
  return static_cast<double>(bytes) / (bandwidthGbps(profile.memory, static_cast<double>(bytes)) * 1e9);
}

double copySeconds(const MachineProfile& profile, int64_t bytes, int64_t runBytes) {
  const double contiguous = memorySeconds(profile, bytes);
  const MemoryCurve& memory = profile.memory;
  if (runBytes <= 0 || 2 * runBytes >= bytes || memory.stridedRunBytes.empty()) return contiguous;
  AxisPosition at = positionOn(memory.stridedRunBytes, static_cast<double>(runBytes));
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
                                                 int64_t ranks, std::optional<PricingAssumption>* assumed) {
  if (assumed) assumed->reset();
  if (ranks <= 1) return 0.0;
  const OpKind priced = pricingKind(profile, kind);
  if (assumed && priced != kind) {
    PricingAssumption another{PricingAssumption::Kind::CommunicationAsAnother};
    another.communication = kind;
    *assumed = another;
  }
  double best = std::numeric_limits<double>::infinity();
  for (CommAlgorithm algorithm : {CommAlgorithm::Ring, CommAlgorithm::Tree, CommAlgorithm::Flat}) {
    const CommunicationCost* entry = entryFor(profile, priced, algorithm, ranks);
    if (!entry) continue;
    if (entry->ranks == ranks && !entry->measuredBytes.empty()) {
      best = std::min(best, measuredSeconds(*entry, bytes));
      continue;
    }
    double latencyScale =
        algorithmSteps(algorithm, kind, ranks) / algorithmSteps(algorithm, kind, std::max<int64_t>(entry->ranks, 2));
    double seconds = entry->latencyMicros * latencyScale * 1e-6 +
                     static_cast<double>(std::max<int64_t>(bytes, 0)) * busFactor(kind, ranks) / (entry->busGbps * 1e9);
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

// The grid's rate at (t, d), bilinear in the rate over log2 of the sizes.
double interpolatedTflops(const AttentionGrid& grid, double t, double d) {
  AxisPosition pt = positionOn(grid.t, t), pd = positionOn(grid.d, d);
  double rate = 0;
  for (int ct = 0; ct < 2; ++ct)
    for (int cd = 0; cd < 2; ++cd) {
      double weight = (ct ? pt.fraction : 1 - pt.fraction) * (cd ? pd.fraction : 1 - pd.fraction);
      if (weight == 0) continue;
      rate += weight * grid.tflops[(pt.lower + ct) * grid.d.size() + pd.lower + cd];
    }
  return rate;
}

// A measured curve's time for `bytes`, or the copy bandwidth's without one.
double curveSeconds(const MachineProfile& profile, const MemoryCurve& curve, int64_t bytes) {
  if (curve.bytes.empty()) return memorySeconds(profile, bytes);
  if (bytes <= 0) return 0;
  return static_cast<double>(bytes) / (bandwidthGbps(curve, static_cast<double>(bytes)) * 1e9);
}

// attention's (tq, tk, d) from q [Tq, H·D] and k [Tk, G·D] and `heads`.
struct AttentionShape {
  int64_t tq = 0, tk = 0, d = 0;
};
AttentionShape attentionShapeOf(std::span<const TensorExtent> tensors, std::span<const double> scalars) {
  using O = operands::Attention;
  AttentionShape shape;
  if (tensors.size() <= O::k || tensors[O::q].shape.size() != 2 || tensors[O::k].shape.empty()) return shape;
  const int64_t heads = O::heads < scalars.size() ? static_cast<int64_t>(scalars[O::heads]) : 0;
  shape.tq = tensors[O::q].shape[0];
  shape.tk = tensors[O::k].shape[0];
  shape.d = heads > 0 ? tensors[O::q].shape[1] / heads : tensors[O::q].shape[1];
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
          "attention ({0}) at the {0} GEMM rate of (Tq, Tk, head dim), in the elementwise class: the profile '{1}' "
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

Result<double, std::string> attentionSeconds(const MachineProfile& profile, DType dtype, int64_t tq, int64_t tk,
                                             int64_t d, double flops, int64_t bytes,
                                             std::optional<PricingAssumption>* assumed) {
  if (assumed) assumed->reset();
  if (tq <= 0 || tk <= 0 || d <= 0) return memorySeconds(profile, bytes);
  const double dq = static_cast<double>(tq), dk = static_cast<double>(tk), dd = static_cast<double>(d);
  double tflops = 0;
  if (auto grid = profile.kernels.attention.find(dtype); grid != profile.kernels.attention.end()) {
    tflops = interpolatedTflops(grid->second, std::sqrt(dq * dk), dd);
  } else if (auto gemm = profile.gemm.find(dtype); gemm != profile.gemm.end()) {
    tflops = interpolatedTflops(gemm->second, dq, dk, dd);
    if (auto peak = profile.peakTflops.find(dtype); peak != profile.peakTflops.end())
      tflops = std::min(tflops, peak->second);
    if (assumed) *assumed = PricingAssumption{PricingAssumption::Kind::AttentionAtGemmRate, dtype};
  } else {
    return fmt::format("the profile '{}' has no {} attention or GEMM rates", profile.name, dtypeName(dtype));
  }
  return std::max(flops / (tflops * 1e12), memorySeconds(profile, bytes));
}

WorkClass workClassOf(CostRule rule) {
  switch (rule) {
    case CostRule::Linear:
    case CostRule::Matmul: return WorkClass::Gemm;
    case CostRule::Gather:
    case CostRule::Copy:
    case CostRule::Fill: return WorkClass::Memory;
    case CostRule::Collective: return WorkClass::Communication;
    case CostRule::None:
    case CostRule::Elementwise:
    case CostRule::RowReduction:
    case CostRule::Attention: return WorkClass::Elementwise;
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
      const AttentionShape shape = attentionShapeOf(tensors, scalars);
      Result<double, std::string> seconds =
          attentionSeconds(profile, dtype, shape.tq, shape.tk, shape.d, cost.counted.flops, bytes, &cost.assumed);
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
