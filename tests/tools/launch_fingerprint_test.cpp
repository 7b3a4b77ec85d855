// What the ranks of an mpirun job compare before they start: every option
// of `run`, taken from the parsed command line itself, so that an option
// added later is compared without anyone listing it. Each option is added
// to a command line in turn and must change what the ranks compare.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tools/hostir/command_line.h"
#include "tools/hostir/launch_agreement.h"

namespace hostir::tool {
namespace {

// A value other than the default for each option of `run` ("" for a flag).
// A new option without a sample fails OptionsChangeTheFingerprintOneByOne:
// give it one here.
const std::map<std::string, std::string>& samples() {
  static const std::map<std::string, std::string> kSamples = {
      {"--set", "M=8"},
      {"--ranks", "3"},
      {"--streams", "7"},
      {"--passes", "assign-streams"},
      {"--remarks", ""},
      {"--machine", "h200-nvlink"},
      {"--min-gain", "0"},
      {"--backend", "cpu"},
      {"--communicator", "copy-engine"},
      {"--input", "x=x.npy"},
      {"--output", "y=y.npy"},
      {"--seed", "9"},
      {"--fill-missing", ""},
      {"--check", ""},
      {"--race-check", ""},
      {"--warmup", "2"},
      {"--repeat", "3"},
      {"--trace", "t.json"},
      {"--trace-limit", "5"},
      {"--cores-per-rank", "2"},
      {"--comm-timeout", "7"},
      {"--unchecked", ""},
      {"--graph", ""},
      {"--inject-fault", "stop:1:setup"},
      {"--inject-delays", "10"},
  };
  return kSamples;
}

std::vector<GivenOption> parse(std::vector<std::string> args) {
  CommandLine cli;
  args.insert(args.begin(), {"hostir", "run", "p.hir"});
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  cli.app.parse(static_cast<int>(argv.size()), argv.data());
  return cli.run.commandLine;
}

std::map<std::string, uint64_t> compared(const std::vector<GivenOption>& options) {
  std::map<std::string, uint64_t> values;
  for (const LaunchPart& part : commandLineParts(options)) values[part.name] = part.value;
  return values;
}

TEST(LaunchFingerprint, OptionsChangeTheFingerprintOneByOne) {
  const std::vector<GivenOption> base = parse({});
  ASSERT_GE(base.size(), samples().size());
  const auto baseParts = compared(base);
  for (const GivenOption& option : base) {
    SCOPED_TRACE(option.name);
    if (option.name == "file") continue;
    auto sample = samples().find(option.name);
    ASSERT_NE(sample, samples().end()) << "run's option " << option.name << " has no sample value in this test";
    std::vector<std::string> args = {option.name};
    if (!sample->second.empty()) args.push_back(sample->second);
    const auto parts = compared(parse(args));
    if (const char* instead = comparedByMeaning(option.name)) {
      // Compared by what it stands for (the run command does that): not as written.
      EXPECT_EQ(parts, baseParts) << option.name << " is compared as: " << instead;
      continue;
    }
    ASSERT_TRUE(parts.count(option.name)) << option.name << " is not compared";
    for (const auto& [name, value] : parts)
      EXPECT_EQ(value != baseParts.at(name), name == option.name) << name << " after adding " << option.name;
  }
}

// An option given with its default value is the same run as the option left out.
TEST(LaunchFingerprint, AnOptionGivenItsDefaultIsTheSameRun) {
  EXPECT_EQ(compared(parse({"--streams", "4"})), compared(parse({})));
  EXPECT_EQ(compared(parse({"--min-gain", "0.05"})), compared(parse({})));
  EXPECT_NE(compared(parse({"--streams", "8"})), compared(parse({})));
}

TEST(LaunchFingerprint, IntegerOptionsShowTheirValues) {
  for (const LaunchPart& part : commandLineParts(parse({"--streams", "8"})))
    if (part.name == "--streams") {
      EXPECT_TRUE(part.numeric && part.value == 8);
    }
}

}  // namespace
}  // namespace hostir::tool
