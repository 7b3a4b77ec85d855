// Runs captured into a CUDA graph (`graph = true`) against the same
// executables uncaptured: the outputs agree for the examples on one rank
// (NCCL) and on two ranks sharing the device (copy engines), replays read
// each call's new inputs, an index out of range in a replay is still the
// statement's error, and what a replay cannot serve is refused. Skipped
// without a device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "executor/backend_factory.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

std::string example(const std::string& name) { return std::string(HOSTIR_SOURCE_DIR) + "/examples/" + name + ".hir"; }

using Arrays = std::map<std::string, api::HostArray>;

std::map<std::string, api::HostBuffer> buffersOf(Arrays& arrays) {
  std::map<std::string, api::HostBuffer> buffers;
  for (auto& [name, array] : arrays) buffers[name] = array.buffer();
  return buffers;
}

// Every input of `exe` filled from `seed` (floats in [-1, 1)), every output zero.
Arrays inputsFor(const api::Executable& exe, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Arrays inputs;
  for (const api::TensorDecl& decl : exe.tensors()) {
    if (!decl.input) continue;
    api::HostArray array = api::HostArray::zeros(decl.dtype, decl.shape);
    EXPECT_EQ(decl.dtype, api::DType::F32) << decl.name;
    auto* data = reinterpret_cast<float*>(array.data.data());
    for (int64_t i = 0; i < array.buffer().elements(); ++i) data[i] = uniform(random);
    inputs[decl.name] = std::move(array);
  }
  return inputs;
}

Arrays outputsFor(const api::Executable& exe) {
  Arrays outputs;
  for (const api::TensorDecl& decl : exe.tensors())
    if (!decl.input) outputs[decl.name] = api::HostArray::zeros(decl.dtype, decl.shape);
  return outputs;
}

struct GraphCase {
  std::string example;
  int ranks;
  std::string communicator;
  std::vector<std::string> passes;
  api::Params params;
};

std::ostream& operator<<(std::ostream& out, const GraphCase& c) {
  return out << c.example << " on " << c.ranks << " ranks (" << c.communicator << ")";
}

api::RunOptions optionsFor(const GraphCase& c, bool graph) {
  api::RunOptions options;
  options.backend = "cuda";
  options.communicator = c.communicator;
  options.ranks = c.ranks;
  options.passes = c.passes;
  options.params = c.params;
  options.graph = graph;
  return options;
}

class CudaGraphTest : public ::testing::TestWithParam<GraphCase> {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  }
};

// Three calls with different inputs: the first captures, the others replay.
TEST_P(CudaGraphTest, ReplaysGiveTheUncapturedOutputsForNewInputs) {
  const GraphCase& c = GetParam();
  api::Program program = api::Program::fromFile(example(c.example));
  api::Executable captured(program, optionsFor(c, true));
  api::Executable plain(program, optionsFor(c, false));
  for (unsigned call = 0; call < 3; ++call) {
    Arrays inputs = inputsFor(captured, 100 + call);
    Arrays got = outputsFor(captured), want = outputsFor(plain);
    const api::RunStats stats = captured.run(buffersOf(inputs), buffersOf(got));
    plain.run(buffersOf(inputs), buffersOf(want));
    const api::OutputComparison comparison = api::compareOutputs(buffersOf(got), buffersOf(want));
    EXPECT_TRUE(comparison.ok) << "call " << call << ":\n" << comparison.report;
    ASSERT_EQ(stats.issueMillis.size(), stats.runMillis.size());
    EXPECT_LE(stats.issueMillis.front(), stats.runMillis.front());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, CudaGraphTest,
    ::testing::Values(GraphCase{"row_parallel_linear", 1, "nccl", {"assign-streams"}, {}},
                      GraphCase{"row_parallel_linear", 2, "copy-engine", {"assign-streams"}, {{"S", 8}}},
                      GraphCase{"ring_all_gather_linear_overlapped", 2, "copy-engine", {}, {}},
                      GraphCase{"reduce_scatter", 2, "copy-engine", {}, {}}, GraphCase{"events", 1, "nccl", {}, {}},
                      GraphCase{"sequence_parallel_mlp", 2, "copy-engine", {"assign-streams"}, {}}));

// The warm-up and timed runs of one call replay the graph the first captured.
TEST(CudaGraph, RepeatedRunsOfOneCallAgree) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  GraphCase c{"row_parallel_linear", 2, "copy-engine", {"assign-streams"}, {}};
  api::Program program = api::Program::fromFile(example(c.example));
  api::RunOptions options = optionsFor(c, true);
  options.warmup = 2;
  options.repeat = 5;
  api::Executable captured(program, options);
  api::Executable plain(program, optionsFor(c, false));
  Arrays inputs = inputsFor(captured, 7);
  Arrays got = outputsFor(captured), want = outputsFor(plain);
  EXPECT_EQ(captured.run(buffersOf(inputs), buffersOf(got)).runMillis.size(), 5u);
  plain.run(buffersOf(inputs), buffersOf(want));
  const api::OutputComparison comparison = api::compareOutputs(buffersOf(got), buffersOf(want));
  EXPECT_TRUE(comparison.ok) << comparison.report;
}

std::string gatherProgram() { return hostir::testing::testProgramText("cuda/programs/gather.hir"); }

// The program file of the test below reads and verifies with or without a
// device (a missing or broken file fails here where that test is skipped),
// and its line 6 is the gather that test expects the error at.
TEST(CudaGraphProgramFiles, TheGatherProgramVerifies) {
  const std::string text = gatherProgram();
  EXPECT_NO_THROW(api::Program::fromText(text, "gather.hir"));
  std::istringstream lines(text);
  std::string line;
  for (int k = 0; k < 6; ++k) std::getline(lines, line);
  EXPECT_NE(line.find("gather_rows"), std::string::npos) << "line 6 is: " << line;
}

// The kernels of a replay record an index out of range as the captured run's did.
TEST(CudaGraph, AnIndexOutOfRangeInAReplayIsTheStatementsError) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  api::Program program = api::Program::fromText(gatherProgram(), "gather.hir");
  api::RunOptions options;
  options.backend = "cuda";
  options.graph = true;
  api::Executable exe(program, options);
  Arrays inputs;
  inputs["x"] = api::HostArray::zeros(api::DType::F32, {4, 3});
  inputs["idx"] = api::HostArray::zeros(api::DType::I32, {3});
  Arrays outputs = outputsFor(exe);
  exe.run(buffersOf(inputs), buffersOf(outputs));  // captured, in range
  const int32_t outOfRange[] = {1, 4, 0};
  std::memcpy(inputs["idx"].data.data(), outOfRange, sizeof outOfRange);
  try {
    exe.run(buffersOf(inputs), buffersOf(outputs));
    ADD_FAILURE() << "no error for index 4 of 4 rows in a replay";
  } catch (const api::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("gather.hir:6:"));
    EXPECT_THAT(e.what(), HasSubstr("index 4 of 'idx' is out of range for 'x'"));
  }
}

TEST(CudaGraph, WhatObservesIssuedOperationsIsRefused) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
  api::Program program = api::Program::fromFile(example("row_parallel_linear"));
  api::RunOptions traced;
  traced.backend = "cuda";
  traced.graph = true;
  traced.tracePath = "graph-trace.json";
  api::RunOptions raceChecked = traced;
  raceChecked.tracePath.clear();
  raceChecked.raceCheck = true;
  for (const auto& [options, why] : {std::pair{traced, "a trace times each operation"},
                                     std::pair{raceChecked, "the race check observes each operation"}}) {
    try {
      api::Executable exe(program, options);
      ADD_FAILURE() << "not refused: " << why;
    } catch (const api::Error& e) {
      EXPECT_EQ(e.kind(), api::ErrorKind::Usage) << e.what();
      EXPECT_THAT(e.what(), HasSubstr(why));
    }
  }
}

}  // namespace
}  // namespace hostir
