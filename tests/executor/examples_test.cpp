// Every program of examples/ run in-process for team sizes 1 to 4, before
// and after assign-streams, on stream pools of 1, 2 and 4, against the
// formula its header comment states, computed independently in f64.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "api/npy.h"
#include "api/output_comparison.h"
#include "cli_runner.h"
#include "harness.h"

namespace hostir::reftest {
namespace {

using ::testing::HasSubstr;

struct ExampleCase {
  std::string label;    // test name suffix
  std::string program;  // examples/<program>.hir
  Params overrides;
  std::set<int64_t> worlds;  // the team sizes whose shapes divide (others must be rejected)
  bool loops = true;         // has a loop assign-streams rewrites (straight-line programs have none)
};

std::ostream& operator<<(std::ostream& os, const ExampleCase& c) { return os << c.label; }

const std::vector<ExampleCase>& cases() {
  static const std::vector<ExampleCase> all = {
      // Defaults: K = 512 does not split over 3 ranks.
      {"row_parallel_linear_default", "row_parallel_linear", {}, {1, 2, 4}},
      // S does not divide M: chunks 4,4,4,4,2.
      {"row_parallel_linear_short_last_chunk",
       "row_parallel_linear",
       {{"M", 18}, {"K", 12}, {"N", 5}, {"S", 5}},
       {1, 2, 3, 4}},
      // chunk 2, seven chunks over 12 rows: the last one is empty.
      {"row_parallel_linear_empty_last_chunk",
       "row_parallel_linear",
       {{"M", 12}, {"K", 24}, {"N", 8}, {"S", 7}},
       {1, 2, 3, 4}},
      {"row_parallel_linear_more_chunks_than_rows",
       "row_parallel_linear",
       {{"M", 3}, {"K", 12}, {"N", 4}, {"S", 4}},
       {1, 2, 3, 4}},
      {"all_gather_default", "all_gather", {}, {1, 2, 3, 4}},
      {"all_gather_short_last_chunk", "all_gather", {{"M", 10}, {"K", 12}, {"N", 12}, {"S", 3}}, {1, 2, 3, 4}},
      {"all_gather_empty_last_chunk", "all_gather", {{"M", 5}, {"K", 12}, {"N", 12}, {"S", 4}}, {1, 2, 3, 4}},
      // N = 10 splits over 1 and 2 ranks only.
      {"all_gather_n10", "all_gather", {{"M", 8}, {"K", 20}, {"N", 10}, {"S", 2}}, {1, 2}},
      {"broadcast_default", "broadcast", {}, {1, 2, 3, 4}},
      {"broadcast_small", "broadcast", {{"M", 12}, {"K", 7}, {"N", 5}}, {1, 2, 3, 4}},
      {"events_default", "events", {}, {1, 2, 3, 4}},
      {"events_short_last_chunk", "events", {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 3}}, {1, 2, 3, 4}},
      {"events_empty_last_chunk", "events", {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 6}}, {1, 2, 3, 4}},
      // Its loop sets streams itself: assign-streams leaves it as it is.
      {"pipeline_handles_default", "pipeline_handles", {}, {1, 2, 3, 4}, false},
      {"pipeline_handles_short_last_chunk",
       "pipeline_handles",
       {{"M", 10}, {"K", 12}, {"N", 12}, {"S", 3}},
       {1, 2, 3, 4},
       false},
      {"pipeline_handles_one_chunk",
       "pipeline_handles",
       {{"M", 8}, {"K", 12}, {"N", 12}, {"S", 1}},
       {1, 2, 3, 4},
       false},
      {"pipeline_with_blocks_default", "pipeline_with_blocks", {}, {1, 2, 3, 4}, false},
      {"pipeline_with_blocks_short_last_chunk",
       "pipeline_with_blocks",
       {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 3}},
       {1, 2, 3, 4},
       false},
      {"reduce_scatter_default", "reduce_scatter", {}, {1, 2, 3, 4}},
      {"reduce_scatter_short_last_chunk", "reduce_scatter", {{"M", 7}, {"K", 12}, {"N", 12}, {"S", 3}}, {1, 2, 3, 4}},
      {"reduce_scatter_empty_last_chunks", "reduce_scatter", {{"M", 7}, {"K", 12}, {"N", 12}, {"S", 8}}, {1, 2, 3, 4}},
      // Straight-line code on the main stream: assign-streams leaves it as it is.
      {"parallel_block_default", "parallel_block", {}, {1, 2, 3, 4}, false},
      {"parallel_block_small", "parallel_block", {{"B", 5}, {"H", 6}, {"A", 12}, {"F", 24}}, {1, 2, 3, 4}, false},
      // A = 8 does not split over 3 ranks.
      {"parallel_block_a8", "parallel_block", {{"B", 4}, {"H", 6}, {"A", 8}, {"F", 12}}, {1, 2, 4}, false},
      {"sequence_parallel_mlp_default", "sequence_parallel_mlp", {}, {1, 2, 3, 4}},
      // 24 / world rows in 5 chunks: short last chunks (and an empty one for 12 rows).
      {"sequence_parallel_mlp_short_last_chunk",
       "sequence_parallel_mlp",
       {{"T", 24}, {"H", 6}, {"F", 12}, {"S", 5}},
       {1, 2, 3, 4}},
      {"sequence_parallel_mlp_empty_last_chunks",
       "sequence_parallel_mlp",
       {{"T", 24}, {"H", 6}, {"F", 12}, {"S", 7}},
       {1, 2, 3, 4}},
      // T = 20 does not split over 3 ranks.
      {"sequence_parallel_mlp_t20", "sequence_parallel_mlp", {{"T", 20}, {"H", 4}, {"F", 8}, {"S", 2}}, {1, 2, 4}},
      // Rings of sendrecv steps. Their loop is rewritten only where it has no
      // second step (1 and 2 ranks); the overlapped forms choose their own
      // streams. M = 12 over 4 ranks gives blocks of 3 rows: uneven halves.
      {"ring_all_gather_linear_default", "ring_all_gather_linear", {}, {1, 2, 3, 4}},
      {"ring_all_gather_linear_small", "ring_all_gather_linear", {{"M", 12}, {"K", 5}, {"N", 8}}, {1, 2, 4}},
      {"ring_all_gather_linear_overlapped_default", "ring_all_gather_linear_overlapped", {}, {1, 2, 3, 4}, false},
      {"ring_all_gather_linear_overlapped_small",
       "ring_all_gather_linear_overlapped",
       {{"M", 12}, {"K", 5}, {"N", 8}},
       {1, 2, 4},
       false},
      {"ring_bidirectional_default", "ring_bidirectional", {}, {1, 2, 3, 4}},
      {"ring_bidirectional_small", "ring_bidirectional", {{"M", 12}, {"K", 5}, {"N", 8}}, {1, 2, 4}},
      {"ring_bidirectional_overlapped_default", "ring_bidirectional_overlapped", {}, {1, 2, 3, 4}, false},
      {"ring_bidirectional_overlapped_small",
       "ring_bidirectional_overlapped",
       {{"M", 12}, {"K", 5}, {"N", 8}},
       {1, 2, 4},
       false},
      {"ring_reduce_scatter_default", "ring_reduce_scatter", {}, {1, 2, 3, 4}},
      {"ring_reduce_scatter_small", "ring_reduce_scatter", {{"M", 5}, {"K", 12}, {"N", 8}}, {1, 2, 4}},
      {"ring_reduce_scatter_overlapped_default", "ring_reduce_scatter_overlapped", {}, {1, 2, 3, 4}, false},
      {"ring_reduce_scatter_overlapped_small",
       "ring_reduce_scatter_overlapped",
       {{"M", 5}, {"K", 12}, {"N", 8}},
       {1, 2, 4},
       false},
  };
  return all;
}

class Examples : public ::testing::TestWithParam<ExampleCase> {};

TEST(ExampleFiles, EveryExampleHasAReferenceAndACase) {
  std::set<std::string> files, covered;
  for (const auto& entry : std::filesystem::directory_iterator(sourceDir() + "/examples"))
    if (entry.path().extension() == ".hir") files.insert(entry.path().stem().string());
  for (const ExampleCase& c : cases()) covered.insert(c.program);
  EXPECT_EQ(files, std::set<std::string>(knownExamples().begin(), knownExamples().end()))
      << "a new example needs its formula in reference.cpp";
  EXPECT_EQ(files, covered);
}

TEST_P(Examples, MatchTheIndependentReference) {
  const ExampleCase& c = GetParam();
  const Program original = loadExample(c.program);
  const Program assigned = assignStreams(original);
  if (c.loops)
    ASSERT_NE(original, assigned) << "assign-streams must rewrite " << c.program;
  else
    ASSERT_EQ(original, assigned) << "assign-streams must leave " << c.program << " as it is";
  const Params params = bindAll(original, c.overrides);
  const uint64_t seed = 7;

  int runs = 0;
  std::set<int64_t> ranWorlds;
  for (int64_t world = 1; world <= 4; ++world) {
    Status invalid = verifyFor(original, c.overrides, world);
    if (c.worlds.count(world) == 0) {
      // Skipped only because the shapes do not divide, and rejected for that reason.
      ASSERT_TRUE(invalid.has_value()) << c.program << " should not verify for world " << world;
      EXPECT_THAT(invalid->message, HasSubstr("divide")) << invalid->message;
      continue;
    }
    ASSERT_FALSE(invalid.has_value()) << invalid->message;
    // Proved for this team, as `run --passes assign-streams` does: a ring's
    // loop is independent only on 1 and 2 ranks (it has no second step).
    const Program assignedHere = assignStreams(original, world, c.overrides);
    ASSERT_FALSE(verifyFor(assignedHere, c.overrides, world).has_value());

    // The inputs every run sees, and the formula on them.
    auto inputs = globalInputs(original, params, world, seed);
    std::map<std::string, RefTensor> expected = exampleReference(c.program, toRef(inputs));
    ASSERT_EQ(outputSpecs(original, params, world).size(), expected.size());

    for (bool transformed : {false, true}) {
      for (int64_t streams : {1, 2, 4}) {
        RunRequest request = makeRequest(transformed ? assignedHere : original, params, seed, streams);
        // Pool size 2 also gets random delays in streams and communications.
        if (streams == 2) request.backend.cpu.delays = {50, static_cast<uint64_t>(world)};
        // Pool size 4 also runs a warmup and two timed runs on the same backend.
        if (streams == 4) {
          request.warmup = 1;
          request.repeat = 2;
        }
        std::string what = describe(c.program, params, world, transformed, streams);
        auto result = runWithin(request, world);
        ASSERT_TRUE(result.has_value()) << what << ": did not finish within 60 s";
        ASSERT_TRUE(result->ok()) << what << ": " << result->error().message;
        for (const TensorSpec& spec : outputSpecs(original, params, world)) {
          auto got = (*result)->outputs.find(spec.name);
          ASSERT_NE(got, (*result)->outputs.end()) << what << ": no output " << spec.name;
          Match m = compare(spec.name, got->second, spec.dtype, expected.at(spec.name));
          EXPECT_TRUE(m.ok) << what << ": " << m.message;
        }
        ++runs;
      }
    }
    ranWorlds.insert(world);
  }
  EXPECT_EQ(ranWorlds, c.worlds);
  EXPECT_EQ(runs, static_cast<int>(c.worlds.size()) * 6);
}

INSTANTIATE_TEST_SUITE_P(All, Examples, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) { return info.param.label; });

// Every example at a small shape that splits over 1 to 4 ranks.
const std::map<std::string, Params>& smallExamples() {
  static const std::map<std::string, Params> small = {
      {"row_parallel_linear", {{"M", 20}, {"K", 24}, {"N", 8}, {"S", 3}}},
      {"all_gather", {{"M", 10}, {"K", 12}, {"N", 12}, {"S", 4}}},
      {"broadcast", {{"M", 24}, {"K", 12}, {"N", 8}}},
      {"events", {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 3}}},
      {"pipeline_handles", {{"M", 10}, {"K", 12}, {"N", 12}, {"S", 4}}},
      {"pipeline_with_blocks", {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 3}}},
      {"reduce_scatter", {{"M", 9}, {"K", 12}, {"N", 12}, {"S", 2}}},
      {"parallel_block", {{"B", 6}, {"H", 8}, {"A", 12}, {"F", 24}}},
      {"sequence_parallel_mlp", {{"T", 24}, {"H", 6}, {"F", 12}, {"S", 3}}},
      {"ring_all_gather_linear", {{"M", 12}, {"K", 12}, {"N", 12}}},
      {"ring_all_gather_linear_overlapped", {{"M", 12}, {"K", 12}, {"N", 12}}},
      {"ring_bidirectional", {{"M", 24}, {"K", 12}, {"N", 12}}},
      {"ring_bidirectional_overlapped", {{"M", 24}, {"K", 12}, {"N", 12}}},
      {"ring_reduce_scatter", {{"M", 6}, {"K", 12}, {"N", 12}}},
      {"ring_reduce_scatter_overlapped", {{"M", 6}, {"K", 12}, {"N", 12}}},
  };
  return small;
}

// The same through the command line's --ranks (in-process ranks):
// `hostir run --seed S --output y=FILE` for every example, team size,
// variant and pool size, the output file compared with the formula.
TEST(ExamplesThroughTheCli, RanksStreamsPassesAndSeed) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostir_exec_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::map<std::string, Params>& small = smallExamples();
  int runs = 0;
  for (const auto& [name, overrides] : small) {
    Program program = loadExample(name);
    Params params = bindAll(program, overrides);
    std::string sets;
    for (const auto& [k, v] : overrides) sets += fmt::format(" --set {}={}", k, v);
    for (int64_t world = 1; world <= 4; ++world) {
      ASSERT_FALSE(verifyFor(program, overrides, world).has_value()) << name << " world " << world;
      const uint64_t seed = 100 + static_cast<uint64_t>(world);
      RefTensor expected = exampleReference(name, toRef(globalInputs(program, params, world, seed))).at("y");
      for (bool assigned : {false, true}) {
        for (int64_t streams : {1, 2, 4}) {
          fs::path out = dir / "y.npy";
          fs::remove(out);
          std::string command = fmt::format(
              "{} run {}{} --ranks {} --streams {}{} --seed {} --check{} --output y={} >{} 2>&1 </dev/null",
              HOSTIR_BINARY, examplePath(name), sets, world, streams, assigned ? " --passes assign-streams" : "", seed,
              streams == 2 ? " --inject-delays 50" : "", out.string(), (dir / "log").string());
          int status = std::system(command.c_str());
          std::string log = readText((dir / "log").string());
          ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << log;
          EXPECT_THAT(log, HasSubstr("check: ok")) << command;
          auto y = readNpy(out.string(), DType::F32);
          ASSERT_TRUE(y.ok()) << y.error().message;
          Match m = compare("y", *y, DType::F32, expected);
          EXPECT_TRUE(m.ok) << command << ": " << m.message;
          ++runs;
        }
      }
    }
  }
  EXPECT_EQ(runs, static_cast<int>(small.size()) * 4 * 2 * 3);
  EXPECT_EQ(small.size(), knownExamples().size());
  fs::remove_all(dir);
}

// Every example with its collectives on the copy-engine communicator (the
// host engine: the same schedule of copies and reductions a GPU runs), for
// 1 to 4 ranks, as written and after assign-streams, with random delays.
TEST(ExamplesOnCopyEngines, MatchTheIndependentReference) {
  int runs = 0;
  for (const auto& [name, overrides] : smallExamples()) {
    const Program original = loadExample(name);
    const Params params = bindAll(original, overrides);
    for (int64_t world = 1; world <= 4; ++world) {
      const uint64_t seed = 300 + static_cast<uint64_t>(world);
      RefTensor expected = exampleReference(name, toRef(globalInputs(original, params, world, seed))).at("y");
      for (bool transformed : {false, true}) {
        RunRequest request =
            makeRequest(transformed ? assignStreams(original, world, overrides) : original, params, seed, 2);
        request.backend.communicator = CommunicatorChoice::CopyEngine;
        request.backend.cpu.delays = {50, seed};
        std::string what = describe(name, params, world, transformed, 2) + " on copy engines";
        auto result = runWithin(request, world);
        ASSERT_TRUE(result.has_value()) << what << ": did not finish within 60 s";
        ASSERT_TRUE(result->ok()) << what << ": " << result->error().message;
        Match m = compare("y", (*result)->outputs.at("y"), DType::F32, expected);
        EXPECT_TRUE(m.ok) << what << ": " << m.message;
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, static_cast<int>(smallExamples().size()) * 4 * 2);
}

// pipeline_handles is all_gather with each chunk's allgather issued one
// iteration ahead into a handle array: the same allgathers and linears on
// the same rows, so `run --check` writes the same bits for both.
TEST(PipelineHandles, GivesTheBitsOfTheProgramWithoutArrays) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hostir_handles_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int64_t world : {1, 2, 4}) {
    std::map<std::string, std::string> bytes;
    for (std::string name : {"pipeline_handles", "all_gather"}) {
      fs::path out = dir / (name + ".npy");
      std::string command = fmt::format(
          "{} run {} --set M=24 --set K=12 --set N=8 --set S=3 --ranks {} --seed 9 --check --output y={} >{} 2>&1 "
          "</dev/null",
          HOSTIR_BINARY, examplePath(name), world, out.string(), (dir / "log").string());
      int status = std::system(command.c_str());
      std::string log = readText((dir / "log").string());
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << log;
      EXPECT_THAT(log, HasSubstr("check: ok")) << command;
      bytes[name] = readText(out.string());
    }
    EXPECT_GT(bytes["all_gather"].size(), 24u * 8 * sizeof(float));
    EXPECT_TRUE(bytes["pipeline_handles"] == bytes["all_gather"]) << world << " ranks: the outputs differ";
  }
  fs::remove_all(dir);
}

class CopyEngineCli : public hostir::testing::CliTest {};

TEST_F(CopyEngineCli, RunsAnExampleAndRefusesNcclOnTheCpu) {
  const std::string example = examplePath("row_parallel_linear");
  hostir::testing::CommandResult r =
      run(fmt::format("run {} --backend cpu --ranks 3 --set K=24 --set M=12 --communicator "
                      "copy-engine --passes assign-streams --check",
                      example));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("check: ok"));
  r = run(fmt::format("run {} --backend cpu --ranks 2 --communicator nccl", example));
  EXPECT_EQ(r.exitCode, 2);  // what no machine can do is a usage error
  EXPECT_EQ(r.err, "error: backend cpu cannot use the nccl communicator, which needs CUDA devices\n");
  r = run(fmt::format("run {} --ranks 2 --communicator ucc", example));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_THAT(r.err, HasSubstr("--communicator"));
}

// The executor's own serial reference (what `--check` compares with) agrees
// with the independent formula, and compareOutputs accepts a correct run.
TEST(ExampleReference, SerialReferenceAndCompareOutputsAgree) {
  for (const auto& [name, overrides] : smallExamples()) {
    Program program = loadExample(name);
    Params params = bindAll(program, overrides);
    for (int64_t world : {1, 2}) {
      auto inputs = globalInputs(program, params, world, 3);
      auto expected = exampleReference(name, toRef(inputs));
      RunRequest serial = makeRequest(program, params, 3, 1);
      serial.backend.cpu.reference = true;
      auto ref = runWithin(serial, world);
      ASSERT_TRUE(ref && ref->ok()) << name;
      for (const auto& [out, values] : expected) {
        Match m = compare(out, (*ref)->outputs.at(out), DType::F32, values);
        EXPECT_TRUE(m.ok) << name << " serial reference, world " << world << ": " << m.message;
      }
      auto run = runWithin(makeRequest(assignStreams(program, world, overrides), params, 3, 4), world);
      ASSERT_TRUE(run && run->ok()) << name;
      Comparison c = compareOutputs((*run)->outputs, (*ref)->outputs);
      EXPECT_TRUE(c.ok) << name << ": " << c.report;
      EXPECT_THAT(c.report, HasSubstr("matches"));
    }
  }
}

// compareOutputs must catch a wrong output and name the worst element; the
// tests' own comparison must too (a comparison that cannot fail proves nothing).
TEST(ExampleReference, ComparisonsFailOnAPerturbedOutput) {
  Program program = loadExample("row_parallel_linear");
  Params params = bindAll(program, {{"M", 8}, {"K", 16}, {"N", 6}, {"S", 2}});
  auto inputs = globalInputs(program, params, 2, 11);
  auto expected = exampleReference("row_parallel_linear", toRef(inputs));
  auto run = runWithin(makeRequest(program, params, 11, 2), 2);
  ASSERT_TRUE(run && run->ok());
  const std::map<std::string, HostTensor> good = (*run)->outputs;
  ASSERT_TRUE(compare("y", good.at("y"), DType::F32, expected.at("y")).ok);
  ASSERT_TRUE(compareOutputs(good, good).ok);

  // Element [5, 3] is off by a lot, [1, 1] by a little: the report names [5, 3].
  RefTensor y = toRef(good.at("y"));
  RefTensor bad = y;
  bad.at({5, 3}) += 0.5;
  bad.at({1, 1}) += 0.01;
  std::map<std::string, HostTensor> perturbed = {{"y", toHost(bad, DType::F32)}};
  Comparison c = compareOutputs(perturbed, good);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.report, HasSubstr("[5, 3]"));
  EXPECT_THAT(c.report, HasSubstr("'y'"));
  Match m = compare("y", perturbed.at("y"), DType::F32, expected.at("y"));
  EXPECT_FALSE(m.ok);
  EXPECT_THAT(m.message, HasSubstr("[5, 3]"));

  // Just beyond the f32 tolerance still fails; a NaN fails; a wrong shape fails.
  RefTensor slightly = y;
  slightly.at({2, 2}) += std::abs(y.at({2, 2})) * 1e-3 + 1e-3;
  EXPECT_FALSE(compareOutputs({{"y", toHost(slightly, DType::F32)}}, good).ok);
  EXPECT_FALSE(compare("y", toHost(slightly, DType::F32), DType::F32, expected.at("y")).ok);
  RefTensor nan = y;
  nan.at({0, 0}) = std::nan("");
  EXPECT_FALSE(compareOutputs({{"y", toHost(nan, DType::F32)}}, good).ok);
  EXPECT_FALSE(compare("y", toHost(nan, DType::F32), DType::F32, expected.at("y")).ok);
  RefTensor wrongShape({8, 5});
  EXPECT_FALSE(compareOutputs({{"y", toHost(wrongShape, DType::F32)}}, good).ok);
  EXPECT_FALSE(compareOutputs({}, good).ok);
  EXPECT_FALSE(compare("y", toHost(wrongShape, DType::F32), DType::F32, expected.at("y")).ok);
  EXPECT_FALSE(compare("y", toHost(y, DType::F64), DType::F32, expected.at("y")).ok);
}

}  // namespace
}  // namespace hostir::reftest
