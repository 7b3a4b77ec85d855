#include "executor/cpu/cpu_gemm.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/strided_rows.h"

namespace hostir::cpu {
namespace {

// Copies a matrix into a dense f32 one (for f16/bf16 GEMMs).
std::vector<float> toFloatMatrix(const Matrix& m) {
  std::vector<float> out(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) out[static_cast<size_t>(r * m.cols + c)] = load<float>(m.dtype, m.at(r, c));
  return out;
}

// OpenBLAS checks ld >= max(1, cols) even for an empty matrix.
blasint ldOf(int64_t ld, int64_t cols) { return static_cast<blasint>(std::max({ld, cols, int64_t{1}})); }
blasint dim(int64_t extent) { return static_cast<blasint>(extent); }
CBLAS_TRANSPOSE flagOf(bool transpose) { return transpose ? CblasTrans : CblasNoTrans; }

void blasGemmOf(const Matrix& A, bool transA, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  const int64_t M = C.rows, N = C.cols, K = transA ? A.rows : A.cols;
  if (M == 0 || N == 0) return;
  const BlasLibrary& blas = blasLibrary();
  BlasBufferLease buffer(BlasBufferPool::process());
  switch (C.dtype) {
    case DType::F32:
      blasGemm(blas, transA, transB, M, N, K, 1.0f, reinterpret_cast<const float*>(A.data), ldOf(A.ld, A.cols),
               reinterpret_cast<const float*>(B.data), ldOf(B.ld, B.cols), accumulate ? 1.0f : 0.0f,
               reinterpret_cast<float*>(C.data), ldOf(C.ld, C.cols));
      return;
    case DType::F64:
      blasGemm(blas, transA, transB, M, N, K, 1.0, reinterpret_cast<const double*>(A.data), ldOf(A.ld, A.cols),
               reinterpret_cast<const double*>(B.data), ldOf(B.ld, B.cols), accumulate ? 1.0 : 0.0,
               reinterpret_cast<double*>(C.data), ldOf(C.ld, C.cols));
      return;
    case DType::F16:
    case DType::BF16: {
      std::vector<float> a = toFloatMatrix(A), b = toFloatMatrix(B);
      std::vector<float> c = accumulate ? toFloatMatrix(C) : std::vector<float>(static_cast<size_t>(M * N));
      blasGemm(blas, transA, transB, M, N, K, 1.0f, a.data(), ldOf(A.cols, A.cols), b.data(), ldOf(B.cols, B.cols),
               accumulate ? 1.0f : 0.0f, c.data(), ldOf(N, N));
      for (int64_t r = 0; r < M; ++r)
        for (int64_t col = 0; col < N; ++col) store<float>(C.dtype, C.at(r, col), c[static_cast<size_t>(r * N + col)]);
      return;
    }
    case DType::I32: break;  // the verifier allows no arithmetic on indices
  }
  throw std::logic_error("internal error: a GEMM on i32 tensors");
}

// The serial reference: every product accumulated in f64, rounded once.
void referenceGemm(const Matrix& A, bool transA, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  const int64_t K = transA ? A.rows : A.cols;
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t j = 0; j < C.cols; ++j) {
      double sum = accumulate ? load<double>(C.dtype, C.at(i, j)) : 0.0;
      for (int64_t k = 0; k < K; ++k)
        sum += load<double>(A.dtype, transA ? A.at(k, i) : A.at(i, k)) *
               load<double>(B.dtype, transB ? B.at(j, k) : B.at(k, j));
      store<double>(C.dtype, C.at(i, j), sum);
    }
}

// `t` without its leading axis, at index i along it.
TensorView slice(const TensorView& t, int64_t i) {
  TensorView s = t;
  s.offset += i * t.strides[0];
  s.shape.size = t.shape.size - 1;
  s.strides.size = t.strides.size - 1;
  for (size_t d = 0; d < s.shape.size; ++d) {
    s.shape[d] = t.shape[d + 1];
    s.strides[d] = t.strides[d + 1];
  }
  return s;
}

// Calls f(x2d, out2d) for every 2-D matrix of a batched linear: leading dims
// are merged where both views allow it, otherwise iterated.
template <typename F>
void forEachMatrix(const TensorView& x, const TensorView& out, F&& f) {
  if (x.rank() <= 2) {
    f(x, out);
    return;
  }
  // Merge dim 0 into dim 1 when both strides line up, then recurse.
  auto mergeable = [](const TensorView& t) { return t.strides[0] == t.shape[1] * t.strides[1]; };
  if (mergeable(x) && mergeable(out)) {
    auto merge = [](TensorView t) {
      TensorView m = t;
      m.shape.size = t.shape.size - 1;
      m.strides.size = t.strides.size - 1;
      m.shape[0] = t.shape[0] * t.shape[1];
      m.strides[0] = t.strides[1];
      for (size_t d = 1; d < m.shape.size; ++d) {
        m.shape[d] = t.shape[d + 1];
        m.strides[d] = t.strides[d + 1];
      }
      return m;
    };
    forEachMatrix(merge(x), merge(out), f);
    return;
  }
  for (int64_t i = 0; i < x.shape[0]; ++i) forEachMatrix(slice(x, i), slice(out, i), f);
}

}  // namespace

Matrix matrixOf(const TensorView& t) {
  // A 1-D tensor is one row. Views keep their base's unit innermost stride.
  if (t.rank() == 1) return {t.data(), 1, t.shape[0], t.shape[0], t.dtype};
  return {t.data(), t.shape[0], t.shape[1], t.strides[0], t.dtype};
}

void gemm(GemmKind kind, const Matrix& A, bool transA, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  if (kind == GemmKind::Blas)
    blasGemmOf(A, transA, B, transB, C, accumulate);
  else
    referenceGemm(A, transA, B, transB, C, accumulate);
}

void blasGemm(const BlasLibrary& blas, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  blas.sgemm(CblasRowMajor, flagOf(transA), flagOf(transB), dim(m), dim(n), dim(k), alpha, a, dim(lda), b, dim(ldb),
             beta, c, dim(ldc));
}

void blasGemm(const BlasLibrary& blas, bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha,
              const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  blas.dgemm(CblasRowMajor, flagOf(transA), flagOf(transB), dim(m), dim(n), dim(k), alpha, a, dim(lda), b, dim(ldb),
             beta, c, dim(ldc));
}

// out = x · wᵀ (+ bias); x [.., K], w [N, K], out [.., N].
template <>
void familyKernel<KernelFamily::Linear>(GemmKind kind, const KernelCall& call) {
  using O = operands::Linear;
  const TensorView* bias = call.operands[O::bias];
  Matrix W = matrixOf(call.operand(O::w));
  forEachMatrix(call.operand(O::x), call.operand(O::out), [&](const TensorView& x2, const TensorView& out2) {
    Matrix X = matrixOf(x2), Y = matrixOf(out2);
    if (bias) {
      // Every output row starts as the bias; the GEMM then accumulates onto it.
      for (int64_t r = 0; r < Y.rows; ++r) {
        TensorView row = out2;
        if (out2.rank() == 2) {
          row.offset += r * out2.strides[0];
          row.shape = Dims{out2.shape[1]};
          row.strides = Dims{out2.strides[1]};
        }
        copy(*bias, row);
      }
    }
    if (X.cols == 0) {  // empty contraction: the bias, or zeros
      if (!bias) fillZero(out2);
      return;
    }
    gemm(kind, X, /*transA=*/false, W, /*transB=*/true, Y, /*accumulate=*/bias != nullptr);
  });
}

// out = op(a) · op(b), per batch entry when the operands have three axes.
template <>
void familyKernel<KernelFamily::Matmul>(GemmKind kind, const KernelCall& call) {
  using O = operands::Matmul;
  const TensorView &a = call.operand(O::a), &b = call.operand(O::b), &out = call.operand(O::out);
  const bool transA = call.flag(O::transpose_a), transB = call.flag(O::transpose_b);
  auto one = [&](const TensorView& a2, const TensorView& b2, const TensorView& out2) {
    Matrix A = matrixOf(a2), B = matrixOf(b2), C = matrixOf(out2);
    if ((transA ? A.rows : A.cols) == 0) {  // empty contraction
      fillZero(out2);
      return;
    }
    gemm(kind, A, transA, B, transB, C, /*accumulate=*/false);
  };
  if (a.rank() == 2) {
    one(a, b, out);
    return;
  }
  for (int64_t i = 0; i < a.shape[0]; ++i) one(slice(a, i), slice(b, i), slice(out, i));
}

}  // namespace hostir::cpu
