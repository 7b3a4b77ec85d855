// api::calibrate through the public API: a quick calibration gives a
// profile that simulate() reads, and bad options are usage errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"

namespace {

using hostir::api::ErrorKind;
using hostir::api::testing::errorOf;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";

TEST(ApiCalibration, AQuickProfileIsOneSimulateReads) {
  hostir::api::CalibrateOptions options;
  options.ranks = 1;
  options.quick = true;
  options.force = true;  // the test machine may be busy: this test is about the profile
  std::vector<std::string> progress;
  options.onProgress = [&progress](const std::string& what) { progress.push_back(what); };
  hostir::api::Calibration c = hostir::api::calibrate(options);
  EXPECT_EQ(c.profileName.rfind("calibrated on ", 0), 0u) << c.profileName;
  EXPECT_EQ(c.summary.rfind("gemm f32 ", 0), 0u) << c.summary;
  EXPECT_NE(c.summary.find("no communication costs (one rank)"), std::string::npos) << c.summary;
  EXPECT_FALSE(progress.empty());
  EXPECT_GT(c.seconds, 0);
  // A noisy figure is beyond its limit: microseconds for a figure of a few, else relative.
  for (const hostir::api::NoisyFigure& figure : c.noisy) {
    if (figure.spreadMicros > 0)
      EXPECT_GT(figure.spreadMicros, hostir::api::kCalibrationNoisyMicros) << figure.name;
    else
      EXPECT_GT(figure.spread, hostir::api::kCalibrationNoisySpread) << figure.name;
  }

  const auto path = std::filesystem::temp_directory_path() / "api_calibration_test_profile.json";
  std::ofstream(path) << c.profileJson;
  hostir::api::SimulateOptions simulate;
  simulate.params = {{"M", 64}, {"K", 64}, {"N", 64}, {"S", 2}};
  hostir::api::Prediction p =
      hostir::api::simulate(hostir::api::Program::fromFile(kExamples + "row_parallel_linear.hir"), path, simulate);
  std::filesystem::remove(path);
  EXPECT_GT(p.medianMs, 0);
  EXPECT_GT(p.computeMs, 0);
}

TEST(ApiCalibration, BadOptionsAreUsageErrors) {
  auto kindOf = [](hostir::api::CalibrateOptions options) {
    return errorOf([&] { hostir::api::calibrate(options); }).kind();
  };
  hostir::api::CalibrateOptions noRanks;
  noRanks.ranks = 0;
  EXPECT_EQ(kindOf(noRanks), ErrorKind::Usage);
  hostir::api::CalibrateOptions tpu;
  tpu.backend = "tpu";
  EXPECT_EQ(kindOf(tpu), ErrorKind::Usage);
  hostir::api::CalibrateOptions nccl;
  nccl.communicator = "nccl";  // on the CPU backend
  EXPECT_EQ(kindOf(nccl), ErrorKind::Usage);
  hostir::api::CalibrateOptions cores;
  cores.coresPerRank = -1;
  EXPECT_EQ(kindOf(cores), ErrorKind::Usage);
}

}  // namespace
