#include "model/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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
  if (ranks <= 1) return 0;  // a team of one moves nothing
  double n = static_cast<double>(ranks);
  switch (kind) {
    case OpKind::Allreduce: return 2 * (n - 1) / n;
    case OpKind::Allgather:
    case OpKind::ReduceScatter: return (n - 1) / n;
    case OpKind::Broadcast:
    case OpKind::SendRecv: return 1;
    default: return 0;
  }
}

Result<double, std::string> communicationSeconds(const MachineProfile& profile, OpKind kind, int64_t bytes,
                                                 int64_t ranks) {
  if (ranks <= 1) return 0.0;
  double best = std::numeric_limits<double>::infinity();
  for (CommAlgorithm algorithm : {CommAlgorithm::Ring, CommAlgorithm::Tree, CommAlgorithm::Flat}) {
    const CommunicationCost* entry = entryFor(profile, kind, algorithm, ranks);
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
  if (best == std::numeric_limits<double>::infinity())
    return fmt::format("the profile '{}' has no {} costs", profile.name, communicationName(kind));
  return best;
}

}  // namespace hostir
