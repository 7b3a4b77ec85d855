// Runs through the public API on in-process teams, against references the
// test computes itself with plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"

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
  // At least each rank's shards of x and w and its whole y.
  EXPECT_GE(stats.peakMemoryBytes, uint64_t{4} * (M * K / ranks + N * K / ranks + M * N));
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
  EXPECT_NE(unknown.message().find("\"copy-engine\""), std::string::npos) << unknown.message();
  options.backend = "cpu";
  options.communicator = "nccl";
  Error nccl = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_EQ(nccl.kind(), ErrorKind::Usage);
  EXPECT_EQ(nccl.message(), "backend cpu cannot use the nccl communicator, which needs CUDA devices");
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

TEST(ApiRunErrors, ARacyProgramIsRefusedUnlessUnchecked) {
  const char* racy = R"(program racy() {
  output y : f32[4]
  y = allocate(f32[4], zero=true)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(y, out=y)
  set_current_stream(main)
  add(y, y, out=y)
  synchronize(stream(0))
}
)";
  Program p = Program::fromText(racy, "racy.hir");
  Error e = errorOf([&] { hostir::api::run(p, {}, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::Check);
  EXPECT_NE(std::string(e.what()).find("racy.hir:7:"), std::string::npos) << e.what();
}

}  // namespace
