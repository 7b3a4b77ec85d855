// `hostir calibrate` through the command line: a --quick profile that the
// profile reader accepts, with plausible numbers; the usage and output
// errors. The measurements' parts are tested in tests/calibration/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

#include "calibration/calibration.h"
#include "cli_runner.h"
#include "executor/backend_factory.h"
#include "model/machine_profile.h"
#include "tests/calibration/spinning_process.h"

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

// Other processes that keep every core busy (named children, one a core):
// calibrate refuses at once, naming them with their share of a core, before
// it measures anything (its progress stops at the load); nothing is
// written. --force measures anyway and writes a profile.
TEST_F(Cli, CalibrateRefusesABusyMachineNamingWhatKeepsItBusy) {
  auto path = dir_ / "p.json";
  std::vector<std::unique_ptr<testing::SpinningProcess>> spinners;
  const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, 64u);
  for (unsigned i = 0; i < cores; ++i) spinners.push_back(std::make_unique<testing::SpinningProcess>());
  auto refused = run("calibrate --ranks 2 -o " + path.string());
  EXPECT_EQ(refused.exitCode, 1) << refused.err;
  EXPECT_THAT(refused.err, ::testing::ContainsRegex("error: calibration failed: the machine is busy: other processes "
                                                    "kept [0-9]+% of its cores busy as the calibration started \\(the "
                                                    "busiest: .*hostir-spinner \\(pid [0-9]+\\) [0-9]+% of a core"));
  EXPECT_THAT(refused.err, HasSubstr("(--force)"));
  // Judged before any measurement: the progress names the load and nothing after it.
  EXPECT_THAT(refused.err, HasSubstr(": load\n"));
  EXPECT_THAT(refused.err, ::testing::Not(HasSubstr("overheads")));
  EXPECT_EQ(refused.out, "");
  EXPECT_FALSE(std::filesystem::exists(path));

  auto forced = run("calibrate --quick --force --ranks 2 -o " + path.string());
  ASSERT_EQ(forced.exitCode, 0) << forced.err;
  readProfile(path);
}

// Runs that sleep at random before every task spread as runs on a busy
// machine do: the load figures that come first refuse the calibration at
// once, naming both, and nothing is written. (Beside other tests that keep
// half the cores busy, the load itself refuses it first, as it should.)
TEST_F(Cli, CalibrateRefusesABusyMachineAtItsStart) {
  auto path = dir_ / "p.json";
  auto r = run("calibrate --quick --ranks 2 --inject-delays 100000 -o " + path.string());
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: calibration failed: the machine is busy: other processes kept "));
  EXPECT_THAT(r.err, ::testing::ContainsRegex("and its runs of copy 4 MiB spread [0-9]+% and of gemm f32 m=256 n=256 "
                                              "k=256 [0-9]+% \\(noisy beyond 15%\\)|as the calibration started "
                                              "\\(the busiest: .*\\); quiet the machine"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("overheads")));
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
