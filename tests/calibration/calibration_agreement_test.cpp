// The ranks of a calibration issue the same runs, however differently
// each rank's own runs are timed: two made-up ranks on two threads, whose
// agreement is a broadcast of rank 0's value, as under MPI.
#include <gtest/gtest.h>

#include <barrier>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "calibration/calibration.h"

namespace hostir {
namespace {

// Rank 0's value on both ranks: what MPI's broadcast gives the calibration.
class TwoRankBroadcast {
 public:
  double fromRankZero(int rank, double mine) {
    if (rank == 0) value_ = mine;
    meet_.arrive_and_wait();
    const double agreed = value_;
    meet_.arrive_and_wait();  // rank 0 writes the next value only after both have read this one
    return agreed;
  }

 private:
  std::barrier<> meet_{2};
  double value_ = 0;
};

struct IssuedRun {
  std::string program;
  std::map<std::string, int64_t> params;
  int warmup = 0, repeat = 0;
  bool operator==(const IssuedRun&) const = default;
};

int64_t loopOf(const std::map<std::string, int64_t>& params) {
  auto r = params.find("R");
  return r == params.end() ? 1 : r->second;
}

// A rank whose GEMMs run `slowdown` times as long as rank 0's: each rank,
// left to size its next GEMM runs by its own rates, would loop another
// number of times, and at a size class's edge run another count of runs,
// whose barriers would then pair with another program's on the other rank.
std::vector<IssuedRun> calibrateAsRank(int rank, double slowdown, TwoRankBroadcast& broadcast, std::string& error) {
  CalibrationRequest request;
  request.world = 2;
  request.quick = true;
  request.agree = [&](double mine) { return broadcast.fromRankZero(rank, mine); };
  std::vector<IssuedRun> issued;
  TeamRunner runTeam = [&](const RunRequest& run) -> Result<RunResult> {
    issued.push_back({run.program.name, run.params, run.warmup, run.repeat});
    const double perIteration = run.program.name == "gemm" ? 1e-4 * (rank == 0 ? 1 : slowdown) : 1e-6;
    RunResult result;
    for (int i = 0; i < run.repeat; ++i)
      result.runMillis.push_back((1e-3 + perIteration * static_cast<double>(loopOf(run.params))) * 1e3);
    return result;
  };
  Result<Calibration> calibration = calibrate(request, runTeam);
  if (!calibration) error = calibration.error().message;
  return issued;
}

TEST(CalibrationAgreement, RanksTimedDifferentlyIssueTheSameRuns) {
  for (double slowdown : {1.37, 3.1}) {
    TwoRankBroadcast broadcast;
    std::string errors[2];
    std::vector<IssuedRun> issued[2];
    std::thread other([&] { issued[1] = calibrateAsRank(1, slowdown, broadcast, errors[1]); });
    issued[0] = calibrateAsRank(0, slowdown, broadcast, errors[0]);
    other.join();
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
    ASSERT_EQ(issued[0].size(), issued[1].size()) << "slowdown " << slowdown;
    int gemms = 0;
    for (size_t i = 0; i < issued[0].size(); ++i) {
      gemms += issued[0][i].program == "gemm";
      EXPECT_TRUE(issued[0][i] == issued[1][i])
          << "slowdown " << slowdown << ", run " << i << ": rank 0 issues '" << issued[0][i].program
          << "' R=" << loopOf(issued[0][i].params) << " " << issued[0][i].warmup << "+" << issued[0][i].repeat
          << ", rank 1 '" << issued[1][i].program << "' R=" << loopOf(issued[1][i].params) << " " << issued[1][i].warmup
          << "+" << issued[1][i].repeat;
    }
    EXPECT_GT(gemms, 10) << "the GEMM grids, sized by measured rates, were calibrated";
  }
}

}  // namespace
}  // namespace hostir
