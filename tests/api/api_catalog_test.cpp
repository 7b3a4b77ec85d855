// What a build offers (<hostir/catalog.h>), checked by using each answer:
// every pass listed applies, every shipped profile simulates, every backend
// named is one `backend` accepts.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "error_of.h"
#include "hostir/hostir.h"

namespace {

using hostir::api::ErrorKind;
using hostir::api::Program;
using hostir::api::testing::errorOf;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";

TEST(ApiCatalog, EveryPassListedApplies) {
  const Program program = Program::fromFile(kExamples + "row_parallel_linear.hir");
  const std::vector<hostir::api::PassDescription> passes = hostir::api::passes();
  ASSERT_FALSE(passes.empty());
  std::vector<std::string> names;
  for (const hostir::api::PassDescription& pass : passes) {
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
    names.push_back(pass.name);
    hostir::api::PassOptions options;
    options.ranks = 2;
    options.machine = "h100-nvlink";  // for the passes that consult the cost model
    EXPECT_NO_THROW(hostir::api::applyPasses(program, {pass.name}, options)) << pass.name;
  }
  EXPECT_EQ(names, hostir::api::passNames());
  EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(program, {"no-such-pass"}); }).kind(), ErrorKind::Usage);
}

TEST(ApiCatalog, APipelineIsItsListOfNames) {
  EXPECT_EQ(hostir::api::splitPipeline("assign-streams"), std::vector<std::string>{"assign-streams"});
  EXPECT_EQ(hostir::api::splitPipeline("a,,b"), (std::vector<std::string>{"a", "", "b"}));
}

TEST(ApiCatalog, EveryShippedProfileSimulates) {
  const Program program = Program::fromFile(kExamples + "row_parallel_linear.hir");
  const std::vector<std::string> machines = hostir::api::machineProfiles();
  ASSERT_FALSE(machines.empty());
  for (const std::string& machine : machines) {
    hostir::api::SimulateOptions options;
    options.ranks = 2;
    EXPECT_GT(hostir::api::simulate(program, machine, options).medianMs, 0) << machine;
  }
  EXPECT_EQ(errorOf([&] { hostir::api::simulate(program, "no-such-machine"); }).kind(), ErrorKind::Program);
}

TEST(ApiCatalog, EveryBackendNamedIsAccepted) {
  const std::vector<hostir::api::BackendDescription> backends = hostir::api::backends();
  auto cpu = std::find_if(backends.begin(), backends.end(), [](const auto& b) { return b.name == "cpu"; });
  ASSERT_NE(cpu, backends.end());
  EXPECT_TRUE(cpu->built);
  EXPECT_FALSE(cpu->unusable);
  EXPECT_EQ(cpu, backends.end() - 1) << "auto tries the CPU, which can always run, last";
  std::vector<std::string> names = {"auto"};
  for (const auto& backend : backends) {
    names.push_back(backend.name);
    EXPECT_EQ(backend.built, backend.builtWithout.empty()) << backend.name;
    // A backend that is built and usable here makes a runtime; one that is not is refused by name.
    if (backend.built && !backend.unusable) {
      EXPECT_EQ(hostir::api::Runtime(backend.name).backend(), backend.name);
    }
  }
  EXPECT_EQ(names, hostir::api::backendNames());
}

TEST(ApiCatalog, ClosestNameIsTheTypoRule) {
  const std::vector<std::string> names = hostir::api::passNames();
  EXPECT_EQ(hostir::api::closestName("asign-streams", names), "assign-streams");
  EXPECT_EQ(hostir::api::closestName("zzzzzzzz", names), std::nullopt);
}

TEST(ApiCatalog, LimitsAreTheApisBounds) {
  const Program program = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.repeat = hostir::kMaxRuns + 1;
  EXPECT_EQ(errorOf([&] { hostir::api::run(program, {}, {}, options); }).kind(), ErrorKind::Usage);
  options.repeat = 1;
  options.ranks = hostir::kMaxRanks + 1;
  EXPECT_EQ(errorOf([&] { hostir::api::run(program, {}, {}, options); }).kind(), ErrorKind::Usage);
}

}  // namespace
