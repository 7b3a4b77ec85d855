// Failures come back as one clear message, never as a hang or a crash:
// inputs of the wrong global shape or dtype, ranks that issue different
// communications (caught by the communication timeout), and the command
// line's own errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "api/npy.h"
#include "comm/in_process_communicator.h"
#include "executor/backend_factory.h"
#include "harness.h"
#include "test_util.h"

namespace hostir::reftest {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using Clock = std::chrono::steady_clock;

constexpr auto kNoHang = std::chrono::seconds(10);

RunRequest smallRowParallel(Params& params) {
  Program program = loadExample("row_parallel_linear");
  params = bindAll(program, {{"M", 8}, {"K", 12}, {"N", 4}, {"S", 2}});
  return makeRequest(program, params, 1, 2);
}

TEST(RunErrors, InputWithTheWrongGlobalShape) {
  Params params;
  RunRequest request = smallRowParallel(params);
  // The rank-local shape [8, 6] of x over two ranks, not the global [8, 12].
  request.inputs["x"] = makeHostTensor(DType::F32, Dims{8, 6});
  for (int64_t world : {1, 2, 3}) {
    auto start = Clock::now();
    auto result = runWithin(request, world, kNoHang);
    ASSERT_TRUE(result.has_value()) << "world " << world << ": hung";
    ASSERT_FALSE(result->ok()) << "world " << world;
    EXPECT_THAT(result->error().message, HasSubstr("'x'"));
    EXPECT_THAT(result->error().message, HasSubstr("global shape [8, 12]"));
    EXPECT_THAT(result->error().message, HasSubstr("[8, 6]"));
    EXPECT_LT(Clock::now() - start, kNoHang);
  }
}

TEST(RunErrors, InputWithTheWrongDType) {
  Params params;
  RunRequest request = smallRowParallel(params);
  request.inputs["w"] = makeHostTensor(DType::F64, Dims{4, 12});
  auto result = runWithin(request, 2, kNoHang);
  ASSERT_TRUE(result.has_value()) << "hung";
  ASSERT_FALSE(result->ok());
  EXPECT_THAT(result->error().message, HasSubstr("'w'"));
  EXPECT_THAT(result->error().message, HasSubstr("f32"));
  EXPECT_THAT(result->error().message, HasSubstr("f64"));
}

// Rank r issues r + 1 allreduces: rank 0 goes on to the end of the run
// while rank 1 waits in its second allreduce. The in-process team notices
// the mismatch (or, failing that, the communication timeout fires); either
// way the run must end with an error that names the allreduce, not hang.
std::string mismatched() { return testing::testProgramText("executor/programs/rank_dependent_allreduces.hir"); }

void expectMismatchError(const Program& program, int64_t world, int64_t streams) {
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, streams);
  request.backend.commTimeout = std::chrono::seconds(2);
  auto start = Clock::now();
  auto result = runWithin(request, world, kNoHang);
  ASSERT_TRUE(result.has_value()) << "world " << world << ": still running after 10 s";
  ASSERT_FALSE(result->ok()) << "world " << world << ": ranks that issue different communications must fail";
  const std::string& message = result->error().message;
  EXPECT_THAT(message, HasSubstr("allreduce")) << message;
  EXPECT_LT(Clock::now() - start, kNoHang);
}

TEST(RunErrors, RankDependentCommunicationsFailWithAMessage) {
  Program program = parseOrThrow(mismatched());
  ASSERT_FALSE(verifyFor(program, {}, 2).has_value());
  expectMismatchError(program, 2, 4);
  expectMismatchError(program, 4, 1);
}

TEST(RunErrors, RankDependentCommunicationsOnWorkerStreamsFailToo) {
  Program program = assignStreams(parseOrThrow(mismatched()));
  expectMismatchError(program, 3, 2);
}

// The team recovers: a good run right after a failed one works.
TEST(RunErrors, AGoodRunAfterAFailedOne) {
  Program bad = parseOrThrow(mismatched());
  RunRequest request = makeRequest(bad, bindAll(bad, {}), 1, 2);
  request.backend.commTimeout = std::chrono::seconds(2);
  auto failed = runWithin(request, 2, kNoHang);
  ASSERT_TRUE(failed.has_value());
  ASSERT_FALSE(failed->ok());
  Params params;
  RunRequest good = smallRowParallel(params);
  auto result = runWithin(good, 2, kNoHang);
  ASSERT_TRUE(result && result->ok());
  auto inputs = globalInputs(good.program, params, 2, good.seed);
  Match m = compare("y", (*result)->outputs.at("y"), DType::F32,
                    exampleReference("row_parallel_linear", toRef(inputs)).at("y"));
  EXPECT_TRUE(m.ok) << m.message;
}

// ---- the reason a failing rank aborts its team with ------------------------------------------
//
// Under mpirun the abort's reason is the only message that reaches the user
// (MPI_Abort ends the job), so a failure on a stream's thread must abort
// with the rendered, positioned error, as one on the host does. This
// communicator of a team of one records every reason it is aborted with.
class AbortRecorder : public Communicator {
 public:
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string name() const override { return "abort-recorder"; }
  void collective(const CollectiveArgs& call, void* stream) override { inner_->collective(call, stream); }
  void barrier() override { inner_->barrier(); }
  void abort(const std::string& reason) override {
    {
      std::lock_guard lock(mutex_);
      reasons_.push_back(reason);
    }
    inner_->abort(reason);
  }
  std::vector<std::string> reasons() {
    std::lock_guard lock(mutex_);
    return reasons_;
  }

 private:
  InProcessTeam team_{1};
  std::unique_ptr<Communicator> inner_ = team_.communicator(0);
  std::mutex mutex_;
  std::vector<std::string> reasons_;
};

TEST(RankAbort, AnErrorOnAStreamAbortsTheTeamWithItsRenderedText) {
  const std::string text = testing::testProgramText("executor/programs/routed_on_a_stream.hir");
  Program program = parseOrThrow(text, "routed.hir");
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 2);
  RefTensor routes({3});
  routes.data = {0, 9, 1};
  request.inputs["routes"] = toHost(routes, DType::I32);
  request.describeFailure = [&](const Diagnostic& diag) { return renderDiagnostic(diag, "routed.hir", text); };
  AbortRecorder comm;
  Result<RunResult> result = runOnRank(request, comm);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().loc, (SourceLoc{6, 14}));
  const std::vector<std::string> reasons = comm.reasons();
  ASSERT_FALSE(reasons.empty());
  for (const std::string& reason : reasons)  // the stream's abort and the rank session's say the same
    EXPECT_THAT(reason,
                HasSubstr("routed.hir:6:14: error: index 9 of 'routes' is out of range for 'table' with 4 rows"));
}

// ---- the command line ----------------------------------------------------------

struct CommandResult {
  int exitCode = -1;
  bool signaled = false;
  std::string out, err;
};

class CliErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("hostir_exec_err_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  CommandResult run(const std::string& args) {
    std::string command = std::string(HOSTIR_BINARY) + " " + args + " >" + (dir_ / "out").string() + " 2>" +
                          (dir_ / "err").string() + " </dev/null";
    auto start = Clock::now();
    int status = std::system(command.c_str());
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(30)) << command;
    CommandResult r;
    r.signaled = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) >= 128);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = readText((dir_ / "out").string());
    r.err = readText((dir_ / "err").string());
    return r;
  }

  static int errorLines(const std::string& text) {
    int n = 0;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find("error") != std::string::npos) ++n;
    return n;
  }

  std::filesystem::path dir_;
};

TEST_F(CliErrors, MissingInputFile) {
  std::string missing = (dir_ / "nope.npy").string();
  auto r = run(fmt::format("run {} --ranks 2 --input x={}", examplePath("row_parallel_linear"), missing));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(errorLines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("nope.npy"));
}

TEST_F(CliErrors, CudaBackendWithoutADeviceNamesTheReason) {
  auto reason = cudaUnavailableReason();
  if (!reason) GTEST_SKIP() << "a CUDA device is usable here";
  auto r = run(fmt::format("run {} --backend cuda", examplePath("row_parallel_linear")));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(errorLines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("error: backend cuda: " + *reason));
}

TEST_F(CliErrors, ExtentsThatDoNotDivideNameTheDeclaration) {
  // row_parallel_linear's K = 512 does not split over 3 ranks.
  std::string path = examplePath("row_parallel_linear");
  auto r = run(fmt::format("run {} --ranks 3", path));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex("row_parallel_linear\\.hir:[0-9]+:[0-9]+: error: .*divide")))
      << r.err;
  EXPECT_EQ(errorLines(r.err), 1) << r.err;
}

TEST_F(CliErrors, InputFileWithTheWrongGlobalShape) {
  HostTensor x = makeHostTensor(DType::F32, Dims{8, 6});
  std::string file = (dir_ / "x.npy").string();
  ASSERT_FALSE(writeNpy(file, x.dtype, x.shape, x.data.data()).has_value());
  auto r = run(fmt::format("run {} --ranks 2 --set M=8 --set K=12 --set N=4 --set S=2 --input x={}",
                           examplePath("row_parallel_linear"), file));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(errorLines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("global shape [8, 12]"));
}

// An index out of range under `hostir run --ranks 2`: one positioned error
// naming the index and the tensor, exit 1, and every rank ends.
TEST_F(CliErrors, AnIndexOutOfRangeNamesItsStatement) {
  const std::string program = (dir_ / "gather.hir").string();
  {
    std::ofstream out(program);
    out << "program gather(R = 4, N = 6) {\n"
           "  input  x : f32[R, 3]\n"
           "  input  idx : i32[N] shard(0)\n"
           "  output y : f32[N, 3] shard(0)\n"
           "  y = gather_rows(x, idx)\n"
           "}\n";
  }
  RefTensor idx({6});
  idx.data = {0, 1, 2, 3, 7, -1};
  HostTensor indices = toHost(idx, DType::I32);
  const std::string file = (dir_ / "idx.npy").string();
  ASSERT_FALSE(writeNpy(file, indices.dtype, indices.shape, indices.data.data()).has_value());
  auto r = run(fmt::format("run {} --ranks 2 --input idx={} --fill-missing", program, file));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(errorLines(r.err), 1) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("gather.hir:5:7: error: index 7 of 'idx' is out of range for 'x' with 4 rows (on rank 1)"));
}

}  // namespace
}  // namespace hostir::reftest
