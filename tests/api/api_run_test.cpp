// Runs through the public API on in-process teams, against references the
// test computes itself with plain loops.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace {

using hostir::api::DType;
using hostir::api::Error;
using hostir::api::ErrorKind;
using hostir::api::HostBuffer;
using hostir::api::Program;
using hostir::api::testing::errorOf;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";

std::vector<float> randomValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = uniform(rng);
  return v;
}

HostBuffer bufferOf(std::vector<float>& v, std::vector<int64_t> shape) {
  return {DType::F32, std::move(shape), v.data()};
}

// c[m, n] = sum_k a[m, k] * b(k, n), b given as a function of (k, n).
template <typename B>
std::vector<double> product(const std::vector<float>& a, int64_t M, int64_t K, int64_t N, B b) {
  std::vector<double> c(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += double(a[m * K + k]) * b(k, n);
      c[m * N + n] = sum;
    }
  return c;
}

void expectClose(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "element " << i;
}

class ApiRun : public testing::TestWithParam<int64_t> {};

TEST_P(ApiRun, RowParallelLinearMatchesTheProduct) {
  const int64_t ranks = GetParam(), M = 12, K = 16, N = 8;
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::vector<float> x = randomValues(M * K, 1), w = randomValues(N * K, 2), y(M * N, NAN);
  hostir::api::RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 3}};
  options.ranks = ranks;
  for (auto passes : {std::vector<std::string>{}, std::vector<std::string>{"assign-streams"}}) {
    options.passes = passes;
    hostir::api::RunStats stats = hostir::api::run(p, {{"x", bufferOf(x, {M, K})}, {"w", bufferOf(w, {N, K})}},
                                                   {{"y", bufferOf(y, {M, N})}}, options);
    EXPECT_EQ(stats.runMillis.size(), 1u);
    expectClose(y, product(x, M, K, N, [&](int64_t k, int64_t n) { return w[n * K + k]; }));
  }
}

TEST_P(ApiRun, ReduceScatterGivesTheGlobalProduct) {
  const int64_t ranks = GetParam(), M = 8, K = 12, N = 8;
  Program p = Program::fromFile(kExamples + "reduce_scatter.hir");
  std::vector<float> x = randomValues(M * K, 3), w = randomValues(K * N, 4), y(M * N, NAN);
  hostir::api::RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 2}};
  options.ranks = ranks;
  hostir::api::run(p, {{"x", bufferOf(x, {M, K})}, {"w", bufferOf(w, {K, N})}}, {{"y", bufferOf(y, {M, N})}}, options);
  expectClose(y, product(x, M, K, N, [&](int64_t k, int64_t n) { return w[k * N + n]; }));
}

// The copy-engine communicator on the CPU backend: the same product, and
// the peak memory of the run reported.
TEST_P(ApiRun, CopyEnginesGiveTheSameProduct) {
  const int64_t ranks = GetParam(), M = 12, K = 16, N = 8;
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::vector<float> x = randomValues(M * K, 5), w = randomValues(N * K, 6), y(M * N, NAN);
  hostir::api::RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 3}};
  options.ranks = ranks;
  options.backend = "cpu";
  options.communicator = "copy-engine";
  options.passes = {"assign-streams"};
  hostir::api::RunStats stats = hostir::api::run(p, {{"x", bufferOf(x, {M, K})}, {"w", bufferOf(w, {N, K})}},
                                                 {{"y", bufferOf(y, {M, N})}}, options);
  expectClose(y, product(x, M, K, N, [&](int64_t k, int64_t n) { return w[n * K + k]; }));
  // At least each rank's whole y, and its shards of x and w where a rank
  // copies them (shards along K are not contiguous; one rank reads them in place).
  const int64_t copied = ranks > 1 ? M * K / ranks + N * K / ranks : 0;
  EXPECT_GE(stats.peakMemoryBytes, uint64_t{4} * (copied + M * N));
  if (ranks == 1) EXPECT_LT(stats.peakMemoryBytes, uint64_t{4} * (M * K + M * N));
}

INSTANTIATE_TEST_SUITE_P(Ranks, ApiRun, testing::Values(1, 2, 4));

TEST(ApiRunErrors, TheCommunicatorMustBeOneTheBackendCanUse) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 4}, {"K", 4}, {"N", 4}, {"S", 2}};
  options.ranks = 2;
  options.communicator = "ucc";
  Error unknown = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(unknown.kind(), ErrorKind::Usage);
  EXPECT_EQ(unknown.message(), "communicator: must be one of auto, nccl, copy-engine, got 'ucc'");
  options.backend = "cpu";
  options.communicator = "nccl";
  Error nccl = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(nccl.kind(), ErrorKind::Usage);
  EXPECT_EQ(nccl.message(), "backend cpu cannot use the nccl communicator, which needs CUDA devices");
}

// The serial reference (`hostir run --check`'s): the CPU on in-process
// ranks, one stream each, whatever the options' backend would choose.
TEST(ApiRunReference, TheReferenceGivesTheProduct) {
  const int64_t M = 12, K = 16, N = 8;
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::vector<float> x = randomValues(M * K, 11), w = randomValues(N * K, 12), y(M * N, NAN);
  hostir::api::RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 3}};
  options.ranks = 2;
  options.reference = true;
  hostir::api::run(p, {{"x", bufferOf(x, {M, K})}, {"w", bufferOf(w, {N, K})}}, {{"y", bufferOf(y, {M, N})}}, options);
  expectClose(y, product(x, M, K, N, [&](int64_t k, int64_t n) { return w[n * K + k]; }));
}

TEST(ApiRunReference, WhatIsNotTheHostsIsRefused) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 4}, {"K", 4}, {"N", 4}, {"S", 2}};
  options.reference = true;
  options.backend = "cuda";
  Error cuda = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(cuda.kind(), ErrorKind::Usage);
  EXPECT_NE(cuda.message().find("CPU backend"), std::string::npos) << cuda.message();
  options.backend = "auto";
  options.graph = true;
  EXPECT_EQ(errorOf([&] { hostir::api::run(p, {}, {}, options); }).kind(), ErrorKind::Usage);
}

// Each timed run's host time until its work was issued: one per timed run,
// within the run.
TEST(ApiRunStats, IssueTimesAreWithinTheirRuns) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 64}, {"K", 64}, {"N", 64}, {"S", 4}};
  options.ranks = 2;
  options.warmup = 1;
  options.repeat = 4;
  const hostir::api::RunStats stats = hostir::api::run(p, {}, {}, options);
  ASSERT_EQ(stats.runMillis.size(), 4u);
  ASSERT_EQ(stats.issueMillis.size(), 4u);
  for (size_t run = 0; run < 4; ++run) {
    EXPECT_GT(stats.issueMillis[run], 0.0) << run;
    EXPECT_LE(stats.issueMillis[run], stats.runMillis[run]) << run;
  }
}

TEST(ApiRunSeeds, SameSeedSameOutputsOtherSeedOthers) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 4}, {"K", 4}, {"N", 4}, {"S", 2}};
  options.ranks = 2;
  auto outputWithSeed = [&](uint64_t seed) {
    std::vector<float> y(16);
    options.seed = seed;
    hostir::api::run(p, {}, {{"y", bufferOf(y, {4, 4})}}, options);
    return y;
  };
  EXPECT_EQ(outputWithSeed(5), outputWithSeed(5));
  EXPECT_NE(outputWithSeed(5), outputWithSeed(6));
}

TEST(ApiRunErrors, BuffersMustMatchTheDeclarations) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 4}, {"K", 4}, {"N", 4}};
  std::vector<float> small(4), y(16);
  Error shape = errorOf([&] { hostir::api::run(p, {{"x", bufferOf(small, {2, 2})}}, {}, options); });
  EXPECT_EQ(shape.kind(), ErrorKind::Usage);
  EXPECT_NE(shape.message().find("f32[2, 2]"), std::string::npos) << shape.message();
  EXPECT_NE(shape.message().find("f32[4, 4]"), std::string::npos) << shape.message();
  Error name = errorOf([&] { hostir::api::run(p, {}, {{"x", bufferOf(y, {4, 4})}}, options); });
  EXPECT_EQ(name.kind(), ErrorKind::Usage);
  std::vector<double> wide(16);
  Error dtype = errorOf([&] {
    hostir::api::run(p, {{"w", HostBuffer{DType::F64, {4, 4}, wide.data()}}}, {}, options);
  });
  EXPECT_EQ(dtype.kind(), ErrorKind::Usage);
  options.ranks = 3;  // K = 4 does not split into 3 shards
  Error split = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(split.kind(), ErrorKind::Program);
  EXPECT_GT(split.line(), 0);
}

// Stream 0 copies y while main adds into it: a race on y.
std::string racy() { return hostir::testing::testProgramText("api/programs/racy_copy_and_add.hir"); }

TEST(ApiRunErrors, ARacyProgramIsRefusedUnlessUnchecked) {
  Program p = Program::fromText(racy(), "racy.hir");
  Error e = errorOf([&] { hostir::api::run(p, {}, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::Check);
  EXPECT_NE(std::string(e.what()).find("racy.hir:7:"), std::string::npos) << e.what();
}

std::string doubling();  // below: a program whose streams are ordered

TEST(ApiRunRaces, ARaceCheckedRunReportsEachRaceWithItsPositions) {
  Program p = Program::fromText(racy(), "racy.hir");
  hostir::api::RunOptions options;
  options.checked = false;  // the proof would refuse it before it runs
  options.raceCheck = true;
  hostir::api::RunStats stats = hostir::api::run(p, {}, {}, options);
  ASSERT_FALSE(stats.races.empty());
  // The copy on stream(0) and the add on main touch y with nothing ordering them.
  EXPECT_NE(stats.races.front().find("racy.hir:7:"), std::string::npos) << stats.races.front();
  EXPECT_NE(stats.races.front().find("racy.hir:9:"), std::string::npos) << stats.races.front();
  options.raceCheck = false;
  EXPECT_TRUE(hostir::api::run(p, {}, {}, options).races.empty());
  // The ordered program has none.
  options.raceCheck = true;
  options.checked = true;
  EXPECT_TRUE(hostir::api::run(Program::fromText(doubling(), "doubling.hir"), {}, {}, options).races.empty());
}

TEST(ApiRunErrors, TheTestingAidsAndTheTraceLimitHaveBounds) {
  Program p = Program::fromText(racy(), "racy.hir");
  hostir::api::RunOptions options;
  options.traceLimitMiB = 0;
  EXPECT_EQ(errorOf([&] { hostir::api::run(p, {}, {}, options); }).kind(), ErrorKind::Usage);
  options.traceLimitMiB = hostir::kMaxTraceLimitMiB + 1;
  EXPECT_EQ(errorOf([&] { hostir::api::run(p, {}, {}, options); }).kind(), ErrorKind::Usage);
  options.traceLimitMiB = hostir::kDefaultTraceLimitMiB;
  options.injectDelaysMicros = hostir::kMaxInjectedDelayMicros + 1;
  EXPECT_EQ(errorOf([&] { hostir::api::run(p, {}, {}, options); }).kind(), ErrorKind::Usage);
}

TEST(ApiRunRemarks, ARunsPassesTellWhatTheyDid) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.ranks = 2;
  options.passes = {"assign-streams"};
  std::vector<std::string> remarks;
  options.onRemark = [&](const std::string& remark) { remarks.push_back(remark); };
  hostir::api::run(p, {}, {}, options);
  std::vector<std::string> expected;
  hostir::api::PassOptions passOptions;
  passOptions.ranks = 2;
  hostir::api::applyPasses(p, {"assign-streams"}, passOptions, &expected);
  EXPECT_FALSE(remarks.empty());
  EXPECT_EQ(remarks, expected);
}

// y doubles at each of S allreduces (sum over 2 ranks of the same y).
std::string doubling() { return hostir::testing::testProgramText("api/programs/doubling.hir"); }

// The threads of this process (Linux), to see that a run leaves none behind.
size_t threadCount() {
  auto tasks = std::filesystem::directory_iterator("/proc/self/task");
  return static_cast<size_t>(std::distance(tasks, std::filesystem::directory_iterator()));
}

TEST(ApiRunCancel, EveryRankStopsAndTheNextRunWorks) {
  Program p = Program::fromText(doubling(), "doubling.hir");
  std::vector<float> x(64, 1.0f), y(64, 0.0f);
  HostBuffer in = bufferOf(x, {64}), out = bufferOf(y, {64});
  hostir::api::RunOptions options;
  options.ranks = 2;
  options.params = {{"S", 100}};  // a short proof, then runs of 100 allreduces
  options.repeat = 1'000'000;     // many minutes, unless cancelled
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  // ThreadSanitizer starts a thread of its own with the process's first
  // other thread: make one first, so that the count sees only the run's.
  std::thread([] {}).join();
  const size_t threadsBefore = threadCount();
  std::optional<Error> error;
  std::thread caller([&] { error = errorOf([&] { hostir::api::run(p, {{"x", in}}, {{"y", out}}, options); }); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto cancelled = std::chrono::steady_clock::now();
  cancel = true;
  caller.join();
  auto stopped = std::chrono::steady_clock::now() - cancelled;
  EXPECT_LT(stopped, std::chrono::seconds(1));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind(), ErrorKind::Run);
  EXPECT_NE(std::string(error->what()).find("the run was cancelled"), std::string::npos) << error->what();
  // Every rank's thread and every stream's thread was joined.
  EXPECT_EQ(threadCount(), threadsBefore);

  // The next run, not cancelled, works: y = x * 2^S.
  cancel = false;
  options.params = {{"S", 3}};
  options.repeat = 1;
  hostir::api::run(p, {{"x", in}}, {{"y", out}}, options);
  for (float v : y) EXPECT_EQ(v, 8.0f);
}

TEST(ApiRunCancel, ARunCancelledBeforeItStartsRunsNothing) {
  Program p = Program::fromText(doubling(), "doubling.hir");
  std::atomic<bool> cancel{true};
  hostir::api::RunOptions options;
  options.ranks = 3;
  options.cancel = &cancel;
  Error e = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(e.kind(), ErrorKind::Run);
  EXPECT_EQ(e.message(), "the run was cancelled");
}

TEST(ApiRunTrace, TheTraceFileIsWrittenAndItsSizeReturned) {
  Program p = Program::fromText(doubling(), "doubling.hir");
  const std::string path = testing::TempDir() + "api_run_trace.json";
  std::filesystem::remove(path);
  hostir::api::RunOptions options;
  options.ranks = 2;
  options.tracePath = path;
  hostir::api::RunStats stats = hostir::api::run(p, {}, {}, options);
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(stats.traceBytes, text.size());
  EXPECT_FALSE(stats.traceTruncated);
  // Both ranks' allreduces, named by their statement's position.
  EXPECT_NE(text.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(text.find("doubling.hir:7:"), std::string::npos);
}

TEST(ApiCheckErrors, ACheckErrorListsItsFindingsWithPositions) {
  Program p = Program::fromText(racy(), "racy.hir");
  Error e = errorOf([&] { hostir::api::check(p); });
  EXPECT_EQ(e.kind(), ErrorKind::Check);
  ASSERT_EQ(e.findings().size(), 1u) << e.what();
  const hostir::api::Finding& race = e.findings()[0];
  EXPECT_EQ(race.file, "racy.hir");
  EXPECT_EQ(race.severity, "error");
  EXPECT_TRUE(race.line == 7 || race.line == 9) << e.what();
  EXPECT_EQ((std::tuple{e.file(), e.line(), e.column()}), (std::tuple{race.file, race.line, race.column}));
  ASSERT_FALSE(race.notes.empty()) << e.what();
  EXPECT_EQ(race.notes[0].file, "racy.hir");
  EXPECT_GT(race.notes[0].line, 0);
}

TEST(ApiCheckErrors, AnErrorWithoutAPositionHasOneFindingWithout) {
  Program p = Program::fromText(doubling(), "doubling.hir");
  hostir::api::CheckOptions noRanks;
  noRanks.ranks = 0;
  Error e = errorOf([&] { hostir::api::check(p, noRanks); });
  ASSERT_EQ(e.findings().size(), 1u);
  EXPECT_EQ(e.findings()[0].file, "");
  EXPECT_EQ(e.findings()[0].line, 0);
  EXPECT_EQ(e.findings()[0].message, e.message());
}

}  // namespace

// An input the program never writes is read in place on the CPU: the run
// holds no copy of it (its peak memory is the output's), and the caller's
// array is what the program read. An input the program writes is copied, so
// the caller's array never changes.
TEST(ApiRunInputs, AnInputNeverWrittenIsReadInPlace) {
  constexpr int64_t kElements = 1 << 20;  // 4 MiB of f32
  const std::string text = fmt::format(
      "program p() {{\n  input x : f32[{0}] shard(0)\n  output y : f32[{0}] shard(0)\n"
      "  y = allocate(f32[{0} / world])\n  copy(x, out=y)\n}}\n",
      kElements);
  Program p = Program::fromText(text, "p.hir");
  hostir::api::HostArray x = hostir::api::HostArray::zeros(DType::F32, {kElements});
  hostir::api::HostArray y = hostir::api::HostArray::zeros(DType::F32, {kElements});
  auto* values = reinterpret_cast<float*>(x.data.data());
  for (int64_t i = 0; i < kElements; ++i) values[i] = static_cast<float>(i % 1000);
  hostir::api::RunOptions options;
  options.ranks = 2;
  hostir::api::RunStats stats = hostir::api::run(p, {{"x", x.buffer()}}, {{"y", y.buffer()}}, options);
  EXPECT_EQ(y.data, x.data);
  // Each rank holds its half of y (2 MiB), and no copy of x.
  EXPECT_LT(stats.peakMemoryBytes, uint64_t{3} << 20) << stats.peakMemoryBytes;

  const std::string writes = fmt::format(
      "program q() {{\n  input x : f32[{0}]\n  output y : f32[{0}]\n  y = allocate(f32[{0}])\n"
      "  h = allreduce(x)\n  wait(h)\n  copy(x, out=y)\n}}\n",
      kElements);
  const std::vector<std::byte> before = x.data;
  stats = hostir::api::run(Program::fromText(writes, "q.hir"), {{"x", x.buffer()}}, {{"y", y.buffer()}}, options);
  EXPECT_EQ(x.data, before);
  EXPECT_EQ(reinterpret_cast<float*>(y.data.data())[999], 2.0f * 999);
  EXPECT_GE(stats.peakMemoryBytes, uint64_t{8} << 20) << stats.peakMemoryBytes;
}
