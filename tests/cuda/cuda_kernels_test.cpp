// The CUDA backend's hardest computations issued straight to the backend
// (Backend::compute with a KernelCall, no program, no CPU kernel), against
// straightforward f64 loops written here: attention (GQA, MQA on strided
// keys, causal offsets, rows that see no key, lse, no keys at all, many
// blocks of query rows), merge_attention with −inf on either side,
// scatter_add_rows with repeated rows and −1, gather_rows, matmul's
// transposes and batch axis, softmax and rms_norm on strided rows; and an
// index out of range reported once, at the statement that issued it. With
// cuda_operations_test (the same operations against the CPU backend) a
// disagreement can be placed on one side. Skipped without a usable device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/in_process_communicator.h"
#include "executor/backend_factory.h"
#include "executor/cuda/cuda_attention.h"
#include "ir/element.h"

namespace hostir {
namespace {

using Values = std::vector<double>;

// `values` as `dtype` would hold them (rounded to nearest even).
Values rounded(DType dtype, const Values& values) {
  Values out(values.size());
  std::byte element[8];
  for (size_t i = 0; i < values.size(); ++i) {
    storeElement<double>(dtype, element, values[i]);
    out[i] = loadElement<double>(dtype, element);
  }
  return out;
}

Values uniform(size_t count, uint32_t seed, double scale = 1.0) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  Values v(count);
  for (double& x : v) x = dist(engine);
  return v;
}

// Element [i, j] of a row-major matrix with `cols` columns.
double at(const Values& m, int64_t cols, int64_t i, int64_t j) { return m[static_cast<size_t>(i * cols + j)]; }

// `actual` within tol · (|expected| + rms(expected)) of `expected`, an
// infinite expected value matched exactly; names the worst element.
void expectClose(const Values& actual, const Values& expected, double tol, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  double squares = 0;
  size_t finite = 0;
  for (double e : expected)
    if (std::isfinite(e)) squares += e * e, ++finite;
  const double rms = finite ? std::sqrt(squares / static_cast<double>(finite)) : 0.0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!std::isfinite(expected[i])) {
      EXPECT_EQ(actual[i], expected[i]) << what << " element " << i;
      continue;
    }
    EXPECT_LE(std::abs(actual[i] - expected[i]), tol * (std::abs(expected[i]) + rms))
        << what << " element " << i << ": " << actual[i] << ", expected " << expected[i];
  }
}

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::F64: return 1e-10;
    case DType::F32: return 2e-5;
    case DType::F16: return 4e-3;
    case DType::BF16: return 3e-2;
    case DType::I32: return 0;
  }
  return 0;
}

// One rank's CUDA backend, driven by hand.
class CudaKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::optional<std::string> reason = cudaUnavailableReason()) GTEST_SKIP() << *reason;
    comm_ = team_.communicator(0);
    BackendOptions options;
    options.kind = BackendKind::Cuda;
    options.streams = 2;
    options.communicator = CommunicatorChoice::CopyEngine;
    rank_ = createBackend(options, *comm_);
    backend().beginRun();
  }

  Backend& backend() { return *rank_.backend; }
  Stream* main() { return backend().mainStream(); }

  // A new tensor holding `values` (rounded to dtype).
  TensorView tensor(DType dtype, const Dims& shape, const Values& values) {
    TensorView t = backend().allocate(dtype, shape, main(), false);
    std::vector<std::byte> host(t.bytes());
    for (size_t i = 0; i < values.size(); ++i)
      storeElement<double>(dtype, host.data() + i * dtypeSize(dtype), values[i]);
    backend().upload(host.data(), t);
    return t;
  }
  TensorView indices(const Dims& shape, const std::vector<int32_t>& values) {
    Values v(values.begin(), values.end());
    return tensor(DType::I32, shape, v);
  }
  TensorView zeros(DType dtype, const Dims& shape) { return backend().allocate(dtype, shape, main(), true); }

  // The elements of `t` once the streams are idle (throws what synchronizeHost throws).
  Values read(const TensorView& t) {
    backend().synchronizeHost();
    std::vector<std::byte> host(t.bytes());
    backend().download(t, host.data());
    Values v(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = loadElement<double>(t.dtype, host.data() + i * dtypeSize(t.dtype));
    return v;
  }

  void compute(const KernelCall& call, SourceLoc loc = {}) {
    OperationInfo info{call.kind, loc, {}, {}};
    backend().beginOperation(info);
    backend().compute(main(), call);
  }

 private:
  InProcessTeam team_{1};
  std::unique_ptr<Communicator> comm_;
  RankBackend rank_;
};

// ---- attention -------------------------------------------------------------------

struct AttentionCase {
  DType dtype = DType::F32;
  int64_t queries = 24, keys = 40, heads = 4, kvHeads = 2, headDim = 16;
  bool causal = false;
  int64_t qOffset = 0, kOffset = 0;
  bool stridedKeys = false;  // k and v are one head's columns of wider tensors
  size_t budget = 0;         // nonzero: the scores budget (many blocks)
};

struct AttentionReference {
  Values o, lse;
};

AttentionReference referenceAttention(const AttentionCase& c, const Values& q, const Values& k, const Values& v) {
  const int64_t qCols = c.heads * c.headDim, kCols = c.kvHeads * c.headDim;
  AttentionReference r{Values(static_cast<size_t>(c.queries * qCols), 0.0),
                       Values(static_cast<size_t>(c.queries * c.heads), -INFINITY)};
  for (int64_t t = 0; t < c.queries; ++t) {
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t g = h * c.kvHeads / c.heads;
      Values scores;
      std::vector<int64_t> seen;
      for (int64_t j = 0; j < c.keys; ++j) {
        if (c.causal && c.kOffset + j > c.qOffset + t) continue;
        double dot = 0;
        for (int64_t d = 0; d < c.headDim; ++d)
          dot += at(q, qCols, t, h * c.headDim + d) * at(k, kCols, j, g * c.headDim + d);
        scores.push_back(dot / std::sqrt(static_cast<double>(c.headDim)));
        seen.push_back(j);
      }
      if (scores.empty()) continue;
      const double m = *std::max_element(scores.begin(), scores.end());
      double sum = 0;
      for (double s : scores) sum += std::exp(s - m);
      for (size_t n = 0; n < seen.size(); ++n)
        for (int64_t d = 0; d < c.headDim; ++d)
          r.o[static_cast<size_t>(t * qCols + h * c.headDim + d)] +=
              std::exp(scores[n] - m) / sum * at(v, kCols, seen[n], g * c.headDim + d);
      r.lse[static_cast<size_t>(t * c.heads + h)] = m + std::log(sum);
    }
  }
  return r;
}

class CudaAttentionTest : public CudaKernelsTest {
 protected:
  void check(const AttentionCase& c) {
    using O = operands::Attention;
    const int64_t qCols = c.heads * c.headDim, kCols = c.kvHeads * c.headDim;
    const Values q = rounded(c.dtype, uniform(static_cast<size_t>(c.queries * qCols), 1, 2.0));
    const Values k = rounded(c.dtype, uniform(static_cast<size_t>(c.keys * kCols), 2, 2.0));
    const Values v = rounded(c.dtype, uniform(static_cast<size_t>(c.keys * kCols), 3));
    TensorView qt = tensor(c.dtype, Dims{c.queries, qCols}, q);
    // Strided keys: the values above are column block 1 of 3 of a wider tensor.
    TensorView kt, vt;
    if (c.stridedKeys) {
      Values wide(static_cast<size_t>(c.keys * kCols * 3), 7.0), wideV = wide;
      for (int64_t j = 0; j < c.keys; ++j)
        for (int64_t e = 0; e < kCols; ++e) {
          wide[static_cast<size_t>(j * kCols * 3 + kCols + e)] = at(k, kCols, j, e);
          wideV[static_cast<size_t>(j * kCols * 3 + kCols + e)] = at(v, kCols, j, e);
        }
      kt = tensor(c.dtype, Dims{c.keys, kCols * 3}, wide).chunk(1, 1, 3);
      vt = tensor(c.dtype, Dims{c.keys, kCols * 3}, wideV).chunk(1, 1, 3);
    } else {
      kt = tensor(c.dtype, Dims{c.keys, kCols}, k);
      vt = tensor(c.dtype, Dims{c.keys, kCols}, v);
    }
    TensorView o = zeros(c.dtype, Dims{c.queries, qCols});
    TensorView lse = zeros(DType::F32, Dims{c.queries, c.heads});
    KernelCall call{OpKind::Attention};
    call.operands[O::q] = &qt;
    call.operands[O::k] = &kt;
    call.operands[O::v] = &vt;
    call.operands[O::out] = &o;
    call.operands[O::lse] = &lse;
    call.integers[O::heads] = c.heads;
    call.integers[O::kv_heads] = c.kvHeads;
    call.scalars[O::causal] = c.causal ? 1 : 0;
    call.integers[O::q_offset] = c.qOffset;
    call.integers[O::k_offset] = c.kOffset;
    const size_t saved = cuda::attentionScoresBudget();
    if (c.budget) cuda::setAttentionScoresBudget(c.budget);
    compute(call);
    cuda::setAttentionScoresBudget(saved);
    const AttentionReference expected = referenceAttention(c, q, k, v);
    expectClose(read(o), expected.o, tolerance(c.dtype), "o");
    // Half inputs: the scores of rounded inputs are exact to f32's precision, the lse too.
    expectClose(read(lse), expected.lse, c.dtype == DType::F64 ? 1e-6 : 1e-4, "lse");
  }
};

TEST_F(CudaAttentionTest, GroupedQueryHeads) { check({}); }

TEST_F(CudaAttentionTest, CausalWithRowsThatSeeNoKey) { check({.causal = true, .qOffset = 0, .kOffset = 10}); }

TEST_F(CudaAttentionTest, CausalInBlocksOfAFewRows) {
  check({.causal = true, .qOffset = 5, .kOffset = 12, .budget = 2048});
  check({.dtype = DType::BF16, .causal = true, .qOffset = 16, .kOffset = 0, .budget = 2048});
}

TEST_F(CudaAttentionTest, HalfTypesComputeInF32) {
  check({.dtype = DType::BF16, .heads = 4, .kvHeads = 1, .headDim = 32});
  check({.dtype = DType::F16, .causal = true, .qOffset = 20, .kOffset = 3});
}

TEST_F(CudaAttentionTest, MultiQueryOnStridedKeysInF64) {
  check({.dtype = DType::F64, .heads = 4, .kvHeads = 1, .causal = true, .qOffset = 16, .stridedKeys = true});
}

TEST_F(CudaAttentionTest, NoKeysGiveZerosAndMinusInfinity) {
  check({.queries = 3, .keys = 0, .heads = 2, .kvHeads = 2, .headDim = 8});
}

// ---- merge_attention -------------------------------------------------------------

TEST_F(CudaKernelsTest, MergeAttentionFoldsEitherSideAndSkipsMinusInfinity) {
  using O = operands::MergeAttention;
  for (DType dtype : {DType::F32, DType::BF16}) {
    const int64_t rows = 5, heads = 3, dim = 4, cols = heads * dim;
    const Values o = rounded(dtype, uniform(static_cast<size_t>(rows * cols), 11));
    const Values part = rounded(dtype, uniform(static_cast<size_t>(rows * cols), 12));
    Values lse = rounded(DType::F32, uniform(static_cast<size_t>(rows * heads), 13, 3.0));
    Values partLse = rounded(DType::F32, uniform(static_cast<size_t>(rows * heads), 14, 3.0));
    lse[1] = -INFINITY;                 // only the part
    partLse[4] = -INFINITY;             // only the running result
    lse[7] = partLse[7] = -INFINITY;    // neither: unchanged
    lse[9] = 40.0, partLse[9] = -40.0;  // far apart
    Values expectedO = o, expectedLse = lse;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t h = 0; h < heads; ++h) {
        const size_t i = static_cast<size_t>(r * heads + h);
        const double a = lse[i], b = partLse[i];
        if (b == -INFINITY) continue;
        const double m = std::max(a, b);
        const double wa = a == -INFINITY ? 0.0 : std::exp(a - m), wb = std::exp(b - m);
        for (int64_t d = 0; d < dim; ++d) {
          const size_t e = static_cast<size_t>(r * cols + h * dim + d);
          expectedO[e] = (wa * o[e] + wb * part[e]) / (wa + wb);
        }
        expectedLse[i] = m + std::log(wa + wb);
      }
    TensorView ot = tensor(dtype, Dims{rows, cols}, o), pt = tensor(dtype, Dims{rows, cols}, part);
    TensorView lt = tensor(DType::F32, Dims{rows, heads}, lse), plt = tensor(DType::F32, Dims{rows, heads}, partLse);
    KernelCall call{OpKind::MergeAttention};
    call.operands[O::o] = &ot;
    call.operands[O::lse] = &lt;
    call.operands[O::part] = &pt;
    call.operands[O::part_lse] = &plt;
    compute(call);
    expectClose(read(ot), expectedO, tolerance(dtype), fmt::format("o ({})", dtypeName(dtype)));
    expectClose(read(lt), expectedLse, 1e-6, fmt::format("lse ({})", dtypeName(dtype)));
  }
}

// ---- row indexing ----------------------------------------------------------------

TEST_F(CudaKernelsTest, GatherRowsCopiesRowsAndZerosForMinusOne) {
  using O = operands::GatherRows;
  const int64_t rows = 6, width = 10;
  const Values x = rounded(DType::BF16, uniform(static_cast<size_t>(rows * width), 21));
  const std::vector<int32_t> idx = {5, -1, 0, 5, 2, -1, 3, 1};
  TensorView xt = tensor(DType::BF16, Dims{rows, width}, x);
  TensorView it = indices(Dims{2, 4}, idx);
  TensorView out = zeros(DType::BF16, Dims{2, 4, width});
  KernelCall call{OpKind::GatherRows};
  call.operands[O::x] = &xt;
  call.operands[O::idx] = &it;
  call.operands[O::out] = &out;
  compute(call);
  Values expected;
  for (int32_t r : idx)
    for (int64_t c = 0; c < width; ++c) expected.push_back(r < 0 ? 0.0 : at(x, width, r, c));
  EXPECT_EQ(read(out), expected);
}

TEST_F(CudaKernelsTest, ScatterAddRowsAddsRepeatedRowsInOrder) {
  using O = operands::ScatterAddRows;
  const int64_t rows = 5, width = 300, entries = 7;
  const std::vector<int32_t> idx = {4, 1, -1, 4, 0, 4, 1};
  const Values y = uniform(static_cast<size_t>(rows * width), 31);
  const Values src = uniform(static_cast<size_t>(entries * width), 32);
  // f32 rounds after every addition, in idx's order: the reference does too.
  Values expected = rounded(DType::F32, y);
  const Values srcF32 = rounded(DType::F32, src);
  for (int64_t e = 0; e < entries; ++e) {
    if (idx[static_cast<size_t>(e)] < 0) continue;
    for (int64_t c = 0; c < width; ++c) {
      double& target = expected[static_cast<size_t>(idx[static_cast<size_t>(e)] * width + c)];
      target = static_cast<double>(static_cast<float>(target) + static_cast<float>(at(srcF32, width, e, c)));
    }
  }
  TensorView yt = tensor(DType::F32, Dims{rows, width}, y);
  TensorView st = tensor(DType::F32, Dims{entries, width}, src);
  TensorView it = indices(Dims{entries}, idx);
  KernelCall call{OpKind::ScatterAddRows};
  call.operands[O::src] = &st;
  call.operands[O::idx] = &it;
  call.operands[O::out] = &yt;
  compute(call);
  EXPECT_EQ(read(yt), expected);  // bit for bit: the same additions in the same order
}

// Reported once, at the statement, and treated as −1 meanwhile.
TEST_F(CudaKernelsTest, AnIndexOutOfRangeIsTheStatementsErrorAtTheNextSynchronization) {
  using O = operands::GatherRows;
  TensorView xt = tensor(DType::F32, Dims{4, 3}, uniform(12, 41));
  TensorView it = indices(Dims{3}, {1, 4, -1});
  TensorView out = zeros(DType::F32, Dims{3, 3});
  KernelCall call{OpKind::GatherRows};
  call.operands[O::x] = &xt;
  call.operands[O::idx] = &it;
  call.operands[O::out] = &out;
  compute(call, SourceLoc{12, 5});
  try {
    backend().synchronizeHost();
    ADD_FAILURE() << "no error for index 4 of 4 rows";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diag.loc, (SourceLoc{12, 5}));
    EXPECT_NE(e.diag.message.find("index 4 of 'idx' is out of range for 'x'"), std::string::npos) << e.diag.message;
  }
  const Values got = read(out);  // cleared: no second report
  EXPECT_EQ(got[3], 0.0);
  EXPECT_EQ(got[4], 0.0);
}

// ---- matmul, softmax, rms_norm ---------------------------------------------------

TEST_F(CudaKernelsTest, MatmulTransposesAndBatch) {
  using O = operands::Matmul;
  const int64_t batches = 3, m = 5, k = 7, n = 4;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Values a = rounded(DType::F32, uniform(static_cast<size_t>(batches * m * k), 51));
      const Values b = rounded(DType::F32, uniform(static_cast<size_t>(batches * k * n), 52));
      TensorView at_ = tensor(DType::F32, ta ? Dims{batches, k, m} : Dims{batches, m, k}, a);
      TensorView bt = tensor(DType::F32, tb ? Dims{batches, n, k} : Dims{batches, k, n}, b);
      TensorView out = zeros(DType::F32, Dims{batches, m, n});
      KernelCall call{OpKind::Matmul};
      call.operands[O::a] = &at_;
      call.operands[O::b] = &bt;
      call.operands[O::out] = &out;
      call.scalars[O::transpose_a] = ta;
      call.scalars[O::transpose_b] = tb;
      compute(call);
      Values expected;
      for (int64_t p = 0; p < batches; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t l = 0; l < k; ++l) {
              const double av =
                  ta ? a[static_cast<size_t>(p * k * m + l * m + i)] : a[static_cast<size_t>(p * m * k + i * k + l)];
              const double bv =
                  tb ? b[static_cast<size_t>(p * n * k + j * k + l)] : b[static_cast<size_t>(p * k * n + l * n + j)];
              sum += av * bv;
            }
            expected.push_back(sum);
          }
      expectClose(read(out), expected, tolerance(DType::F32), fmt::format("transpose_a={} transpose_b={}", ta, tb));
    }
}

// Rows of the second half of a [3, 2·N] tensor (row stride 2·N), N past a block's threads.
TEST_F(CudaKernelsTest, SoftmaxAndRmsNormOnStridedRows) {
  const int64_t rows = 3, n = 700;
  const Values x = rounded(DType::F32, uniform(static_cast<size_t>(rows * 2 * n), 61, 6.0));
  const Values w = rounded(DType::F32, uniform(static_cast<size_t>(n), 62));
  TensorView xt = tensor(DType::F32, Dims{rows, 2 * n}, x).chunk(1, 1, 2);
  TensorView wt = tensor(DType::F32, Dims{n}, w);
  TensorView soft = zeros(DType::F32, Dims{rows, n}), norm = zeros(DType::F32, Dims{rows, n});
  KernelCall softmax{OpKind::Softmax};
  softmax.operands[operands::Unary::x] = &xt;
  softmax.operands[operands::Unary::out] = &soft;
  compute(softmax);
  KernelCall rmsNorm{OpKind::RmsNorm};
  rmsNorm.operands[operands::RmsNorm::x] = &xt;
  rmsNorm.operands[operands::RmsNorm::w] = &wt;
  rmsNorm.operands[operands::RmsNorm::out] = &norm;
  rmsNorm.scalars[operands::RmsNorm::eps] = 1e-5;
  compute(rmsNorm);
  Values expectedSoft, expectedNorm;
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0, squares = 0;
    for (int64_t c = 0; c < n; ++c) m = std::max(m, at(x, 2 * n, r, n + c));
    for (int64_t c = 0; c < n; ++c) sum += std::exp(at(x, 2 * n, r, n + c) - m);
    for (int64_t c = 0; c < n; ++c) squares += at(x, 2 * n, r, n + c) * at(x, 2 * n, r, n + c);
    const double inverse = 1.0 / std::sqrt(squares / static_cast<double>(n) + 1e-5);
    for (int64_t c = 0; c < n; ++c) {
      expectedSoft.push_back(std::exp(at(x, 2 * n, r, n + c) - m) / sum);
      expectedNorm.push_back(at(x, 2 * n, r, n + c) * inverse * w[static_cast<size_t>(c)]);
    }
  }
  expectClose(read(soft), expectedSoft, tolerance(DType::F32), "softmax");
  expectClose(read(norm), expectedNorm, tolerance(DType::F32), "rms_norm");
}

}  // namespace
}  // namespace hostir
