// Golden tests in the spirit of MLIR's FileCheck tests: tests/golden/X.hir is
// an input, and each X.SUFFIX.hir beside it is the exact expected output of
// `hostir opt X.hir --passes SUFFIX` (SUFFIX "printed": no passes, the printer's form), with
// the default parameters, one rank and 4 worker streams. An expected output
// whose input is one of examples/ (X.hir there) has no copy of it here.
// HOSTIR_UPDATE_GOLDEN=1 rewrites the expected files from the current output.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ir/verifier.h"
#include "passes/pass_manager.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

using testing::hirFiles;
using testing::readFile;
using testing::sourceDir;

struct GoldenCase {
  std::filesystem::path input;
  std::filesystem::path expected;
  std::string pipeline;  // empty: no passes
};

std::vector<GoldenCase> goldenCases() {
  std::vector<GoldenCase> cases;
  for (const auto& path : hirFiles(sourceDir() / "tests" / "golden")) {
    std::string stem = path.stem().string();
    size_t dot = stem.find('.');
    if (dot == std::string::npos) continue;  // an input
    std::string suffix = stem.substr(dot + 1);
    std::filesystem::path input = path.parent_path() / (stem.substr(0, dot) + ".hir");
    if (!std::filesystem::exists(input)) input = sourceDir() / "examples" / input.filename();
    GoldenCase c{input, path, suffix == "printed" ? "" : suffix};
    cases.push_back(c);
  }
  return cases;
}

// As `hostir opt X.hir --passes PIPELINE` runs it: one rank, 4 worker
// streams, every pass's output verified and race-checked.
std::string runPipeline(const std::string& text, const std::string& pipeline) {
  Program program = testing::parseOrDie(text);
  PassManager pm;
  if (!pipeline.empty()) {
    auto error = pm.addPipeline(pipeline);
    EXPECT_FALSE(error.has_value()) << error->message;
  }
  auto error = pm.run(program, testing::raceCheckedContext(program));
  EXPECT_FALSE(error.has_value()) << error->message;
  return printProgram(program);
}

TEST(Golden, EveryInputHasAnExpectedOutput) {
  auto cases = goldenCases();
  EXPECT_GE(cases.size(), 7u);
  for (const auto& path : hirFiles(sourceDir() / "tests" / "golden")) {
    if (path.stem().string().find('.') != std::string::npos) continue;
    bool covered = false;
    for (const auto& c : cases) covered |= c.input == path;
    EXPECT_TRUE(covered) << path << " has no expected output beside it";
  }
}

TEST(Golden, PassOutputsMatchExactly) {
  bool update = std::getenv("HOSTIR_UPDATE_GOLDEN") != nullptr;
  for (const GoldenCase& c : goldenCases()) {
    SCOPED_TRACE(c.expected.string());
    ASSERT_TRUE(std::filesystem::exists(c.input)) << "no input for " << c.expected;
    std::string actual = runPipeline(readFile(c.input), c.pipeline);
    if (update) {
      std::ofstream(c.expected, std::ios::binary) << actual;
      continue;
    }
    EXPECT_EQ(actual, readFile(c.expected));
  }
}

TEST(Golden, ExpectedOutputsAreCanonicalAndVerify) {
  for (const GoldenCase& c : goldenCases()) {
    SCOPED_TRACE(c.expected.string());
    std::string text = readFile(c.expected);
    Program p = testing::parseOrDie(text, c.expected.string());
    EXPECT_EQ(printProgram(p), text) << "expected outputs must be printed canonically";
    for (int64_t world : {1, 2, 4}) {
      auto error = verifyProgram(p, Bindings{{}, world});
      EXPECT_FALSE(error.has_value()) << "world " << world << ": " << error->message;
    }
  }
}

}  // namespace
}  // namespace hostir
