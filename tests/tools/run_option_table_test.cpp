// The run option table (hostir/run_option_table.h) is the one place a run
// option is stated: every row is a flag of `hostir run` that sets its field,
// with the row's bounds, and the API refuses a field outside them in the
// same words.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <hostir/hostir.h>

#include <limits>
#include <string>
#include <vector>

#include "api/error_of.h"
#include "test_files.h"
#include "tools/hostir/command_line.h"

namespace hostir::tool {
namespace {

using api::RunOptionRow;
using api::RunOptionType;
using hostir::testing::testProgramText;

// Parses `hostir run p.hir ARGS...`; throws CLI11's errors.
api::RunOptions parsed(std::vector<std::string> args) {
  CommandLine cli;
  args.insert(args.begin(), {"hostir", "run", "p.hir"});
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  cli.app.parse(static_cast<int>(argv.size()), argv.data());
  return cli.run.api;
}

// A value of the row other than its default, and one outside it ("" when
// the row has none: flags and free text).
std::pair<std::string, std::string> sampleValues(const RunOptionRow& row) {
  const std::string fallback = api::runOptionText(api::RunOptions{}, row);
  switch (row.type) {
    case RunOptionType::Integer: {
      const uint64_t value = row.maxInteger == std::numeric_limits<uint64_t>::max() ? 7 : row.maxInteger;
      const std::string outside = row.minInteger > 0 ? std::to_string(row.minInteger - 1) : "-1";
      return {std::to_string(value) == fallback ? std::to_string(row.minInteger) : std::to_string(value), outside};
    }
    case RunOptionType::Number: return {fmt::format("{:g}", row.maxNumber), fmt::format("{:g}", row.maxNumber * 2 + 1)};
    case RunOptionType::Path: return {"x.json", ""};
    case RunOptionType::Choice: return {row.choices.back(), "no-such-choice"};
    case RunOptionType::Flag:
    case RunOptionType::Text: return {"", ""};
  }
  return {"", ""};
}

TEST(RunOptionTable, EveryRowIsAFlagOfRunThatSetsItsField) {
  ASSERT_FALSE(api::runOptionTable().empty());
  for (const RunOptionRow& row : api::runOptionTable()) {
    SCOPED_TRACE(row.name);
    const std::string value = sampleValues(row).first;
    std::vector<std::string> args = {row.flag()};
    if (row.type != RunOptionType::Flag) args.push_back(value);
    const api::RunOptions options = parsed(args);
    const std::string expected = row.type == RunOptionType::Flag ? "true" : value;
    EXPECT_EQ(api::runOptionText(options, row), expected);
    // Only that field moved.
    for (const RunOptionRow& other : api::runOptionTable()) {
      if (other.name == row.name) continue;
      EXPECT_EQ(api::runOptionText(options, other), api::runOptionText(api::RunOptions{}, other)) << other.name;
    }
  }
}

TEST(RunOptionTable, ValuesOutsideARowAreRefusedByTheCommandLineAndTheApi) {
  for (const RunOptionRow& row : api::runOptionTable()) {
    SCOPED_TRACE(row.name);
    // A named copy: a lambda cannot capture a structured binding (clang 14).
    const std::string outside = sampleValues(row).second;
    if (row.type == RunOptionType::Flag || row.type == RunOptionType::Text) continue;
    EXPECT_THROW(parsed({row.flag(), outside}), CLI::ValidationError);
    api::RunOptions options;
    api::Error error = api::testing::errorOf([&] { api::setRunOption(options, row, outside); });
    EXPECT_EQ(error.kind(), api::ErrorKind::Usage);
    EXPECT_EQ(error.message(), row.name + ": must be " + row.wanted() + ", got '" + outside + "'");
  }
}

TEST(RunOptionTable, TheApiChecksEveryFieldAgainstItsRow) {
  api::Program p = api::Program::fromText(testProgramText("tools/programs/copy_into_allocated_output.hir"), "p.hir");
  api::RunOptions options;
  options.streams = 0;
  EXPECT_EQ(api::testing::errorOf([&] { api::run(p, {}, {}, options); }).message(),
            "streams: must be an integer from 1 to 1024, got '0'");
  options = {};
  options.commTimeoutSeconds = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(
      api::testing::errorOf([&] { api::run(p, {}, {}, options); }).message().find("comm_timeout: must be a number"),
      std::string::npos);
  options = {};
  options.coresPerRank = -1;
  EXPECT_EQ(api::testing::errorOf([&] { api::run(p, {}, {}, options); }).message(),
            "cores_per_rank: must be an integer from 0 to 1024, got '-1'");
}

TEST(RunOptionTable, NamesAreFoundAsKeywordsAndAsFlags) {
  ASSERT_NE(api::findRunOption("comm_timeout"), nullptr);
  EXPECT_EQ(api::findRunOption("--comm-timeout"), api::findRunOption("comm_timeout"));
  EXPECT_EQ(api::findRunOption("comm-timeout"), nullptr);
  EXPECT_EQ(api::findRunOption("comm_timeout")->flag(), "--comm-timeout");
}

}  // namespace
}  // namespace hostir::tool
