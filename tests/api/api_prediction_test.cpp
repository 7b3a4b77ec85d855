// What simulate() returns beyond the contract's five figures, and the pass
// options the command line's `opt` uses, checked against what each claims:
// the range brackets the median, the busy times add up, the trace file
// holds the ranks it says, a remark arrives as the passes make it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <string>
#include <tuple>

#include "error_of.h"
#include "hostir/hostir.h"

namespace {

using hostir::api::ErrorKind;
using hostir::api::Program;
using hostir::api::testing::errorOf;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";

hostir::api::SimulateOptions onRanks(int64_t ranks, std::vector<std::string> passes = {}) {
  hostir::api::SimulateOptions options;
  options.ranks = ranks;
  options.passes = std::move(passes);
  return options;
}

hostir::api::PassOptions passesOnRanks(int64_t ranks) {
  hostir::api::PassOptions options;
  options.ranks = ranks;
  return options;
}

// How a trace names rank `rank`'s process.
std::string rankProcess(int rank) { return "\"args\":{\"name\":\"rank " + std::to_string(rank) + "\"}"; }

TEST(ApiPrediction, ACalibratedProfileGivesARangeAroundTheMedian) {
  const Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  // h100-shared records the spread of each of its figures; h100-nvlink does not.
  const hostir::api::Prediction ranged = hostir::api::simulate(p, "h100-shared", onRanks(2));
  ASSERT_TRUE(ranged.fastMs && ranged.slowMs);
  EXPECT_LE(*ranged.fastMs, ranged.medianMs);
  EXPECT_GE(*ranged.slowMs, ranged.medianMs);
  EXPECT_LT(*ranged.fastMs, *ranged.slowMs);
  const hostir::api::Prediction plain = hostir::api::simulate(p, "h100-nvlink", onRanks(2));
  EXPECT_FALSE(plain.fastMs || plain.slowMs);
}

TEST(ApiPrediction, BusyTimesFitInTheRun) {
  const Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  const hostir::api::Prediction serial = hostir::api::simulate(p, "h100-nvlink", onRanks(2));
  // Without passes every operation is on the main stream.
  ASSERT_GE(serial.streamBusyMs.size(), 1u);
  EXPECT_GT(serial.streamBusyMs[0], 0);
  EXPECT_LE(serial.streamBusyMs[0], serial.medianMs);
  for (size_t s = 1; s < serial.streamBusyMs.size(); ++s) EXPECT_EQ(serial.streamBusyMs[s], 0) << s;
  EXPECT_GT(serial.hostMs, 0);
  EXPECT_LE(serial.hostMs, serial.medianMs);
  const hostir::api::Prediction assigned = hostir::api::simulate(p, "h100-nvlink", onRanks(2, {"assign-streams"}));
  const double workerBusy = std::accumulate(assigned.streamBusyMs.begin() + 1, assigned.streamBusyMs.end(), 0.0);
  EXPECT_GT(workerBusy, 0) << "assign-streams moves the loop's work to the worker streams";
  EXPECT_EQ(assigned.streamBusyMs[0], 0);
  for (double busy : assigned.streamBusyMs) EXPECT_LE(busy, assigned.medianMs + 1e-9);
}

TEST(ApiPrediction, OneRankStandsForTheTeamOnlyWhenNoneIsNamed) {
  EXPECT_TRUE(hostir::api::simulate(Program::fromFile(kExamples + "row_parallel_linear.hir"), "h100-nvlink", onRanks(4))
                  .symmetric);
  EXPECT_FALSE(hostir::api::simulate(Program::fromFile(kExamples + "ring_bidirectional.hir"), "h100-nvlink", onRanks(4))
                   .symmetric);
}

TEST(ApiPrediction, TheTraceFileDrawsTheSimulatedRanks) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hostir_api_prediction_trace";
  std::filesystem::create_directories(dir);
  // The ring's blocks must divide over 70 ranks.
  const hostir::api::Params divisible = {{"M", 280}, {"N", 140}};
  for (auto [file, ranks, drawn] : {std::tuple{"row_parallel_linear.hir", 4, 1},
                                    {"ring_bidirectional.hir", 4, 4},
                                    {"ring_bidirectional.hir", 70, 64}}) {
    hostir::api::SimulateOptions options = onRanks(ranks);
    if (ranks == 70) options.params = divisible;
    options.tracePath = (dir / "trace.json").string();
    const hostir::api::Prediction p =
        hostir::api::simulate(Program::fromFile(kExamples + file), "h100-nvlink", options);
    EXPECT_EQ(p.tracedRanks, drawn) << file << " on " << ranks;
    ASSERT_EQ(static_cast<uint64_t>(std::filesystem::file_size(options.tracePath)), p.traceBytes);
    std::ifstream in(options.tracePath);
    std::stringstream text;
    text << in.rdbuf();
    // Each rank is a process of its own in the Chrome trace.
    EXPECT_NE(text.str().find(rankProcess(drawn - 1)), std::string::npos) << file << " on " << ranks;
    EXPECT_EQ(text.str().find(rankProcess(drawn)), std::string::npos) << file << " on " << ranks;
  }
  std::filesystem::remove_all(dir);
}

TEST(ApiPrediction, RemarksArriveAsThePassesMakeThem) {
  const Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::vector<std::string> seen;
  hostir::api::SimulateOptions options = onRanks(2, {"assign-streams"});
  options.onRemark = [&](const std::string& remark) { seen.push_back(remark); };
  hostir::api::simulate(p, "h100-nvlink", options);
  std::vector<std::string> collected;
  hostir::api::PassOptions passOptions = passesOnRanks(2);
  std::vector<std::string> streamed;
  passOptions.onRemark = [&](const std::string& remark) { streamed.push_back(remark); };
  hostir::api::applyPasses(p, {"assign-streams"}, passOptions, &collected);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen, collected);
  EXPECT_EQ(streamed, collected);
  EXPECT_NE(seen.front().find("remark: assign-streams:"), std::string::npos) << seen.front();
}

TEST(ApiPrediction, IrDumpsFollowThePassesNamed) {
  const Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::ostringstream dump;
  hostir::api::PassOptions options = passesOnRanks(2);
  options.irDump = &dump;
  options.printIrAfter = {"canonicalize"};
  const Program out = hostir::api::applyPasses(p, {"assign-streams", "canonicalize"}, options);
  EXPECT_NE(dump.str().find("After canonicalize"), std::string::npos) << dump.str();
  EXPECT_NE(dump.str().find("program row_parallel_linear("), std::string::npos) << dump.str();
  EXPECT_EQ(dump.str().find("After assign-streams"), std::string::npos) << "only the pass named is dumped";
  options.printIrAfter = {"no-such-pass"};
  EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(p, {"assign-streams"}, options); }).kind(), ErrorKind::Usage);
}

TEST(ApiPrediction, AValueForAnUnknownParameterIsTheCallersMistake) {
  const Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  EXPECT_EQ(p.paramNames(), (std::vector<std::string>{"M", "K", "N", "S"}));
  for (auto call : std::vector<std::function<void()>>{
           [&] {
             hostir::api::CheckOptions options;
             options.params = {{"Q", 1}};
             hostir::api::check(p, options);
           },
           [&] {
             hostir::api::PassOptions options;
             options.params = {{"Q", 1}};
             hostir::api::applyPasses(p, {}, options);
           },
           [&] {
             hostir::api::SimulateOptions options;
             options.params = {{"Q", 1}};
             hostir::api::simulate(p, "h100-nvlink", options);
           },
       }) {
    const hostir::api::Error error = errorOf(call);
    EXPECT_EQ(error.kind(), ErrorKind::Usage);
    EXPECT_NE(error.message().find("has no parameter 'Q' (its parameters: M, K, N, S)"), std::string::npos)
        << error.message();
  }
}

TEST(ApiPrediction, ABadProfileIsOneErrorBeforeAnySimulation) {
  EXPECT_EQ(hostir::api::Machine::load("h100-nvlink").name(), "h100-nvlink");
  EXPECT_EQ(errorOf([] { hostir::api::Machine::load("no-such-machine"); }).kind(), ErrorKind::Program);
  EXPECT_EQ(errorOf([] { hostir::api::Machine::load(""); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([] { hostir::api::Machine m(nullptr); }).kind(), ErrorKind::Usage);
}

TEST(ApiPrediction, AMachineIsReadOnceAndPredictsAsItsFileDoes) {
  const auto p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  const std::string path = ::testing::TempDir() + "hostir_machine_read_once.json";
  std::filesystem::copy_file(std::string(HOSTIR_SOURCE_DIR) + "/profiles/h100-nvlink.json", path,
                             std::filesystem::copy_options::overwrite_existing);
  hostir::api::SimulateOptions options;
  options.ranks = 2;
  options.passes = {"assign-streams"};
  const hostir::api::Prediction fromPath = hostir::api::simulate(p, path, options);
  const hostir::api::Machine machine = hostir::api::Machine::load(path);
  std::filesystem::remove(path);  // what was read stays: later predictions need no file
  for (int call = 0; call < 2; ++call) {
    const hostir::api::Prediction fromMachine = hostir::api::simulate(p, machine, options);
    EXPECT_EQ(fromMachine.medianMs, fromPath.medianMs);
    EXPECT_EQ(fromMachine.machineName, fromPath.machineName);
  }
}

}  // namespace
