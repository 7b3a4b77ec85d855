// Values at the edges of their types, and what a run must not do without a
// word: attributes applied exactly (scale's factor), causal masks at the
// largest offsets, replicated outputs whose ranks disagree, inputs missing
// from a call. Each reference is computed here with plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <string>
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
using hostir::api::RunOptions;
using hostir::api::testing::errorOf;

constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();

// `v` as program text that reads back as the same double.
std::string exactly(double v) {
  std::ostringstream text;
  text << std::setprecision(17) << v;
  return text.str();
}

// One run of `text` on in-process ranks, as the run or as --check's serial reference.
void runOn(const Program& p, std::vector<float>& x, std::vector<float>& y, int64_t ranks, bool reference) {
  RunOptions options;
  options.ranks = ranks;
  options.reference = reference;
  const auto n = static_cast<int64_t>(x.size());
  hostir::api::run(p, {{"x", HostBuffer{DType::F32, {n}, x.data()}}}, {{"y", HostBuffer{DType::F32, {n}, y.data()}}},
                   options);
}

// A factor f32 would round (to a denormal, to inf) multiplies as written:
// each element is the f64 product rounded once to f32.
TEST(ApiEdges, ScaleAppliesItsFactorExactly) {
  for (double by : {1e-45, 3.5e38, 0.1, -2.5e-40}) {
    const Program p = Program::fromText(
        "program s() {\n  input x : f32[6]\n  output y : f32[6]\n  y = scale(x, by=" + exactly(by) + ")\n}\n");
    std::vector<float> x = {1.0f, 0.5f, -3.0f, 1e-3f, 7.25f, 0.0f};
    for (bool reference : {false, true}) {
      std::vector<float> y(x.size(), NAN);
      runOn(p, x, y, 1, reference);
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(y[i], static_cast<float>(static_cast<double>(x[i]) * by))
            << "by=" << by << " x=" << x[i] << (reference ? " (reference)" : "");
    }
  }
}

// Causal attention whose offsets put every key before every query, at
// positions up to 2^63 - 1: every key is seen, as without the mask; the
// other way round, none is (zeros, lse -inf).
TEST(ApiEdges, CausalMasksHoldAtTheLargestOffsets) {
  const int64_t T = 3, D = 2;
  const Program p = Program::fromText(hostir::testing::testProgramText("api/programs/causal_attention_offsets.hir"));
  std::vector<float> q = {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f}, k = {0.3f, -0.1f, 0.2f, 0.7f, -0.5f, 0.1f},
                     v = {1, 2, 3, 4, 5, 6};
  // Every query sees every key: softmax(q kᵀ / √D) v, by hand.
  std::vector<double> all(T * D), lse(T);
  for (int64_t i = 0; i < T; ++i) {
    std::vector<double> s(T);
    double top = -INFINITY, sum = 0;
    for (int64_t j = 0; j < T; ++j) {
      s[j] = (double(q[i * D]) * k[j * D] + double(q[i * D + 1]) * k[j * D + 1]) / std::sqrt(double(D));
      top = std::max(top, s[j]);
    }
    for (int64_t j = 0; j < T; ++j) sum += std::exp(s[j] - top);
    for (int64_t c = 0; c < D; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < T; ++j) acc += std::exp(s[j] - top) / sum * v[j * D + c];
      all[i * D + c] = acc;
    }
    lse[i] = top + std::log(sum);
  }
  struct Case {
    int64_t qo, ko;
    bool seesAll;
  };
  for (const Case& c : {Case{kMaxInt - (T - 1), 0, true}, Case{kMaxInt - (T - 1), kMaxInt - (T - 1) - T, true},
                        Case{0, kMaxInt - (T - 1), false}})
    for (bool reference : {false, true}) {
      RunOptions options;
      options.params = {{"QO", c.qo}, {"KO", c.ko}};
      options.reference = reference;
      std::vector<float> o(T * D, NAN), l(T, NAN);
      hostir::api::run(
          p,
          {{"q", HostBuffer{DType::F32, {T, D}, q.data()}},
           {"k", HostBuffer{DType::F32, {T, D}, k.data()}},
           {"v", HostBuffer{DType::F32, {T, D}, v.data()}}},
          {{"o", HostBuffer{DType::F32, {T, D}, o.data()}}, {"l", HostBuffer{DType::F32, {T, 1}, l.data()}}}, options);
      const std::string at =
          "q_offset=" + std::to_string(c.qo) + " k_offset=" + std::to_string(c.ko) + (reference ? " (reference)" : "");
      for (int64_t i = 0; i < T * D; ++i) EXPECT_NEAR(o[i], c.seesAll ? all[i] : 0.0, 1e-5) << at;
      for (int64_t i = 0; i < T; ++i)
        if (c.seesAll)
          EXPECT_NEAR(l[i], lse[i], 1e-5) << at;
        else
          EXPECT_EQ(l[i], -INFINITY) << at;
    }
}

// A last row past 2^63 - 1 has no position: refused where it is written.
TEST(ApiEdges, APositionPastTheLargestIntegerIsAPositionedError) {
  const Program p = Program::fromText(
      "program a(QO = 0) {\n  input q : f32[3, 2]\n  output o : f32[3, 2]\n"
      "  o = allocate(f32[3, 2])\n  attention(q, q, q, out=o, heads=1, causal=true, q_offset=QO)\n}\n",
      "a.hir");
  RunOptions options;
  options.params = {{"QO", kMaxInt - 1}};
  Error error = errorOf([&] { hostir::api::run(p, {}, {}, options); });
  EXPECT_NE(error.message().find("q_offset=9223372036854775806 puts row 2 at position"), std::string::npos)
      << error.message();
  EXPECT_EQ(error.file(), "a.hir");
  EXPECT_EQ(error.line(), 5);
}

// An output without shard that the ranks compute differently: rank 0's
// comes back, and the comparison names the output, the rank and the element.
TEST(ApiEdges, ReplicatedOutputsWhoseRanksDisagreeAreNamed) {
  const Program p = Program::fromText(hostir::testing::testProgramText("api/programs/rank_two_doubles_its_output.hir"));
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (int64_t ranks : {1, 2, 4}) {
    std::vector<float> y(6, NAN);
    RunOptions options;
    options.ranks = ranks;
    options.checkReplicatedOutputs = true;
    hostir::api::RunStats stats = hostir::api::run(p, {{"x", HostBuffer{DType::F32, {2, 3}, x.data()}}},
                                                   {{"y", HostBuffer{DType::F32, {2, 3}, y.data()}}}, options);
    EXPECT_EQ(y, x) << "rank 0's copy, at " << ranks << " ranks";
    if (ranks < 3) {
      EXPECT_TRUE(stats.replicaDisagreements.empty()) << ranks << " ranks";
      continue;
    }
    ASSERT_EQ(stats.replicaDisagreements.size(), 1u);
    EXPECT_EQ(stats.replicaDisagreements[0],
              "output 'y' is replicated (declared without shard), but its ranks disagree: at element [0, 0], rank 0 "
              "holds 1 and rank 2 holds 2 (ranks that differ from rank 0: 2; the run returns rank 0's)");
    options.checkReplicatedOutputs = false;
    stats = hostir::api::run(p, {{"x", HostBuffer{DType::F32, {2, 3}, x.data()}}},
                             {{"y", HostBuffer{DType::F32, {2, 3}, y.data()}}}, options);
    EXPECT_TRUE(stats.replicaDisagreements.empty());
  }
}

// Some inputs given and others not: an input generator that forgot one.
// None given: every input seeded. Some, with fillMissingInputs: the rest seeded.
TEST(ApiEdges, AMissingInputIsRefusedUnlessNoneIsGivenOrFillingIsAsked) {
  const Program p = Program::fromFile(std::string(HOSTIR_SOURCE_DIR) + "/examples/row_parallel_linear.hir");
  const int64_t M = 4, K = 4, N = 4;
  std::vector<float> x(M * K, 1.0f), w(N * K, 1.0f), y(M * N, NAN);
  RunOptions options;
  options.params = {{"M", M}, {"K", K}, {"N", N}, {"S", 2}};
  const std::map<std::string, HostBuffer> out = {{"y", HostBuffer{DType::F32, {M, N}, y.data()}}};
  Error missing = errorOf([&] {
    hostir::api::run(p, {{"x", HostBuffer{DType::F32, {M, K}, x.data()}}}, out, options);
  });
  EXPECT_EQ(missing.kind(), ErrorKind::Usage);
  EXPECT_NE(missing.message().find("input 'w' is missing"), std::string::npos) << missing.message();
  hostir::api::run(p, {}, out, options);  // every input seeded
  options.fillMissingInputs = true;
  hostir::api::run(p, {{"x", HostBuffer{DType::F32, {M, K}, x.data()}}}, out, options);
  RunOptions strict;
  strict.params = options.params;
  hostir::api::Executable exe(p, strict);
  Error fromExecutable = errorOf([&] { exe.run({{"w", HostBuffer{DType::F32, {N, K}, w.data()}}}, out); });
  EXPECT_NE(fromExecutable.message().find("input 'x' is missing"), std::string::npos) << fromExecutable.message();
}

}  // namespace
