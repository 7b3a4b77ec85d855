// The measurements of calibration/ without the command line: the spread of
// a figure's runs, the contention programs and the rate read from their
// traces, and the least-squares fit of the communication costs.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calibration.h"
#include "calibration/calibration_runs.h"
#include "calibration/contention_calibration.h"
#include "calibration/kernel_calibration.h"
#include "model/cost_model.h"

namespace hostir {
namespace {

TEST(CalibrationSpread, IsTheInterquartileRangeOverTheMedian) {
  EXPECT_EQ(spreadOf({}), 0);
  EXPECT_EQ(spreadOf({5}), 0);
  EXPECT_DOUBLE_EQ(spreadOf({1, 1, 1, 1}), 0);
  // Sorted 1 2 3 4 5: quartiles 2 and 4, median 3.
  EXPECT_DOUBLE_EQ(spreadOf({5, 1, 4, 2, 3}), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 2, 3}), 2.5);
}

// The contention measurement's programs and trace reading, on the CPU
// backend's streams (threads): it runs, and every pair it times has a rate
// in (0, 1]. (Which pairs overlap enough to time depends on the cores a
// loaded machine gives the threads; rateBeside's test below is exact.)
TEST(ContentionCalibration, RunsItsProgramsAndReadsTheirTraces) {
  CalibrationRequest request;
  request.world = 2;
  request.backend.cpu.coresPerRank = 2;
  request.quick = true;
  TeamRunner runTeam = [](const RunRequest& run) { return runInProcess(run, 2); };
  CalibrationRuns runs(request, runTeam);
  std::vector<Contention> measured = measureContention(runs, request);
  std::set<std::pair<WorkClass, WorkClass>> pairs;
  for (const Contention& c : measured) {
    EXPECT_NE(c.slowed, c.beside);
    EXPECT_TRUE(pairs.insert({c.slowed, c.beside}).second);
    EXPECT_GT(c.rate, 0);
    EXPECT_LE(c.rate, 1);
    EXPECT_GE(c.spread, 0);
  }
}

RecordedSlice slice(std::string name, double start, double duration) {
  return RecordedSlice{2, std::move(name), "compute", start, duration};
}

// GEMMs of 10 µs alone; copies of 8 µs run from 0 to 46 µs with launch gaps
// of 1.5 µs. The GEMMs wholly inside that stretch took 20 µs: a rate of 0.5.
// The copies (4 µs alone, all inside the GEMMs' stretch) run at 0.5.
TEST(ContentionCalibration, ARateIsTheTimeAloneOverTheTimeWhollyBeside) {
  std::vector<RecordedSlice> gemms = {slice("linear", 0, 20), slice("linear", 20, 20), slice("linear", 40, 20),
                                      slice("linear", 60, 10)};
  std::vector<RecordedSlice> copies;
  for (double at = 0; at + 8 <= 48; at += 9.5) copies.push_back(slice("copy", at, 8));
  // Covered: [0, 46] once the gaps are joined; the GEMMs at 0 and 20 lie inside, the one at 40 does not.
  std::optional<double> gemm = rateBeside(10, gemms, copies, 2);
  ASSERT_TRUE(gemm);
  EXPECT_DOUBLE_EQ(*gemm, 0.5);
  std::optional<double> copy = rateBeside(4, copies, gemms, 2);
  ASSERT_TRUE(copy);
  EXPECT_DOUBLE_EQ(*copy, 0.5);
  // Gaps wider than allowed split the stretch: no GEMM lies wholly in a piece.
  EXPECT_FALSE(rateBeside(10, gemms, copies, 1));
  // Faster beside than alone (noise) is capped at 1.
  EXPECT_DOUBLE_EQ(*rateBeside(30, gemms, copies, 2), 1.0);
}

TEST(CalibrationFit, RecoversALine) {
  // 10 us + bytes / 5 GB/s.
  std::vector<double> x = {1e3, 1e5, 1e7, 1e8}, t;
  for (double bytes : x) t.push_back(10e-6 + bytes / 5e9);
  LineFit fit = fitLatencyBandwidth(x, t);
  EXPECT_NEAR(fit.latency, 10e-6, 1e-9);
  EXPECT_NEAR(fit.bandwidth, 5e9, 1e3);
}

TEST(CalibrationFit, ClampsANegativeLatency) {
  LineFit fit = fitLatencyBandwidth({1e6, 2e6}, {0.5e-3, 1.5e-3});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_GT(fit.bandwidth, 0);
}

TEST(CalibrationFit, OnePointIsABandwidth) {
  LineFit fit = fitLatencyBandwidth({1e6}, {1e-3});
  EXPECT_EQ(fit.latency, 0);
  EXPECT_NEAR(fit.bandwidth, 1e9, 1);
}

TEST(CalibrationFit, TimesThatDoNotGrowAreALatency) {
  LineFit fit = fitLatencyBandwidth({1e3, 1e6}, {20e-6, 19e-6});
  EXPECT_GT(fit.latency, 19e-6);
  EXPECT_LT(fit.latency, 20e-6);
  EXPECT_EQ(fit.bandwidth, 0);
}

// The kernels' measurements on the CPU backend, as `hostir calibrate
// --quick` makes them: each planned size of mul and rms_norm touches the
// bytes its shape says (a, b read and c written; x read, y written, w
// read), and attention is timed at every (t, d) of the plan. Rates are
// the machine's: only that they are rates is asserted.
TEST(KernelCalibration, MeasuresEachKernelAtItsPlannedSizes) {
  CalibrationRequest request;
  request.world = 2;
  request.quick = true;
  TeamRunner runTeam = [](const RunRequest& run) { return runInProcess(run, 2); };
  CalibrationRuns runs(request, runTeam);
  KernelPlan plan;
  plan.bytes = {16 * 1024, 1024 * 1024};
  plan.bytesPerRun = 4 * 1024 * 1024;
  plan.maxLoop = 50;
  plan.attentionT = {16, 64};
  plan.attentionD = {8};
  plan.attentionHeads = 2;
  plan.attentionDtypes = {DType::F32};
  plan.attentionFlopsPerRun = 1e6;
  plan.attentionMaxLoop = 20;
  std::vector<std::string> figures;
  TimeLoop time = [&](const std::string& figure, const Program& program, std::map<std::string, int64_t> set,
                      int64_t loop, int warmup, int repeat) {
    figures.push_back(figure);
    set["R"] = loop;
    const std::vector<double> seconds = runs.timedRuns(program, set, warmup, repeat);
    return Measured{medianOf(seconds) / static_cast<double>(loop), spreadOf(seconds)};
  };
  std::vector<std::string> said;
  const KernelRates k = measureKernels(runs, plan, time, [&](std::string_view what) { said.emplace_back(what); });
  // mul on C = bytes / 12 elements of f32: 3 tensors of 4 bytes each.
  EXPECT_EQ(k.elementwise.bytes, (std::vector<int64_t>{16384 / 12 * 12, 1048576 / 12 * 12}));
  // rms_norm on rows of 1024 f32: x and y of H rows, w once.
  EXPECT_EQ(k.rowReduction.bytes, (std::vector<int64_t>{2 * 8192 + 4096, 128 * 8192 + 4096}));
  for (const MemoryCurve* curve : {&k.elementwise, &k.rowReduction}) {
    ASSERT_EQ(curve->gbps.size(), 2u);
    ASSERT_EQ(curve->spread.size(), 2u);
    for (double gbps : curve->gbps) EXPECT_GT(gbps, 0);
  }
  ASSERT_EQ(k.attention.size(), 1u);
  const AttentionGrid& grid = k.attention.at(DType::F32);
  EXPECT_EQ(grid.t, (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(grid.d, std::vector<int64_t>{8});
  ASSERT_EQ(grid.tflops.size(), 2u);
  for (double tflops : grid.tflops) EXPECT_GT(tflops, 0);
  EXPECT_EQ(figures, (std::vector<std::string>{"mul 16380 B", "mul 1048572 B", "rms_norm 20 KiB", "rms_norm 1028 KiB",
                                               "attention f32 t=16 d=8", "attention f32 t=64 d=8"}));
  EXPECT_EQ(said, (std::vector<std::string>{"elementwise (mul)", "row reduction (rms_norm)", "attention f32"}));
}

// `hostir calibrate --quick` end to end on two in-process ranks: the
// profile has the kernels' figures, writes and reads them back, and the
// simulator then prices those kernels by them, assuming nothing.
TEST(KernelCalibration, AQuickCalibrationPricesTheKernelsItMeasured) {
  CalibrationRequest request;
  request.world = 2;
  request.quick = true;
  request.force = true;  // the test machine may be busy: this test is about the profile
  TeamRunner runTeam = [](const RunRequest& run) { return runInProcess(run, 2); };
  Result<Calibration> calibration = calibrate(request, runTeam);
  ASSERT_TRUE(calibration.ok()) << calibration.error().message;
  MachineProfile& profile = calibration->profile;
  profile.name = "quick";
  EXPECT_FALSE(profile.kernels.elementwise.bytes.empty());
  EXPECT_FALSE(profile.kernels.rowReduction.bytes.empty());
  EXPECT_TRUE(profile.kernels.attention.contains(DType::F32));
  auto reread = parseMachineProfile(machineProfileJson(profile), "quick.json");
  ASSERT_TRUE(reread.ok()) << reread.error().message;
  EXPECT_EQ(reread->kernels.elementwise.gbps, profile.kernels.elementwise.gbps);
  EXPECT_EQ(reread->kernels.attention.at(DType::F32).tflops, profile.kernels.attention.at(DType::F32).tflops);
  // mul of 64 KiB f32 tensors, attention of [128, 4·32]: no assumption made.
  std::vector<int64_t> vector{16384}, tokens{128, 128};
  std::array<TensorExtent, kMaxOperands> mul{};
  mul[operands::Mul::a] = mul[operands::Mul::b] = mul[operands::Mul::out] = TensorExtent{vector, 4};
  auto mulCost = computeCost(*reread, OpKind::Mul, DType::F32, mul, {});
  ASSERT_TRUE(mulCost.ok());
  EXPECT_FALSE(mulCost->assumed);
  EXPECT_DOUBLE_EQ(mulCost->seconds, elementwiseSeconds(*reread, 3 * 16384 * 4));
  std::array<TensorExtent, kMaxOperands> qkv{};
  using A = operands::Attention;
  qkv[A::q] = qkv[A::k] = qkv[A::v] = qkv[A::out] = TensorExtent{tokens, 4};
  std::array<double, kMaxOperands> scalars{};
  scalars[A::heads] = 4;
  auto attentionCost = computeCost(*reread, OpKind::Attention, DType::F32, qkv, scalars);
  ASSERT_TRUE(attentionCost.ok());
  EXPECT_FALSE(attentionCost->assumed);
  EXPECT_GT(attentionCost->seconds, 0);
}

// A forced calibration of a machine that others keep busy is bounded: past
// the load and the overheads, every figure is timed once, with at most
// kBusyRepeat timed runs and at most one untimed, never measured again
// however its runs spread.
TEST(BusyCalibration, TimesEachFigureOnceWithFewRuns) {
  CalibrationRequest request;
  request.world = 2;
  request.quick = true;
  request.force = true;
  request.load.othersBusy = 1.0;
  std::string group;
  request.progress = [&](std::string_view name) { group = name; };
  struct Timed {
    std::string group, program;
    std::map<std::string, int64_t> params;
    int warmup, repeat;
  };
  std::vector<Timed> timed;
  TeamRunner runTeam = [&](const RunRequest& run) {
    if (group != "load" && group != "overheads" && group != "contention")
      timed.push_back({group, run.program.name, run.params, run.warmup, run.repeat});
    return runInProcess(run, 2);
  };
  Result<Calibration> calibration = calibrate(request, runTeam);
  ASSERT_TRUE(calibration.ok()) << calibration.error().message;
  ASSERT_GT(timed.size(), 20u);
  for (size_t i = 0; i < timed.size(); ++i) {
    const Timed& t = timed[i];
    EXPECT_LE(t.repeat, kBusyRepeat) << t.group << ": " << t.program;
    EXPECT_LE(t.warmup, 1) << t.group << ": " << t.program;
    if (i > 0) {
      EXPECT_FALSE(timed[i - 1].program == t.program && timed[i - 1].params == t.params)
          << t.group << ": " << t.program << " measured again";
    }
  }
}

}  // namespace
}  // namespace hostir
