// The executor under mpirun: every example through runOnRank on an
// MpiCommunicator, before and after assign-streams, on pools of 1 and 4
// streams; rank 0 compares the global outputs with the independent
// references. Then 20 runs of the overlapped row-parallel program with
// random delays: the same bits every time. Only rank 0 prints gtest's
// report; the others print their failures, and all ranks agree on the exit
// status.
//
// Every rank runs the same sequence of runOnRank calls whatever happens to
// the checks (they are EXPECTs on rank 0 only), so a failed check never
// leaves the ranks out of step.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "comm/mpi_communicator.h"
#include "harness.h"
#include "op_programs.h"

namespace hostir::reftest {
namespace {

// The communicator over MPI_COMM_WORLD, alive while the tests run.
MpiCommunicator* world = nullptr;

struct MpiCase {
  std::string label;
  std::string program;
  Params overrides;
};

std::ostream& operator<<(std::ostream& os, const MpiCase& c) { return os << c.label; }

const std::vector<MpiCase>& mpiCases() {
  static const std::vector<MpiCase> all = {
      {"row_parallel_linear", "row_parallel_linear", {}},
      {"row_parallel_linear_uneven", "row_parallel_linear", {{"M", 18}, {"K", 12}, {"N", 5}, {"S", 5}}},
      {"all_gather", "all_gather", {}},
      {"all_gather_empty_last_chunk", "all_gather", {{"M", 5}, {"K", 12}, {"N", 12}, {"S", 4}}},
      {"broadcast", "broadcast", {}},
      {"events", "events", {}},
      {"events_uneven", "events", {{"M", 10}, {"K", 6}, {"H", 12}, {"N", 4}, {"S", 3}}},
      {"pipeline_handles", "pipeline_handles", {}},
      {"pipeline_handles_uneven", "pipeline_handles", {{"M", 10}, {"K", 12}, {"N", 12}, {"S", 3}}},
      {"reduce_scatter", "reduce_scatter", {}},
      {"reduce_scatter_uneven", "reduce_scatter", {{"M", 7}, {"K", 12}, {"N", 12}, {"S", 3}}},
      {"ring_all_gather_linear", "ring_all_gather_linear", {}},
      {"ring_all_gather_linear_overlapped", "ring_all_gather_linear_overlapped", {}},
      {"ring_bidirectional_uneven_halves", "ring_bidirectional", {{"M", 12}, {"K", 12}, {"N", 12}}},
      {"ring_bidirectional_overlapped", "ring_bidirectional_overlapped", {}},
      {"ring_reduce_scatter", "ring_reduce_scatter", {}},
      {"ring_reduce_scatter_overlapped", "ring_reduce_scatter_overlapped", {}},
  };
  return all;
}

class MpiExamples : public ::testing::TestWithParam<MpiCase> {};

TEST_P(MpiExamples, MatchTheIndependentReference) {
  const MpiCase& c = GetParam();
  const int64_t size = world->size();
  const bool leader = world->rank() == 0;
  const Program original = loadExample(c.program);
  if (Status invalid = verifyFor(original, c.overrides, size)) {
    // Every rank verifies alike, so every rank skips alike.
    EXPECT_NE(invalid->message.find("divide"), std::string::npos) << invalid->message;
    GTEST_SKIP() << c.label << " does not split over " << size << " ranks";
  }
  const Program assigned = assignStreams(original, size, c.overrides);  // proved for this team
  const Params params = bindAll(original, c.overrides);
  const uint64_t seed = 13;
  std::map<std::string, RefTensor> expected;
  if (leader) expected = exampleReference(c.program, toRef(globalInputs(original, params, size, seed)));

  int runs = 0;
  for (bool transformed : {false, true}) {
    for (int64_t streams : {1, 4}) {
      RunRequest request = makeRequest(transformed ? assigned : original, params, seed, streams);
      std::string what = describe(c.program, params, size, transformed, streams) + " (mpi)";
      Result<RunResult> result = runOnRank(request, *world);
      ++runs;
      if (!result) {
        ADD_FAILURE() << what << ": " << result.error().message;
        continue;
      }
      if (!leader) {
        EXPECT_TRUE(result->outputs.empty()) << "only rank 0 gets the global outputs";
        continue;
      }
      for (const auto& [name, values] : expected) {
        auto got = result->outputs.find(name);
        if (got == result->outputs.end()) {
          ADD_FAILURE() << what << ": no output " << name;
          continue;
        }
        Match m = compare(name, got->second, DType::F32, values);
        EXPECT_TRUE(m.ok) << what << ": " << m.message;
      }
    }
  }
  EXPECT_EQ(runs, 4);
}

INSTANTIATE_TEST_SUITE_P(All, MpiExamples, ::testing::ValuesIn(mpiCases()),
                         [](const ::testing::TestParamInfo<MpiCase>& info) { return info.param.label; });

// pipeline_handles carries each chunk's allgather handle into the next
// iteration; all_gather waits it at once. The same allgathers and linears
// on the same rows: the same bits over MPI.
TEST(MpiArrays, PipelineHandlesGivesTheBitsOfAllGather) {
  const Params overrides = {{"M", 24}, {"K", 12}, {"N", 8}, {"S", 3}};
  std::map<std::string, std::vector<std::byte>> bits;
  for (std::string name : {"pipeline_handles", "all_gather"}) {
    const Program program = loadExample(name);
    Result<RunResult> result = runOnRank(makeRequest(program, bindAll(program, overrides), 21, 4), *world);
    if (!result) {
      ADD_FAILURE() << name << ": " << result.error().message;
      continue;
    }
    if (world->rank() == 0) bits[name] = result->outputs.at("y").data;
  }
  if (world->rank() != 0) return;
  EXPECT_EQ(bits["all_gather"].size(), 24u * 8 * sizeof(float));
  EXPECT_TRUE(bits["pipeline_handles"] == bits["all_gather"]) << "the outputs differ";
}

// The operation programs of the in-process tests, in every dtype, over MPI
// (half types reduce through MPI user ops; views are packed and unpacked).
using OpParam = std::tuple<std::string, DType>;

class MpiOperations : public ::testing::TestWithParam<OpParam> {};

TEST_P(MpiOperations, MatchTheNaiveReference) {
  const auto& [name, dtype] = GetParam();
  const OpProgram& op = opProgram(name);
  const int64_t size = world->size();
  const bool leader = world->rank() == 0;
  const Program original = parseOrThrow(withDType(op.text, dtype));
  if (Status invalid = verifyFor(original, {}, size)) GTEST_SKIP() << name << ": " << invalid->message;
  std::vector<std::pair<std::string, Program>> variants = {{"original", original}};
  if (op.assignStreamsSafe) {
    Program assigned = assignStreams(original);
    if (!(assigned == original)) variants.emplace_back("assign-streams", std::move(assigned));
  }
  const Params params = bindAll(original, {});
  const uint64_t seed = 17;
  Outputs expected;
  if (leader) expected = op.expect(toRef(globalInputs(original, params, size, seed)), params, size);
  // Each output's declared dtype: most are the program's, an lse is f32, a cast's result its own.
  std::map<std::string, DType> declared;
  for (const TensorSpec& spec : outputSpecs(original, params, size)) declared[spec.name] = spec.dtype;
  for (const auto& [label, program] : variants) {
    for (int64_t streams : {1, 4}) {
      RunRequest request = makeRequest(program, params, seed, streams);
      request.backend.cpu.delays = {streams == 4 ? 100u : 0u, 3};
      std::string what =
          fmt::format("{} {} {} streams={} (mpi, {} ranks)", name, dtypeName(dtype), label, streams, size);
      Result<RunResult> result = runOnRank(request, *world);
      if (!result) {
        ADD_FAILURE() << what << ": " << result.error().message;
        continue;
      }
      if (!leader) continue;
      EXPECT_EQ(result->outputs.size(), expected.size()) << what;
      for (const auto& [out, values] : expected) {
        auto got = result->outputs.find(out);
        if (got == result->outputs.end()) {
          ADD_FAILURE() << what << ": no output " << out;
          continue;
        }
        Match m = compare(out, got->second, declared.at(out), values);
        EXPECT_TRUE(m.ok) << what << ": " << m.message;
        if (op.exact.count(out)) {
          EXPECT_EQ(m.worstRatio, 0.0) << what << ": " << out << " must be exact; " << m.message;
        }
      }
    }
  }
}

std::vector<std::string> opNames() {
  std::vector<std::string> names;
  for (const OpProgram& p : opPrograms()) names.push_back(p.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryDType, MpiOperations,
                         ::testing::Combine(::testing::ValuesIn(opNames()), ::testing::ValuesIn(kDTypes)),
                         [](const ::testing::TestParamInfo<OpParam>& info) {
                           return std::get<0>(info.param) + "_" + std::string(dtypeName(std::get<1>(info.param)));
                         });

// 20 runs of the overlapped row-parallel program with random delays in
// streams and communications, over MPI: no deadlock, the same bits every run.
TEST(MpiStress, RowParallelWithDelays20Runs) {
  const Program original = loadExample("row_parallel_linear");
  const Program program = assignStreams(original);
  const Params params = bindAll(original, {{"M", 64}, {"K", 64}, {"N", 32}, {"S", 4}});
  const int64_t size = world->size();
  if (verifyFor(program, params, size)) GTEST_SKIP() << "K = 64 does not split over " << size << " ranks";
  const bool leader = world->rank() == 0;
  const uint64_t seed = 42;
  RefTensor expected;
  if (leader)
    expected = exampleReference("row_parallel_linear", toRef(globalInputs(original, params, size, seed))).at("y");
  std::optional<HostTensor> first;
  for (int run = 0; run < 20; ++run) {
    for (int64_t pool : {4, 2}) {
      RunRequest request = makeRequest(program, params, seed, pool);
      request.backend.cpu.delays = {200, static_cast<uint64_t>(run)};
      Result<RunResult> result = runOnRank(request, *world);
      if (!result) {
        ADD_FAILURE() << "run " << run << ": " << result.error().message;
        continue;
      }
      if (!leader) continue;
      const HostTensor& y = result->outputs.at("y");
      Match m = compare("y", y, DType::F32, expected);
      EXPECT_TRUE(m.ok) << "run " << run << " pool " << pool << ": " << m.message;
      if (!first) first = y;
      Match same = identical("y", y, *first);
      EXPECT_TRUE(same.ok) << "run " << run << " pool " << pool << ": " << same.message;
    }
  }
}

// What ranks other than 0 print instead of gtest's report: their failures.
class FailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit FailurePrinter(int rank) : rank_(rank) {}

  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: Failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.message());
  }
  void OnTestEnd(const ::testing::TestInfo& test) override {
    if (test.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, test.test_suite_name(), test.name());
  }

 private:
  int rank_;
};

}  // namespace
}  // namespace hostir::reftest

int main(int argc, char** argv) {
  using namespace hostir;
  std::optional<MpiSession> session;
  try {
    session.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "executor_mpi_tests: %s\n", e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new reftest::FailurePrinter(rank));
  }

  int failed = 0;
  {
    MpiCommunicator worldCommunicator;
    reftest::world = &worldCommunicator;
    failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
    reftest::world = nullptr;
  }
  int anyFailed = 0;
  MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  if (rank == 0 && anyFailed && !failed)
    std::fprintf(stderr, "executor_mpi_tests: FAILED on another rank (see its [rank N] lines)\n");
  return anyFailed ? 1 : 0;
}
