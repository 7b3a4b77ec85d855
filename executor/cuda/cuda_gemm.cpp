#include "executor/cuda/cuda_gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <vector>

#include "executor/cuda/cuda_check.h"

namespace hostir::cuda {
namespace {

cudaDataType_t cudaType(DType dtype) {
  switch (dtype) {
    case DType::F32: return CUDA_R_32F;
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    case DType::F64: return CUDA_R_64F;
    case DType::I32: break;  // the verifier allows no arithmetic on indices
  }
  throw CudaError("cublas: unsupported dtype");
}

int cublasInt(int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX)
    throw CudaError(fmt::format("cublas: {} {} is outside cuBLAS's int range", what, value));
  return static_cast<int>(value);
}

void requireUnitColumns(const TensorView& t, const char* role) {
  if (t.rank() > 0 && t.shape[t.rank() - 1] > 1 && t.strides[t.rank() - 1] != 1)
    throw std::logic_error(
        fmt::format("internal error: GEMM operand {} has a non-unit column stride: {}", role, t.describe()));
}

const std::byte* at(const TensorView& t, int64_t elementOffset) {
  return t.data() + elementOffset * static_cast<int64_t>(dtypeSize(t.dtype));
}

// A leading (row or batch) dim of linear's x and out.
struct RowDim {
  int64_t extent, xStride, outStride;
};

}  // namespace

int64_t leadingDim(int64_t rows, int64_t rowStride, int64_t cols) {
  return rows > 1 ? rowStride : std::max<int64_t>(cols, 1);
}

void runGemm(cublasHandle_t blas, const ColumnMajorGemm& g) {
  if (g.lda < (g.opA == CUBLAS_OP_N ? g.m : g.k) || g.ldb < (g.opB == CUBLAS_OP_N ? g.k : g.n) || g.ldc < g.m)
    throw std::logic_error("internal error: GEMM leading dimension below the matrix extent");
  const bool f64 = g.inputs == DType::F64;
  const cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const double alpha64 = g.alpha, beta64 = g.accumulate ? 1.0 : 0.0;
  const auto alpha32 = static_cast<float>(g.alpha), beta32 = g.accumulate ? 1.0f : 0.0f;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const cudaDataType_t inputs = cudaType(g.inputs), output = cudaType(g.output);
  const int m = cublasInt(g.m, "m"), n = cublasInt(g.n, "n"), k = cublasInt(g.k, "k");
  const int lda = cublasInt(g.lda, "lda"), ldb = cublasInt(g.ldb, "ldb"), ldc = cublasInt(g.ldc, "ldc");
  if (g.batches == 1) {
    checkCublas(cublasGemmEx(blas, g.opA, g.opB, m, n, k, alpha, g.a, inputs, lda, g.b, inputs, ldb, beta, g.c, output,
                             ldc, compute, CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx");
    return;
  }
  checkCublas(cublasGemmStridedBatchedEx(blas, g.opA, g.opB, m, n, k, alpha, g.a, inputs, lda, g.strideA, g.b, inputs,
                                         ldb, g.strideB, beta, g.c, output, ldc, g.strideC,
                                         cublasInt(g.batches, "batch count"), compute, CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx");
}

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
  ColumnMajorGemm g;
  g.opA = CUBLAS_OP_T;
  g.m = N;
  g.n = rows.extent;
  g.k = K;
  g.a = w.data();
  g.lda = leadingDim(N, w.strides[0], K);
  g.ldb = leadingDim(rows.extent, rows.xStride, K);
  g.ldc = leadingDim(rows.extent, rows.outStride, N);
  g.inputs = g.output = x.dtype;
  g.accumulate = accumulate;
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
    runGemm(blas, g);
  }
}

void gemmMatmul(cublasHandle_t blas, const TensorView& a, const TensorView& b, const TensorView& out, bool transposeA,
                bool transposeB) {
  const size_t ra = a.rank(), rb = b.rank(), ro = out.rank();
  if (ra < 2 || ra > 3 || rb < 2 || rb > 3 || ro != ra)
    throw std::logic_error("internal error: matmul takes 2-d operands, or 3-d with a batch axis");
  requireUnitColumns(a, "a");
  requireUnitColumns(b, "b");
  requireUnitColumns(out, "out");
  // The matrices: the last two dims of each operand.
  const int64_t M = out.shape[ro - 2], N = out.shape[ro - 1];
  const int64_t K = transposeA ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t batches = ro == 3 ? out.shape[0] : 1;
  if (M == 0 || N == 0 || batches == 0) return;
  // outᵀ [N, M] = op(b)ᵀ · op(a)ᵀ. b as stored, read column-major, is
  // [N, K] (op N) or, given transposed, [K, N] (op T); a likewise.
  ColumnMajorGemm g;
  g.opA = transposeB ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.opB = transposeA ? CUBLAS_OP_T : CUBLAS_OP_N;
  g.m = N;
  g.n = M;
  g.k = K;
  g.a = b.data();
  g.lda = transposeB ? leadingDim(N, b.strides[rb - 2], K) : leadingDim(K, b.strides[rb - 2], N);
  g.strideA = rb == 3 ? b.strides[0] : 0;
  g.b = a.data();
  g.ldb = transposeA ? leadingDim(K, a.strides[ra - 2], M) : leadingDim(M, a.strides[ra - 2], K);
  g.strideB = ra == 3 ? a.strides[0] : 0;
  g.c = out.data();
  g.ldc = leadingDim(M, out.strides[ro - 2], N);
  g.strideC = ro == 3 ? out.strides[0] : 0;
  g.batches = batches;
  g.inputs = g.output = a.dtype;
  runGemm(blas, g);
}

}  // namespace hostir::cuda
