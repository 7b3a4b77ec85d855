// `hostir calibrate` through the command line: a --quick profile that the
// profile reader accepts, with plausible numbers; the usage and output
// errors; and the least-squares fit of the communication costs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "cli_runner.h"
#include "model/machine_profile.h"
#include "tools/hostir/calibration.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using Cli = testing::CliTest;

// Reads back what calibrate wrote.
MachineProfile readProfile(const std::filesystem::path& path) {
  auto profile = parseMachineProfile(testing::slurp(path), path.string());
  EXPECT_TRUE(profile) << (profile ? "" : profile.error().message);
  return profile ? *profile : MachineProfile{};
}

void expectPlausibleGrid(const MachineProfile& p, DType dtype) {
  SCOPED_TRACE(std::string(dtypeName(dtype)));
  auto grid = p.gemm.find(dtype);
  ASSERT_NE(grid, p.gemm.end());
  const GemmGrid& g = grid->second;
  ASSERT_FALSE(g.m.empty());
  ASSERT_FALSE(g.n.empty());
  ASSERT_FALSE(g.k.empty());
  EXPECT_TRUE(std::is_sorted(g.m.begin(), g.m.end()));
  EXPECT_TRUE(std::is_sorted(g.k.begin(), g.k.end()));
  ASSERT_EQ(g.tflops.size(), g.m.size() * g.n.size() * g.k.size());
  // Positive, and below what any CPU core does (1 TFLOP/s).
  for (double rate : g.tflops) {
    EXPECT_GT(rate, 0);
    EXPECT_LT(rate, 1.0);
  }
  ASSERT_TRUE(p.peakTflops.count(dtype));
  EXPECT_DOUBLE_EQ(p.peakTflops.at(dtype), *std::max_element(g.tflops.begin(), g.tflops.end()));
}

TEST_F(Cli, CalibrateQuickWritesAProfileTheReaderAccepts) {
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --ranks 2 -o " + path.string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("calibrated: gemm f32 "));
  EXPECT_THAT(r.out, HasSubstr("allreduce 2 ranks latency"));
  EXPECT_THAT(r.out, HasSubstr("wrote " + path.string()));
  EXPECT_LT(r.seconds, 60);

  MachineProfile p = readProfile(path);
  EXPECT_THAT(p.name, StartsWith("calibrated on "));
  EXPECT_THAT(p.description, HasSubstr("2 ranks as an in-process team"));
  EXPECT_EQ(p.admission, Admission::IssueOrder);
  EXPECT_GE(p.computeUnits, 1);
  EXPECT_EQ(p.gemmUnits, 1);
  EXPECT_EQ(p.communicationUnits, 1);
  for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) expectPlausibleGrid(p, dtype);

  ASSERT_FALSE(p.memory.bytes.empty());
  ASSERT_EQ(p.memory.bytes.size(), p.memory.gbps.size());
  EXPECT_TRUE(std::is_sorted(p.memory.bytes.begin(), p.memory.bytes.end()));
  for (double gbps : p.memory.gbps) EXPECT_GT(gbps, 0);

  // One entry per communication, at the team's size; a ring step of sendrecv is one transfer (flat).
  ASSERT_EQ(p.communication.size(), 5u);
  std::vector<OpKind> kinds;
  for (const CommunicationCost& c : p.communication) {
    kinds.push_back(c.kind);
    EXPECT_EQ(c.ranks, 2);
    EXPECT_GE(c.latencyMicros, 0);
    EXPECT_LT(c.latencyMicros, 1e5);
    EXPECT_GT(c.busGbps, 0);
    EXPECT_EQ(c.algorithm, c.kind == OpKind::SendRecv ? CommAlgorithm::Flat : CommAlgorithm::Ring);
  }
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre(OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter,
                                                     OpKind::Broadcast, OpKind::SendRecv));

  EXPECT_GT(p.overheads.issueMicros, 0);
  EXPECT_GE(p.overheads.launchMicros, 0);
  EXPECT_GE(p.overheads.syncMicros, 0);
  EXPECT_GE(p.overheads.wakeupMicros, 0);
}

TEST_F(Cli, CalibrateOnOneRankHasNoCommunicationCosts) {
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --ranks 1 -o " + path.string());
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no communication costs (one rank)"));
  MachineProfile p = readProfile(path);
  EXPECT_TRUE(p.communication.empty());
  expectPlausibleGrid(p, DType::F32);
}

TEST_F(Cli, CalibrateReportsAnUnwritableOutputBeforeMeasuring) {
  auto missing = dir_ / "no-such-dir" / "p.json";
  auto r = run("calibrate --ranks 2 -o " + missing.string());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("error: cannot write '" + missing.string() + "': No such file or directory"));
  EXPECT_EQ(r.out, "");
  EXPECT_LT(r.seconds, 10);  // found before the minutes of a full calibration

  auto directory = run("calibrate --quick -o " + dir_.string());
  EXPECT_EQ(directory.exitCode, 1);
  EXPECT_THAT(directory.err, HasSubstr("error: cannot write '" + dir_.string() + "'"));
}

TEST_F(Cli, CalibrateRejectsABadCommandLine) {
  auto path = (dir_ / "p.json").string();
  EXPECT_EQ(run("calibrate --quick --ranks 0 -o " + path).exitCode, 2);
  EXPECT_EQ(run("calibrate --quick").exitCode, 2);  // -o is required
  EXPECT_FALSE(std::filesystem::exists(path));
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

}  // namespace
}  // namespace hostir
