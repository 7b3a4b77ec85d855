#include "model/point_times.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

namespace hostir {

double curvePointSeconds(const MemoryCurve& curve, size_t i) {
  return static_cast<double>(curve.bytes[i]) / (curve.gbps[i] * 1e9);
}

double gemmPointSeconds(const GemmGrid& grid, size_t im, size_t in, size_t ik) {
  const double flops =
      2 * static_cast<double>(grid.m[im]) * static_cast<double>(grid.n[in]) * static_cast<double>(grid.k[ik]);
  return flops / (grid.tflops[(im * grid.n.size() + in) * grid.k.size() + ik] * 1e12);
}

double attentionPointSeconds(const AttentionGrid& grid, size_t it, size_t id) {
  const double t = static_cast<double>(grid.t[it]);
  const double flops = 4 * t * t * static_cast<double>(grid.d[id]);
  return flops / (grid.tflops[it * grid.d.size() + id] * 1e12);
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Raises `rate` until seconds() (which reads it) is at most `target`:
// scaled, then by its last ulps, so that the cost model, which computes the
// time the same way, never sees it above the target.
template <typename Seconds>
void speedUpTo(double& rate, double target, const Seconds& seconds) {
  const double now = seconds();
  if (!(now > target) || !(target > 0)) return;
  rate *= now / target;
  while (seconds() > target) rate = std::nextafter(rate, kInfinity);
}

// A grid of `dims` points stored row-major (the last axis fastest), from
// its largest point down: each point's time becomes at most that of its
// next point on every axis, whose own times are final by then, so that
// time never falls along any axis.
template <typename SecondsAt>
void lowerToLargerPoints(std::vector<double>& rates, std::span<const size_t> dims, const SecondsAt& secondsAt) {
  size_t points = 1;
  for (size_t d : dims) points *= d;
  if (dims.empty() || points == 0 || rates.size() != points) return;  // not a grid the reader would accept
  std::vector<size_t> strides(dims.size(), 1);
  for (size_t a = dims.size() - 1; a > 0; --a) strides[a - 1] = strides[a] * dims[a];
  for (size_t p = points; p-- > 0;) {
    double target = kInfinity;
    for (size_t a = 0; a < dims.size(); ++a)
      if ((p / strides[a]) % dims[a] + 1 < dims[a]) target = std::min(target, secondsAt(p + strides[a]));
    if (target < kInfinity) speedUpTo(rates[p], target, [&] { return secondsAt(p); });
  }
}

void lowerCurve(MemoryCurve& curve) {
  const size_t dims[] = {curve.bytes.size()};
  lowerToLargerPoints(curve.gbps, dims, [&](size_t i) { return curvePointSeconds(curve, i); });
}

void lowerGemm(GemmGrid& grid) {
  const size_t dims[] = {grid.m.size(), grid.n.size(), grid.k.size()};
  lowerToLargerPoints(grid.tflops, dims, [&](size_t p) {
    return gemmPointSeconds(grid, p / (dims[1] * dims[2]), p / dims[2] % dims[1], p % dims[2]);
  });
}

void lowerAttention(AttentionGrid& grid) {
  const size_t dims[] = {grid.t.size(), grid.d.size()};
  lowerToLargerPoints(grid.tflops, dims,
                      [&](size_t p) { return attentionPointSeconds(grid, p / dims[1], p % dims[1]); });
}

void lowerMeasured(CommunicationCost& cost) {
  std::vector<double>& micros = cost.measuredMicros;
  if (micros.size() != cost.measuredBytes.size()) return;
  for (size_t i = micros.size(); i-- > 1;) micros[i - 1] = std::min(micros[i - 1], micros[i]);
}

}  // namespace

void makeTimesNonDecreasing(MachineProfile& profile) {
  for (auto& [dtype, grid] : profile.gemm) lowerGemm(grid);
  lowerCurve(profile.memory);
  lowerCurve(profile.kernels.elementwise);
  lowerCurve(profile.kernels.rowReduction);
  for (auto& [dtype, grid] : profile.kernels.attention) lowerAttention(grid);
  for (CommunicationCost& cost : profile.communication) lowerMeasured(cost);
}

}  // namespace hostir
