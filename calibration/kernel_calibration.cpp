#include "calibration/kernel_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace hostir {
namespace {

// Every tensor is an input, filled outside the timing (calibration_runs.h).
constexpr std::string_view kMulProgram =
    "program elementwise(C = 1, R = 1) {\n"
    "  input a : f32[C]\n"
    "  input b : f32[C]\n"
    "  input c : f32[C]\n"
    "  for i in range(R) {\n"
    "    mul(a, b, out=c)\n"
    "  }\n"
    "}\n";

// Rows of W elements: a transformer's hidden size is thousands wide.
constexpr std::string_view kRmsNormProgram =
    "program row_reduction(H = 1, W = 1, R = 1) {\n"
    "  input x : f32[H, W]\n"
    "  input w : f32[W]\n"
    "  input y : f32[H, W]\n"
    "  for i in range(R) {\n"
    "    rms_norm(x, w, out=y)\n"
    "  }\n"
    "}\n";

constexpr int64_t kRowWidth = 1024;

int64_t ceilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b)); }

// One size of a curve: the statement's parameters and the bytes it touches.
struct CurvePoint {
  std::map<std::string, int64_t> set;
  int64_t touched = 0;
};

CurvePoint mulPoint(int64_t bytes) {
  const int64_t elements = std::max<int64_t>(bytes / 12, 1);  // a and b read, c written
  return {{{"C", elements}}, elements * 12};
}

CurvePoint rmsNormPoint(int64_t bytes) {
  const int64_t width = std::clamp<int64_t>(bytes / 8, 1, kRowWidth);  // x read, y written
  const int64_t rows = std::max<int64_t>(bytes / (8 * width), 1);
  return {{{"H", rows}, {"W", width}}, rows * width * 8 + width * 4};
}

class KernelCalibrator {
 public:
  KernelCalibrator(const CalibrationRuns& runs, const KernelPlan& plan, const TimeLoop& time)
      : runs_(runs), plan_(plan), time_(time) {}

  // A bandwidth curve: each size's bytes touched over its time per statement.
  MemoryCurve curve(std::string_view kernel, std::string_view text, CurvePoint (*pointFor)(int64_t)) {
    const Program program = runs_.parse(text);
    MemoryCurve curve;
    for (int64_t bytes : plan_.bytes) {
      const CurvePoint point = pointFor(bytes);
      if (!curve.bytes.empty() && point.touched <= curve.bytes.back()) continue;  // the axis ascends
      const double touched = static_cast<double>(point.touched);
      const int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.bytesPerRun, touched), 1, plan_.maxLoop);
      auto [warmup, repeat] = runsFor(touched * static_cast<double>(loop) / plan_.guessBytesPerSecond);
      const Measured measured =
          time_(fmt::format("{} {}", kernel, sizeName(point.touched)), program, point.set, loop, warmup, repeat);
      curve.bytes.push_back(point.touched);
      curve.gbps.push_back(std::clamp(touched / measured.seconds / 1e9, 1e-6, 1e6));
      curve.spread.push_back(measured.spread);
    }
    return curve;
  }

  // Attention's rate (4 · T² · H·D flops per statement) on the plan's (t, d) grid.
  AttentionGrid attention(DType dtype) {
    const Program program = runs_.parse(attentionCalibrationProgram(dtype));
    AttentionGrid grid;
    grid.t = plan_.attentionT;
    grid.d = plan_.attentionD;
    const double heads = static_cast<double>(plan_.attentionHeads);
    for (int64_t t : grid.t)
      for (int64_t d : grid.d) {
        const double flops = 4.0 * static_cast<double>(t) * static_cast<double>(t) * heads * static_cast<double>(d);
        const int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.attentionFlopsPerRun, flops), 1, plan_.attentionMaxLoop);
        auto [warmup, repeat] = runsFor(flops * static_cast<double>(loop) / plan_.guessFlopsPerSecond);
        const Measured measured = time_(fmt::format("attention {} t={} d={}", dtypeName(dtype), t, d), program,
                                        {{"T", t}, {"D", d}, {"H", plan_.attentionHeads}}, loop, warmup, repeat);
        grid.tflops.push_back(std::clamp(flops / measured.seconds / 1e12, 1e-6, 1e6));
        grid.spread.push_back(measured.spread);
      }
    return grid;
  }

 private:
  const CalibrationRuns& runs_;
  const KernelPlan& plan_;
  const TimeLoop& time_;
};

}  // namespace

std::string_view elementwiseCalibrationProgram() { return kMulProgram; }
std::string_view rowReductionCalibrationProgram() { return kRmsNormProgram; }

std::string attentionCalibrationProgram(DType dtype) {
  return fmt::format(
      "program attention(T = 64, D = 64, H = 4, R = 1) {{\n"
      "  input q : {0}[T, H * D]\n"
      "  input k : {0}[T, H * D]\n"
      "  input v : {0}[T, H * D]\n"
      "  input o : {0}[T, H * D]\n"
      "  for i in range(R) {{\n"
      "    attention(q, k, v, out=o, heads=H)\n"
      "  }}\n"
      "}}\n",
      dtypeName(dtype));
}

KernelRates measureKernels(const CalibrationRuns& runs, const KernelPlan& plan, const TimeLoop& time,
                           const std::function<void(std::string_view)>& progress) {
  auto say = [&](std::string_view what) {
    if (progress) progress(what);
  };
  KernelCalibrator calibrator(runs, plan, time);
  KernelRates kernels;
  say("elementwise (mul)");
  kernels.elementwise = calibrator.curve("mul", kMulProgram, mulPoint);
  say("row reduction (rms_norm)");
  kernels.rowReduction = calibrator.curve("rms_norm", kRmsNormProgram, rmsNormPoint);
  for (DType dtype : plan.attentionDtypes) {
    say(fmt::format("attention {}", dtypeName(dtype)));
    kernels.attention[dtype] = calibrator.attention(dtype);
  }
  return kernels;
}

}  // namespace hostir
