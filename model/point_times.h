// The time a profile's curves and grids measured at each of their points,
// and the rule that keeps those times from falling as the size grows. The
// cost model (cost_model.h) interpolates these times, so that with times
// non-decreasing at the points, no larger operation is priced faster than
// a smaller one of its kind.
#pragma once

#include <cstddef>

#include "model/machine_profile.h"

namespace hostir {

// Seconds of the operation measured at point i of a bandwidth curve:
// bytes[i] / (gbps[i] · 10^9).
double curvePointSeconds(const MemoryCurve& curve, size_t i);
// Seconds of the GEMM at grid point (im, in, ik): 2·m·n·k / (tflops · 10^12).
double gemmPointSeconds(const GemmGrid& grid, size_t im, size_t in, size_t ik);
// Seconds of one head of attention at grid point (it, id), not causal:
// 4·t²·d / (tflops · 10^12).
double attentionPointSeconds(const AttentionGrid& grid, size_t it, size_t id);

// Lowers every point's time to at most the time of each point larger than
// it (on any axis of a grid): the bandwidth curves, the GEMM and attention
// grids, and each communication entry's measured times. A larger operation
// cannot take less time than a smaller one of its kind, so a point measured
// slower than a larger one was slowed by noise, which only ever adds time:
// it takes the larger one's time. Rates are raised to match (never beyond
// the larger point's), times lowered; a profile whose times already grow
// comes back equal. parseMachineProfile and atSpreadEdge apply it.
void makeTimesNonDecreasing(MachineProfile& profile);

}  // namespace hostir
