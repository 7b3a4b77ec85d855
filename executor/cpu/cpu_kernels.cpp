#include "executor/cpu/cpu_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/blas_library.h"
#include "ir/element.h"

namespace hostir::cpu {
namespace {

template <typename Compute>
Compute load(DType dtype, const std::byte* p) {
  return loadElement<Compute>(dtype, p);
}

template <typename Compute>
void store(DType dtype, std::byte* p, Compute value) {
  storeElement<Compute>(dtype, p, value);
}

// Calls row(ptrs, n, innerStrides) for every innermost row of the common
// shape of `views`, with the dimensions they all hold contiguously merged;
// pointers are to the row's first element.
template <size_t N, typename Row>
void forEachRow(const std::array<const TensorView*, N>& views, Row&& row) {
  for (int64_t extent : views[0]->shape)
    if (extent == 0) return;
  const MergedLayout<N> layout = mergeContiguousDims(views);
  const Dims& shape = layout.shape;
  std::array<std::byte*, N> base{};
  std::array<int64_t, N> inner{};
  std::array<int64_t, N> elementSize{};
  for (size_t v = 0; v < N; ++v) {
    base[v] = views[v]->data();
    elementSize[v] = static_cast<int64_t>(dtypeSize(views[v]->dtype));
    inner[v] = shape.size ? layout.strides[v][shape.size - 1] : 1;
  }
  int64_t length = shape.size ? shape[shape.size - 1] : 1;
  size_t outer = shape.size ? shape.size - 1 : 0;
  std::array<int64_t, kMaxTensorRank> index{};
  while (true) {
    std::array<std::byte*, N> ptrs{};
    for (size_t v = 0; v < N; ++v) {
      int64_t offset = 0;
      for (size_t d = 0; d < outer; ++d) offset += index[d] * layout.strides[v][d];
      ptrs[v] = base[v] + offset * elementSize[v];
    }
    row(ptrs, length, inner);
    size_t d = outer;
    while (d > 0) {
      --d;
      if (++index[d] < shape[d]) break;
      index[d] = 0;
      if (d == 0) return;
    }
    if (outer == 0) return;
  }
}

}  // namespace

void fillZero(const TensorView& t) {
  size_t size = dtypeSize(t.dtype);
  forEachRow<1>({&t}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1) {
      std::memset(ptrs[0], 0, static_cast<size_t>(n) * size);
      return;
    }
    for (int64_t i = 0; i < n; ++i) std::memset(ptrs[0] + i * inner[0] * static_cast<int64_t>(size), 0, size);
  });
}

void copy(const TensorView& src, const TensorView& dst) {
  int64_t size = static_cast<int64_t>(dtypeSize(src.dtype));
  forEachRow<2>({&src, &dst}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1 && inner[1] == 1) {
      std::memmove(ptrs[1], ptrs[0], static_cast<size_t>(n * size));
      return;
    }
    for (int64_t i = 0; i < n; ++i)
      std::memmove(ptrs[1] + i * inner[1] * size, ptrs[0] + i * inner[0] * size, static_cast<size_t>(size));
  });
}

namespace {

// out = op(a, b), elementwise over views of one shape (f16 and bf16
// computed in f32, f64 in f64).
template <typename Op>
void binaryElementwise(const TensorView& a, const TensorView& b, const TensorView& out, Op op) {
  int64_t size = static_cast<int64_t>(dtypeSize(a.dtype));
  DType dtype = a.dtype;
  forEachRow<3>({&a, &b, &out}, [&](auto ptrs, int64_t n, auto inner) {
    if (dtype == DType::F32 && inner[0] == 1 && inner[1] == 1 && inner[2] == 1) {
      const float* x = reinterpret_cast<const float*>(ptrs[0]);
      const float* y = reinterpret_cast<const float*>(ptrs[1]);
      float* z = reinterpret_cast<float*>(ptrs[2]);
      for (int64_t i = 0; i < n; ++i) z[i] = op(x[i], y[i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == DType::F64) {
        double v =
            op(load<double>(dtype, ptrs[0] + i * inner[0] * size), load<double>(dtype, ptrs[1] + i * inner[1] * size));
        store<double>(dtype, ptrs[2] + i * inner[2] * size, v);
      } else {
        float v =
            op(load<float>(dtype, ptrs[0] + i * inner[0] * size), load<float>(dtype, ptrs[1] + i * inner[1] * size));
        store<float>(dtype, ptrs[2] + i * inner[2] * size, v);
      }
    }
  });
}

// A binary elementwise computation whose operand positions `O` name a, b and out.
template <typename O, typename Op>
void binaryKernel(const KernelCall& call, Op op) {
  binaryElementwise(call.operand(O::a), call.operand(O::b), call.operand(O::out), op);
}

}  // namespace

namespace {

// A row-major matrix: rows × cols elements, `ld` elements between rows, unit column stride.
struct Matrix {
  std::byte* data;
  int64_t rows, cols, ld;
  DType dtype;
  std::byte* at(int64_t r, int64_t c) const { return data + (r * ld + c) * static_cast<int64_t>(dtypeSize(dtype)); }
};

Matrix matrixOf(const TensorView& t) {
  // A 1-D tensor is one row. Views keep their base's unit innermost stride.
  if (t.rank() == 1) return {t.data(), 1, t.shape[0], t.shape[0], t.dtype};
  return {t.data(), t.shape[0], t.shape[1], t.strides[0], t.dtype};
}

// Copies a matrix into a dense f32 one (for f16/bf16 GEMMs).
std::vector<float> toFloatMatrix(const Matrix& m) {
  std::vector<float> out(static_cast<size_t>(m.rows * m.cols));
  for (int64_t r = 0; r < m.rows; ++r)
    for (int64_t c = 0; c < m.cols; ++c) out[static_cast<size_t>(r * m.cols + c)] = load<float>(m.dtype, m.at(r, c));
  return out;
}

blasint ld(const Matrix& m) { return static_cast<blasint>(std::max(std::max(m.ld, m.cols), int64_t{1})); }

// C = A · op(B) (+ C when accumulate), op(B) = Bᵀ when transB. A [M, K], C [M, N].
void blasGemm(const Matrix& A, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  int64_t M = C.rows, N = C.cols, K = A.cols;
  if (M == 0 || N == 0) return;
  const BlasLibrary& blas = blasLibrary();
  BlasBufferLease buffer(BlasBufferPool::process());
  auto tb = transB ? CblasTrans : CblasNoTrans;
  switch (C.dtype) {
    case DType::F32:
      blas.sgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<blasint>(M), static_cast<blasint>(N),
                 static_cast<blasint>(K), 1.0f, reinterpret_cast<const float*>(A.data), ld(A),
                 reinterpret_cast<const float*>(B.data), ld(B), accumulate ? 1.0f : 0.0f,
                 reinterpret_cast<float*>(C.data), ld(C));
      return;
    case DType::F64:
      blas.dgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<blasint>(M), static_cast<blasint>(N),
                 static_cast<blasint>(K), 1.0, reinterpret_cast<const double*>(A.data), ld(A),
                 reinterpret_cast<const double*>(B.data), ld(B), accumulate ? 1.0 : 0.0,
                 reinterpret_cast<double*>(C.data), ld(C));
      return;
    case DType::F16:
    case DType::BF16: {
      std::vector<float> a = toFloatMatrix(A), b = toFloatMatrix(B);
      std::vector<float> c = accumulate ? toFloatMatrix(C) : std::vector<float>(static_cast<size_t>(M * N));
      blas.sgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<blasint>(M), static_cast<blasint>(N),
                 static_cast<blasint>(K), 1.0f, a.data(), static_cast<blasint>(std::max<int64_t>(K, 1)), b.data(),
                 static_cast<blasint>(std::max<int64_t>(B.cols, 1)), accumulate ? 1.0f : 0.0f, c.data(),
                 static_cast<blasint>(std::max<int64_t>(N, 1)));
      for (int64_t r = 0; r < M; ++r)
        for (int64_t col = 0; col < N; ++col) store<float>(C.dtype, C.at(r, col), c[static_cast<size_t>(r * N + col)]);
      return;
    }
    case DType::I32: break;  // the verifier allows no arithmetic on indices
  }
  throw std::logic_error("internal error: a GEMM on i32 tensors");
}

// The serial reference: every product accumulated in f64, rounded once.
void referenceGemm(const Matrix& A, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  int64_t K = A.cols;
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t j = 0; j < C.cols; ++j) {
      double sum = accumulate ? load<double>(C.dtype, C.at(i, j)) : 0.0;
      for (int64_t k = 0; k < K; ++k)
        sum += load<double>(A.dtype, A.at(i, k)) * load<double>(B.dtype, transB ? B.at(j, k) : B.at(k, j));
      store<double>(C.dtype, C.at(i, j), sum);
    }
}

void gemm(GemmKind kind, const Matrix& A, const Matrix& B, bool transB, const Matrix& C, bool accumulate) {
  if (kind == GemmKind::Blas)
    blasGemm(A, B, transB, C, accumulate);
  else
    referenceGemm(A, B, transB, C, accumulate);
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
  for (int64_t i = 0; i < x.shape[0]; ++i) {
    auto slice = [i](TensorView t) {
      TensorView s = t;
      s.offset += i * t.strides[0];
      s.shape.size = t.shape.size - 1;
      s.strides.size = t.strides.size - 1;
      for (size_t d = 0; d < s.shape.size; ++d) {
        s.shape[d] = t.shape[d + 1];
        s.strides[d] = t.strides[d + 1];
      }
      return s;
    };
    forEachMatrix(slice(x), slice(out), f);
  }
}

// out = x · wᵀ (+ bias); x [.., K], w [N, K], out [.., N].
void linear(GemmKind kind, const TensorView& x, const TensorView& w, const TensorView* bias, const TensorView& out) {
  Matrix W = matrixOf(w);
  forEachMatrix(x, out, [&](const TensorView& x2, const TensorView& out2) {
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
    gemm(kind, X, W, /*transB=*/true, Y, /*accumulate=*/bias != nullptr);
  });
}

// out = a · b; a [M, K], b [K, N].
void matmul(GemmKind kind, const TensorView& a, const TensorView& b, const TensorView& out) {
  Matrix A = matrixOf(a), B = matrixOf(b), C = matrixOf(out);
  if (A.cols == 0) {
    fillZero(out);
    return;
  }
  gemm(kind, A, B, /*transB=*/false, C, /*accumulate=*/false);
}

}  // namespace

void runKernel(GemmKind gemm, const KernelCall& call) {
  switch (call.kind) {
    case OpKind::Linear: {
      using O = operands::Linear;
      linear(gemm, call.operand(O::x), call.operand(O::w), call.operands[O::bias], call.operand(O::out));
      return;
    }
    case OpKind::Matmul: {
      using O = operands::Matmul;
      matmul(gemm, call.operand(O::a), call.operand(O::b), call.operand(O::out));
      return;
    }
    case OpKind::Add: binaryKernel<operands::Add>(call, [](auto x, auto y) { return x + y; }); return;
    default: break;
  }
  throw std::logic_error(
      fmt::format("internal error: the CPU backend has no kernel for '{}'", signatureOf(call.kind).name));
}

}  // namespace hostir::cpu
