#include "model/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hostir {
namespace {

// Exact up to rounding of the double arithmetic.
constexpr double kTolerance = 1e-12;

// bf16 rates on m {64, 256} x n {128} x k {32, 128}, memory fast enough
// never to bind, and a few communication entries.
MachineProfile testProfile() {
  MachineProfile p;
  p.name = "test";
  p.gemm[DType::BF16] = GemmGrid{{64, 256}, {128}, {32, 128}, {10, 20, 30, 40}};
  p.memory = MemoryCurve{{1024, 1048576}, {1e9, 1e9}};
  p.communication = {
      {OpKind::Allreduce, 2, CommAlgorithm::Ring, 10, 100, {}, {}},
      {OpKind::Allreduce, 8, CommAlgorithm::Ring, 14, 100, {}, {}},
      {OpKind::Allgather, 4, CommAlgorithm::Tree, 10, 50, {}, {}},
      {OpKind::Broadcast, 4, CommAlgorithm::Ring, 30, 100, {}, {}},
      {OpKind::SendRecv, 2, CommAlgorithm::Flat, 5, 50, {}, {}},
  };
  return p;
}

double gemm(const MachineProfile& p, int64_t m, int64_t n, int64_t k, DType dtype = DType::BF16) {
  auto seconds = gemmSeconds(p, dtype, m, n, k);
  EXPECT_TRUE(seconds.ok()) << seconds.error();
  return seconds.ok() ? *seconds : -1;
}

double flops(double m, double n, double k) { return 2 * m * n * k; }

double communication(const MachineProfile& p, OpKind kind, int64_t bytes, int64_t ranks) {
  auto seconds = communicationSeconds(p, kind, bytes, ranks);
  EXPECT_TRUE(seconds.ok()) << seconds.error();
  return seconds.ok() ? *seconds : -1;
}

// Rows of 64 bytes take 3x a contiguous copy, of 4096 bytes 1.5x; between
// them the slowdown follows log2 of the row; past the ends it clamps; a
// copy whose row is half its bytes or more is contiguous, and no strided
// copy is priced below a contiguous one.
TEST(CostModelTest, StridedCopiesCostTheirSlowdownAtTheirRowLength) {
  MachineProfile p = testProfile();
  const int64_t bytes = 1 << 20;
  const double contiguous = memorySeconds(p, bytes);
  EXPECT_EQ(copySeconds(p, bytes, 64), contiguous);  // no strided figures: contiguous
  p.memory.stridedRunBytes = {64, 4096};
  p.memory.stridedSlowdown = {3, 1.5};
  EXPECT_NEAR(copySeconds(p, bytes, 64), 3 * contiguous, kTolerance);
  EXPECT_NEAR(copySeconds(p, bytes, 512), 2.25 * contiguous, kTolerance);  // log2: halfway from 6 to 12
  EXPECT_NEAR(copySeconds(p, bytes, 8), 3 * contiguous, kTolerance);
  EXPECT_NEAR(copySeconds(p, bytes, 65536), 1.5 * contiguous, kTolerance);
  EXPECT_EQ(copySeconds(p, bytes, bytes / 2), contiguous);
  EXPECT_EQ(copySeconds(p, bytes, 0), contiguous);
  p.memory.stridedSlowdown = {0.5, 0.5};
  EXPECT_EQ(copySeconds(p, bytes, 64), contiguous);
}

TEST(CostModelTest, GemmAtGridPointsUsesTheirRates) {
  MachineProfile p = testProfile();
  EXPECT_NEAR(gemm(p, 64, 128, 32), flops(64, 128, 32) / 10e12, kTolerance);
  EXPECT_NEAR(gemm(p, 64, 128, 128), flops(64, 128, 128) / 20e12, kTolerance);
  EXPECT_NEAR(gemm(p, 256, 128, 32), flops(256, 128, 32) / 30e12, kTolerance);
  EXPECT_NEAR(gemm(p, 256, 128, 128), flops(256, 128, 128) / 40e12, kTolerance);
}

// Between two points the time follows the power law through theirs, so
// the rate changes by the same factor at each doubling: at the midpoint in
// log2 it is the geometric mean of the two rates.
TEST(CostModelTest, GemmTimeFollowsAPowerLawBetweenGridPoints) {
  MachineProfile p = testProfile();
  // 128 is halfway from 64 to 256 in log2; 64 halfway from 32 to 128.
  EXPECT_NEAR(gemm(p, 128, 128, 32), flops(128, 128, 32) / (std::sqrt(10.0 * 30) * 1e12), kTolerance);
  EXPECT_NEAR(gemm(p, 64, 128, 64), flops(64, 128, 64) / (std::sqrt(10.0 * 20) * 1e12), kTolerance);
  EXPECT_NEAR(gemm(p, 128, 128, 64), flops(128, 128, 64) / (std::pow(10.0 * 20 * 30 * 40, 0.25) * 1e12), kTolerance);
  // Off the midpoint: at m = 91, (log2 91 - 6) / 2 of the way from 10 to 30 in log2 of the rate.
  double fraction = (std::log2(91.0) - 6) / 2;
  EXPECT_NEAR(gemm(p, 91, 128, 32), flops(91, 128, 32) / (10 * std::pow(3.0, fraction) * 1e12), kTolerance);
}

TEST(CostModelTest, GemmClampsToTheGridsEdges) {
  MachineProfile p = testProfile();
  EXPECT_NEAR(gemm(p, 4096, 128, 16), flops(4096, 128, 16) / 30e12, kTolerance);  // m above, k below
  EXPECT_NEAR(gemm(p, 8, 128, 1 << 20), flops(8, 128, 1 << 20) / 20e12, kTolerance);
  // n has one point: constant along n.
  EXPECT_NEAR(gemm(p, 64, 7, 32), flops(64, 7, 32) / 10e12, kTolerance);
  EXPECT_NEAR(gemm(p, 64, 100000, 32), flops(64, 100000, 32) / 10e12, kTolerance);
}

TEST(CostModelTest, GemmNeverBeatsThePeak) {
  MachineProfile p = testProfile();
  p.peakTflops[DType::BF16] = 15;
  EXPECT_NEAR(gemm(p, 64, 128, 32), flops(64, 128, 32) / 10e12, kTolerance);      // below the peak
  EXPECT_NEAR(gemm(p, 256, 128, 128), flops(256, 128, 128) / 15e12, kTolerance);  // 40 capped at 15
}

TEST(CostModelTest, GemmNeverBeatsItsBytesAtMemoryBandwidth) {
  MachineProfile p = testProfile();
  p.memory = MemoryCurve{{1}, {0.001}};  // 1 MB/s: every GEMM is memory-bound
  double bytes = (64.0 * 32 + 32 * 128 + 64 * 128) * 2;
  EXPECT_NEAR(gemm(p, 64, 128, 32), bytes / 1e6, 1e-9);
  // f32 doubles the bytes.
  p.gemm[DType::F32] = GemmGrid{{1}, {1}, {1}, {1}};
  EXPECT_NEAR(gemm(p, 64, 128, 32, DType::F32), 2 * bytes / 1e6, 1e-9);
}

TEST(CostModelTest, EmptyGemmsCostNothing) {
  MachineProfile p = testProfile();
  EXPECT_EQ(gemm(p, 0, 128, 32), 0);
  EXPECT_EQ(gemm(p, 64, 0, 32), 0);
  EXPECT_EQ(gemm(p, 64, 128, 0), 0);
}

TEST(CostModelTest, GemmOfADtypeWithoutRatesIsAnError) {
  auto seconds = gemmSeconds(testProfile(), DType::F64, 64, 64, 64);
  ASSERT_FALSE(seconds.ok());
  EXPECT_EQ(seconds.error(), "the profile 'test' has no f64 GEMM rates");
}

TEST(CostModelTest, MemoryTimeFollowsAPowerLawBetweenPointsAndTheEndRatesPastThem) {
  MachineProfile p;
  p.memory = MemoryCurve{{1024, 1048576}, {10, 110}};
  EXPECT_NEAR(memorySeconds(p, 1024), 1024 / 10e9, kTolerance);
  EXPECT_NEAR(memorySeconds(p, 1048576), 1048576 / 110e9, kTolerance);
  // log2 15, halfway: the geometric mean of 10 and 110; log2 12, a fifth of the way.
  EXPECT_NEAR(memorySeconds(p, 32768), 32768 / (std::sqrt(10.0 * 110) * 1e9), kTolerance);
  EXPECT_NEAR(memorySeconds(p, 4096), 4096 / (10 * std::pow(11.0, 0.2) * 1e9), kTolerance);
  EXPECT_NEAR(memorySeconds(p, 100), 100 / 10e9, kTolerance);
  EXPECT_NEAR(memorySeconds(p, int64_t{1} << 30), (1 << 30) / 110e9, kTolerance);
  EXPECT_EQ(memorySeconds(p, 0), 0);
}

TEST(CostModelTest, BusFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Allreduce, 2), 1);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Allreduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Allgather, 2), 0.5);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Allgather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::ReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Broadcast, 2), 1);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::Broadcast, 64), 1);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::SendRecv, 2), 1);
  EXPECT_DOUBLE_EQ(busFactor(OpKind::SendRecv, 5), 1);
  for (OpKind kind : {OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter, OpKind::Broadcast, OpKind::SendRecv})
    EXPECT_EQ(busFactor(kind, 1), 0);
}

TEST(CostModelTest, CommunicationAtAnEntrysTeamSize) {
  MachineProfile p = testProfile();
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 100'000'000, 2), 10e-6 + 1e8 * 1.0 / 100e9, kTolerance);
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 100'000'000, 8), 14e-6 + 1e8 * 1.75 / 100e9, kTolerance);
  EXPECT_NEAR(communication(p, OpKind::Broadcast, 1000, 4), 30e-6 + 1000 / 100e9, kTolerance);
}

TEST(CostModelTest, CommunicationScalesTheLatencyByTheAlgorithmsSteps) {
  MachineProfile p = testProfile();
  // Ring allreduce from 2 ranks (2 steps) to 4 (6 steps): the entry below.
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1000, 4), 30e-6 + 1000 * 1.5 / 100e9, kTolerance);
  // To 16 ranks (30 steps) from the largest smaller entry, 8 ranks (14 steps).
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1000, 16), 30e-6 + 1000 * 1.875 / 100e9, kTolerance);
  // Tree allgather from 4 ranks (2 levels) to 16 (4 levels), and down to 2 (1 level): the smallest entry.
  EXPECT_NEAR(communication(p, OpKind::Allgather, 1000, 16), 20e-6 + 1000 * (15.0 / 16) / 50e9, kTolerance);
  EXPECT_NEAR(communication(p, OpKind::Allgather, 1000, 2), 5e-6 + 1000 * 0.5 / 50e9, kTolerance);
  EXPECT_NEAR(communication(p, OpKind::Allgather, 1000, 5), 15e-6 + 1000 * 0.8 / 50e9, kTolerance);  // ceil(log2 5) = 3
  // Ring broadcast: n - 1 steps, 3 at 4 ranks, 7 at 8.
  EXPECT_NEAR(communication(p, OpKind::Broadcast, 1000, 8), 70e-6 + 1000 / 100e9, kTolerance);
}

// With nodes of 4 ranks: a group inside one node takes the node's entries
// (the 2-rank one, whatever the team above), one across nodes the larger
// ones, its bandwidth capped at the NIC share of its members on a node.
TEST(CostModelTest, AGroupIsPricedInsideItsNodeOrOnTheNetwork) {
  MachineProfile p = testProfile();
  p.communication[1].busGbps = 40;  // the 8-rank ring: across nodes of 4
  p.ranksPerNode = 4;
  p.nicBusGbps = 15;
  const auto placed = [&](int64_t ranks, GroupPlacement where) {
    auto seconds = communicationSeconds(p, OpKind::Allreduce, 1'000'000, ranks, nullptr, &where);
    EXPECT_TRUE(seconds.ok());
    return seconds.ok() ? *seconds : -1;
  };
  // 4 ranks in one node: the 2-rank entry (2 steps) scaled to 6 steps, at 100 GB/s.
  EXPECT_NEAR(placed(4, {1, 4}), 30e-6 + 1e6 * 1.5 / 100e9, kTolerance);
  // 4 ranks on 4 nodes, one a node: the 8-rank entry (14 steps) scaled to 6, at one NIC's 15 GB/s.
  EXPECT_NEAR(placed(4, {4, 1}), 6e-6 + 1e6 * 1.5 / 15e9, kTolerance);
  // 8 ranks on 2 nodes, 4 a node: 4 NICs' 60 GB/s cap the entry's 40 no further.
  EXPECT_NEAR(placed(8, {2, 4}), 14e-6 + 1e6 * 1.75 / 40e9, kTolerance);
  // Unplaced, or on a profile without nodes: by the team's size alone, as before.
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1'000'000, 4), 30e-6 + 1e6 * 1.5 / 100e9, kTolerance);
  p.ranksPerNode = 0;
  EXPECT_NEAR(placed(4, {4, 1}), 30e-6 + 1e6 * 1.5 / 100e9, kTolerance);
}

TEST(CostModelTest, ASendrecvIsOneStepWhateverTheTeam) {
  MachineProfile p = testProfile();
  // alpha + beta per message: the 2-rank entry prices a ring step on any team, latency unscaled.
  for (int64_t ranks : {2, 3, 8, 1024})
    EXPECT_NEAR(communication(p, OpKind::SendRecv, 1'000'000, ranks), 5e-6 + 1e6 / 50e9, kTolerance) << ranks;
  // Even with a ring entry, a transfer to one peer is one step.
  p.communication.back().algorithm = CommAlgorithm::Ring;
  EXPECT_NEAR(communication(p, OpKind::SendRecv, 1000, 16), 5e-6 + 1000 / 50e9, kTolerance);
}

TEST(CostModelTest, CommunicationTakesTheFastestAlgorithm) {
  MachineProfile p = testProfile();
  p.communication.push_back({OpKind::Allreduce, 8, CommAlgorithm::Flat, 50, 200, {}, {}});
  // Small: ring's 14 us beats flat's 50 us.
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1000, 8), 14e-6 + 1000 * 1.75 / 100e9, kTolerance);
  // Large: flat's bandwidth wins.
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1'000'000'000, 8), 50e-6 + 1e9 * 1.75 / 200e9, kTolerance);
  // Flat keeps its latency on a larger team; ring's grows (14 -> 30 us).
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 1000, 16), 30e-6 + 1000 * 1.875 / 100e9, kTolerance);
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 0, 1024), 50e-6, kTolerance);
}

TEST(CostModelTest, ATeamOfOneCommunicatesNothing) {
  MachineProfile p = testProfile();
  for (OpKind kind : {OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter, OpKind::Broadcast})
    EXPECT_EQ(communication(p, kind, 1'000'000, 1), 0);
}

TEST(CostModelTest, CommunicationWithoutEntriesIsAnError) {
  auto seconds = communicationSeconds(testProfile(), OpKind::ReduceScatter, 1000, 4);
  ASSERT_FALSE(seconds.ok());
  EXPECT_EQ(seconds.error(), "the profile 'test' has no reduce_scatter costs");
}

// all_to_all: each rank sends n - 1 of its n parts, (n-1)/n as nccl-tests'
// alltoall counts it. A profile without all_to_all entries prices it with
// its allgather entries (the stated assumption); one with its own uses them.
TEST(CostModelTest, AllToAllBusFactorAndItsPriceWithoutEntriesOfItsOwn) {
  for (int64_t n : {2, 3, 4, 8, 64}) {
    const double d = static_cast<double>(n);
    EXPECT_DOUBLE_EQ(busFactor(OpKind::AllToAll, n), (d - 1) / d) << n;
  }
  EXPECT_EQ(busFactor(OpKind::AllToAll, 1), 0);
  MachineProfile p = testProfile();
  // The tree allgather entry at 4 ranks: latency 10 us, 50 GB/s, at all_to_all's factor 3/4.
  std::optional<PricingAssumption> assumed;
  auto seconds = communicationSeconds(p, OpKind::AllToAll, 1'000'000, 4, &assumed);
  ASSERT_TRUE(seconds.ok()) << seconds.error();
  EXPECT_NEAR(*seconds, 10e-6 + 1e6 * 0.75 / 50e9, kTolerance);
  ASSERT_TRUE(assumed.has_value());
  EXPECT_EQ(assumed->kind, PricingAssumption::Kind::CommunicationAsAnother);
  EXPECT_EQ(describeAssumption(*assumed, p.name),
            "all_to_all at the latency and bus bandwidth of the allgather entries, at all_to_all's own bus factor: "
            "the profile 'test' has no all_to_all entries");
  // With entries of its own, nothing is assumed.
  p.communication.push_back({OpKind::AllToAll, 4, CommAlgorithm::Flat, 3, 25, {}, {}});
  seconds = communicationSeconds(p, OpKind::AllToAll, 1'000'000, 4, &assumed);
  ASSERT_TRUE(seconds.ok()) << seconds.error();
  EXPECT_NEAR(*seconds, 3e-6 + 1e6 * 0.75 / 25e9, kTolerance);
  EXPECT_FALSE(assumed.has_value());
  EXPECT_TRUE(communicationSeconds(p, OpKind::Allgather, 1000, 4, &assumed).ok());
  EXPECT_FALSE(assumed.has_value());
  MachineProfile none = testProfile();
  none.communication.clear();
  seconds = communicationSeconds(none, OpKind::AllToAll, 1000, 4);
  ASSERT_FALSE(seconds.ok());
  EXPECT_EQ(seconds.error(),
            "the profile 'test' has no all_to_all costs (nor allgather costs, which price it where it has none)");
}

// The shipped H100 profile against the project's own measurement and the
// public figures it was built from (docs/machine-profiles.md).
TEST(CostModelTest, ShippedH100MatchesItsSources) {
  auto loaded = loadMachineProfile("h100-nvlink");
  ASSERT_TRUE(loaded.ok());
  const MachineProfile& h100 = *loaded;
  // bench/row_parallel_bf16.hir, S = 1: one GEMM 8192 x 8192 x 32768, 5.55 ms.
  EXPECT_NEAR(gemm(h100, 8192, 8192, 32768), 5.55e-3, 0.01e-3);
  // S = 8: eight GEMMs of m = 1024, 5.83 ms in all.
  EXPECT_NEAR(8 * gemm(h100, 1024, 8192, 32768), 5.83e-3, 0.01e-3);
  // A 2-rank bf16 allreduce of 8192 x 8192 over NVLink: 0.3-0.6 ms.
  double allreduce = communication(h100, OpKind::Allreduce, int64_t{8192} * 8192 * 2, 2);
  EXPECT_GT(allreduce, 0.3e-3);
  EXPECT_LT(allreduce, 0.6e-3);
  // 8 ranks, 1 GiB: NVLS at ~480 GB/s busbw.
  double big = communication(h100, OpKind::Allreduce, int64_t{1} << 30, 8);
  EXPECT_NEAR((int64_t{1} << 30) * 1.75 / big / 1e9, 480, 10);
  // A ring step of 64 MiB within the node: NCCL's send/recv at ~180 GB/s (nccl-tests#268).
  double step = communication(h100, OpKind::SendRecv, int64_t{64} << 20, 8);
  EXPECT_NEAR((int64_t{64} << 20) / step / 1e9, 180, 5);
  // Across nodes the pair on the network sets the step.
  EXPECT_GT(communication(h100, OpKind::SendRecv, int64_t{64} << 20, 16), 4 * step);
}

TEST(CostModelTest, MeasuredSizesPriceTheirTeamSize) {
  MachineProfile p = testProfile();
  p.communication[0].measuredBytes = {1000, 3000};
  p.communication[0].measuredMicros = {10, 50};
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 500, 2), 10e-6, kTolerance);   // below: the first time
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 2000, 2), 30e-6, kTolerance);  // between: linear in bytes
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 5000, 2), 90e-6, kTolerance);  // beyond: the last segment's rate
  // Other team sizes keep latency and bandwidth.
  EXPECT_NEAR(communication(p, OpKind::Allreduce, 100'000'000, 8), 14e-6 + 1e8 * 1.75 / 100e9, kTolerance);
}

}  // namespace
}  // namespace hostir
