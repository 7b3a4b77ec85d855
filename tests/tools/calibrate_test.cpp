// `hostir calibrate` through the command line: a --quick profile that the
// profile reader accepts, with plausible numbers; the usage and output
// errors. The measurements' parts are tested in tests/calibration/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>
#include <vector>

#include "calibration/calibration.h"
#include "cli_runner.h"
#include "executor/backend_factory.h"
#include "model/machine_profile.h"

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
  // Every rate records the spread of its runs.
  ASSERT_EQ(g.spread.size(), g.tflops.size());
  for (double spread : g.spread) EXPECT_GE(spread, 0);
}

TEST_F(Cli, CalibrateQuickWritesAProfileTheReaderAccepts) {
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --force --ranks 2 -o " + path.string());
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
  EXPECT_EQ(p.memory.spread.size(), p.memory.gbps.size());

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
    EXPECT_EQ(c.measuredSpread.size(), c.measuredMicros.size());
    EXPECT_EQ(c.spread, *std::max_element(c.measuredSpread.begin(), c.measuredSpread.end()));
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
  auto r = run("calibrate --quick --force --ranks 1 -o " + path.string());
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

// Two threads that keep the cores busy until the object goes.
class BusyCores {
 public:
  BusyCores() {
    for (int i = 0; i < 2; ++i)
      spinners_.emplace_back([this] {
        volatile uint64_t sink = 0;
        while (!stop_.load(std::memory_order_relaxed)) sink = sink + 1;
      });
  }
  ~BusyCores() {
    stop_ = true;
    for (std::thread& t : spinners_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> spinners_;
};

// Whether every figure `p` records spread within the limit of a written profile.
bool withinTheSpreadLimit(const MachineProfile& p) {
  for (const auto& [dtype, grid] : p.gemm)
    for (double spread : grid.spread)
      if (spread > kNoisySpread) return false;
  for (double spread : p.memory.spread)
    if (spread > kNoisySpread) return false;
  for (const CommunicationCost& c : p.communication)
    if (c.spread > kNoisySpread) return false;
  const Overheads& o = p.overheads;
  return std::max({o.issueSpread, o.launchSpread, o.syncSpread, o.wakeupSpread}) <= kNoisySpread;
}

// On a machine whose cores other work keeps busy, calibrate either refuses
// at its start, naming the load and its two load figures, or refuses once measured,
// naming the noisiest figures, and writes nothing; or it writes a profile
// in which no figure spread beyond the limit. --force always writes, and
// says so when it writes noisy figures.
TEST_F(Cli, CalibrateOnBusyCoresRefusesNoisyFiguresUnlessForced) {
  auto path = dir_ / "p.json";
  BusyCores busy;
  auto refused = run("calibrate --quick --ranks 2 -o " + path.string());
  if (refused.exitCode == 1) {
    if (refused.err.find("the machine is busy") != std::string::npos) {
      EXPECT_THAT(refused.err, ::testing::ContainsRegex("kept [0-9]+% of its cores busy as the calibration started, "
                                                        "and its runs of copy 4 MiB spread [0-9]+% and of gemm f32 "));
    } else {
      EXPECT_THAT(refused.err, HasSubstr("error: the machine was too noisy to measure: "));
      EXPECT_THAT(refused.err, ::testing::ContainsRegex("spread more than 15% after 2 retries: [a-z].* \\([0-9]+%\\)"));
      EXPECT_THAT(refused.err, HasSubstr("no profile written"));
    }
    EXPECT_FALSE(std::filesystem::exists(path));
  } else {
    ASSERT_EQ(refused.exitCode, 0) << refused.err;
    EXPECT_TRUE(withinTheSpreadLimit(readProfile(path)));
    std::filesystem::remove(path);
  }
  auto forced = run("calibrate --quick --force --ranks 2 -o " + path.string());
  ASSERT_EQ(forced.exitCode, 0) << forced.err;
  const bool warned = forced.err.find("warning: --force: writing a profile with") != std::string::npos;
  EXPECT_EQ(warned, !withinTheSpreadLimit(readProfile(path))) << forced.err;
}

// Runs that sleep at random before every task spread as runs on a busy
// machine do: the load figures that come first refuse the calibration at
// once, naming both, and nothing is written.
TEST_F(Cli, CalibrateRefusesABusyMachineAtItsStart) {
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --ranks 2 --inject-delays 100000 -o " + path.string());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: calibration failed: the machine is busy: other processes kept "));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("and its runs of copy 4 MiB spread [0-9]+% and of gemm f32 m=256 n=256 "
                                              "k=256 [0-9]+% \\(noisy beyond 15%\\)"));
  EXPECT_THAT(r.err, HasSubstr("(--force)"));
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(Cli, CalibrateCudaWithoutADeviceIsAClearError) {
  if (!cudaUnavailableReason()) GTEST_SKIP() << "a CUDA device is usable here";
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --backend cuda -o " + path.string());
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, StartsWith("error: backend cuda: "));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(run("calibrate --quick --backend tpu -o " + path.string()).exitCode, 2);
}

}  // namespace
}  // namespace hostir
