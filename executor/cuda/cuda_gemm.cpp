#include "executor/cuda/cuda_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {
namespace {

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemmTypes(DType dtype) {
  switch (dtype) {
    case DType::F32: return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::F16: return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case DType::BF16: return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case DType::F64: return {CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case DType::I32: break;  // the verifier allows no arithmetic on indices
  }
  throw CudaError("cublas: unsupported dtype");
}

int cublasInt(int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX)
    throw CudaError(fmt::format("cublas: {} {} is outside cuBLAS's int range", what, value));
  return static_cast<int>(value);
}

// The row stride of a row-major matrix view [rows, cols] as a leading
// dimension: any value of at least cols serves a single row.
int64_t leadingDim(int64_t rows, int64_t rowStride, int64_t cols) {
  return rows > 1 ? rowStride : std::max<int64_t>(cols, 1);
}

void requireUnitColumns(const TensorView& t, const char* role) {
  if (t.rank() > 0 && t.shape[t.rank() - 1] > 1 && t.strides[t.rank() - 1] != 1)
    throw std::logic_error(
        fmt::format("internal error: GEMM operand {} has a non-unit column stride: {}", role, t.describe()));
}

const std::byte* at(const TensorView& t, int64_t elementOffset) {
  return t.data() + elementOffset * static_cast<int64_t>(dtypeSize(t.dtype));
}

// One column-major GEMM C = op(A) · B (B never transposed here).
struct Gemm {
  cublasOperation_t opA;
  int64_t m, n, k;
  const void* a;
  int64_t lda;
  const void* b;
  int64_t ldb;
  void* c;
  int64_t ldc;
};

void run(cublasHandle_t blas, DType dtype, const Gemm& g, bool accumulate) {
  if (g.lda < (g.opA == CUBLAS_OP_N ? g.m : g.k) || g.ldb < g.k || g.ldc < g.m)
    throw std::logic_error("internal error: GEMM leading dimension below the matrix extent");
  const GemmTypes types = gemmTypes(dtype);
  const double alpha64 = 1.0, beta64 = accumulate ? 1.0 : 0.0;
  const float alpha32 = 1.0f, beta32 = accumulate ? 1.0f : 0.0f;
  const bool f64 = types.compute == CUBLAS_COMPUTE_64F;
  checkCublas(
      cublasGemmEx(blas, g.opA, CUBLAS_OP_N, cublasInt(g.m, "m"), cublasInt(g.n, "n"), cublasInt(g.k, "k"),
                   f64 ? static_cast<const void*>(&alpha64) : &alpha32, g.a, types.data, cublasInt(g.lda, "lda"), g.b,
                   types.data, cublasInt(g.ldb, "ldb"), f64 ? static_cast<const void*>(&beta64) : &beta32, g.c,
                   types.data, cublasInt(g.ldc, "ldc"), types.compute, CUBLAS_GEMM_DEFAULT),
      "cublasGemmEx");
}

// A leading (row or batch) dim of linear's x and out.
struct RowDim {
  int64_t extent, xStride, outStride;
};

}  // namespace

void gemmLinear(cublasHandle_t blas, const TensorView& x, const TensorView& w, const TensorView& out, bool accumulate) {
  requireUnitColumns(x, "x");
  requireUnitColumns(w, "w");
  requireUnitColumns(out, "out");
  const int64_t K = x.shape[x.rank() - 1], N = w.shape[0];
  if (N == 0 || out.numel() == 0) return;

  // The leading dims of x, merged where x and out both step through them
  // as one; the innermost one left is the GEMM's rows, the others batches.
  std::vector<RowDim> dims;
  for (size_t d = 0; d + 1 < x.rank(); ++d) {
    if (x.shape[d] == 1) continue;
    RowDim dim{x.shape[d], x.strides[d], out.strides[d]};
    if (!dims.empty() && dims.back().xStride == dim.xStride * dim.extent &&
        dims.back().outStride == dim.outStride * dim.extent) {
      dims.back() = RowDim{dims.back().extent * dim.extent, dim.xStride, dim.outStride};
    } else {
      dims.push_back(dim);
    }
  }
  const RowDim rows = dims.empty() ? RowDim{1, K, N} : dims.back();
  if (!dims.empty()) dims.pop_back();
  int64_t batches = 1;
  for (const RowDim& d : dims) batches *= d.extent;

  // outᵀ [N, M] = op(w read column-major [K, N]) · (x read column-major [K, M]).
  Gemm g{CUBLAS_OP_T, N,
         rows.extent, K,
         nullptr,     leadingDim(N, w.strides[0], K),
         nullptr,     leadingDim(rows.extent, rows.xStride, K),
         nullptr,     leadingDim(rows.extent, rows.outStride, N)};
  g.a = w.data();
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t xOffset = 0, outOffset = 0, rest = batch;
    for (size_t d = dims.size(); d-- > 0;) {
      const int64_t index = rest % dims[d].extent;
      rest /= dims[d].extent;
      xOffset += index * dims[d].xStride;
      outOffset += index * dims[d].outStride;
    }
    g.b = at(x, xOffset);
    g.c = const_cast<std::byte*>(at(out, outOffset));
    run(blas, x.dtype, g, accumulate);
  }
}

void gemmMatmul(cublasHandle_t blas, const TensorView& a, const TensorView& b, const TensorView& out) {
  if (a.rank() != 2 || b.rank() != 2 || out.rank() != 2)
    throw std::logic_error("internal error: matmul takes 2-d operands");
  requireUnitColumns(a, "a");
  requireUnitColumns(b, "b");
  requireUnitColumns(out, "out");
  const int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  if (M == 0 || N == 0) return;
  // outᵀ [N, M] = (b read column-major [N, K]) · (a read column-major [K, M]).
  Gemm g{CUBLAS_OP_N, N,
         M,           K,
         b.data(),    leadingDim(K, b.strides[0], N),
         a.data(),    leadingDim(M, a.strides[0], K),
         out.data(),  leadingDim(M, out.strides[0], N)};
  run(blas, a.dtype, g, false);
}

}  // namespace hostir::cuda
