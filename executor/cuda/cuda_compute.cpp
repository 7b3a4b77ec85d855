#include "executor/cuda/cuda_compute.h"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor/cuda/cuda_attention.cuh"
#include "executor/cuda/cuda_attention.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/cuda_constants.cuh"
#include "executor/cuda/cuda_copy.h"
#include "executor/cuda/cuda_gather.cuh"
#include "executor/cuda/cuda_gemm.h"
#include "executor/cuda/cuda_has_kernel.h"
#include "executor/cuda/cuda_kernels.cuh"
#include "executor/cuda/cuda_layout.h"
#include "executor/cuda/cuda_reductions.cuh"
#include "executor/cuda/cuda_rows.cuh"

namespace hostir::cuda {
namespace {

[[noreturn]] void noKernel(OpKind kind) {
  throw std::logic_error(
      fmt::format("internal error: the CUDA backend has no kernel for '{}'", signatureOf(kind).name));
}

// ---- GEMMs -----------------------------------------------------------------------

void linear(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Linear;
  const TensorView& x = call.operand(O::x);
  const TensorView& w = call.operand(O::w);
  const TensorView* bias = call.operands[O::bias];
  const TensorView& out = call.operand(O::out);
  if (out.numel() == 0) return;
  if (bias) {
    // out = bias broadcast over the rows; the GEMM then accumulates onto it.
    TensorView rows = *bias;
    rows.shape = out.shape;
    rows.strides = Dims{};
    rows.strides.size = out.rank();
    rows.strides[out.rank() - 1] = bias->strides[0];
    copyView(context.stream, rows, out);
  }
  if (x.shape[x.rank() - 1] == 0) {  // an empty sum
    if (!bias) zeroView(context.stream, out);
    return;
  }
  gemmLinear(context.blas, x, w, out, bias != nullptr);
}

void matmul(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Matmul;
  const TensorView& a = call.operand(O::a);
  const TensorView& b = call.operand(O::b);
  const TensorView& out = call.operand(O::out);
  const bool transposeA = call.flag(O::transpose_a), transposeB = call.flag(O::transpose_b);
  if (out.numel() == 0) return;
  if (a.shape[a.rank() - (transposeA ? 2 : 1)] == 0) {  // an empty sum
    zeroView(context.stream, out);
    return;
  }
  gemmMatmul(context.blas, a, b, out, transposeA, transposeB);
}

// ---- elementwise -----------------------------------------------------------------

// An elementwise computation's kernel (cuda_kernels.cu, found by the op
// table's name) and where its operands sit in its signature: the written
// one, the tensors it reads in order, and its FLOAT attribute if any.
struct ElementwiseComputation {
  ElementwiseLaunch launch;
  size_t out;
  std::vector<size_t> inputs;
  std::optional<size_t> parameter;
  std::string what;  // for a failed launch: "add kernel launch"
};

// The kernel of `kind`, or null; the table is built once, from the op table.
const ElementwiseComputation* elementwiseComputation(OpKind kind) {
  static const std::vector<std::optional<ElementwiseComputation>> table = [] {
    std::vector<std::optional<ElementwiseComputation>> kernels;
    for (const OpSignature& sig : allSignatures()) {
      ElementwiseLaunch launch = sig.category == OpCategory::Compute && !isGemm(sig.cost) && outOperand(sig)
                                     ? elementwiseKernel(sig.name)
                                     : nullptr;
      if (!launch) {
        kernels.emplace_back();
        continue;
      }
      ElementwiseComputation kernel{launch, *outOperand(sig), {}, {}, fmt::format("{} kernel launch", sig.name)};
      for (size_t i = 0; i < sig.operands.size(); ++i) {
        if (i != kernel.out && sig.operands[i].kind == OperandKind::Tensor) kernel.inputs.push_back(i);
        if (sig.operands[i].kind == OperandKind::Float && !kernel.parameter) kernel.parameter = i;
      }
      // A layout holds the output and at most three inputs.
      const bool fits = !kernel.inputs.empty() && kernel.inputs.size() < static_cast<size_t>(kMaxLayoutOperands);
      if (fits)
        kernels.emplace_back(std::move(kernel));
      else
        kernels.emplace_back();
    }
    return kernels;
  }();
  const auto& kernel = table[static_cast<size_t>(kind)];
  return kernel ? &*kernel : nullptr;
}

// Strides that read `input` at every index of `shape` by NumPy's rule:
// axes aligned from the last, an extent of 1 (or a missing axis) repeated.
Dims broadcastStrides(const TensorView& input, const Dims& shape) {
  if (input.rank() > shape.size)
    throw std::logic_error(
        fmt::format("internal error: {} does not broadcast to rank {}", input.describe(), shape.size));
  Dims strides;
  strides.size = shape.size;
  const size_t missing = shape.size - input.rank();
  for (size_t d = 0; d < shape.size; ++d) {
    if (d < missing) continue;  // zero
    const size_t i = d - missing;
    strides[d] = input.shape[i] == 1 && shape[d] != 1 ? 0 : input.strides[i];
  }
  return strides;
}

void elementwise(const ComputeContext& context, const KernelCall& call) {
  const ElementwiseComputation* kernel = elementwiseComputation(call.kind);
  if (!kernel) noKernel(call.kind);
  const TensorView& out = call.operand(kernel->out);
  ElementwiseOperands operands;
  operands.dtype = out.dtype;
  operands.inputDtype = call.operand(kernel->inputs[0]).dtype;
  operands.out = out.data();
  if (kernel->parameter) operands.parameter = call.scalars[*kernel->parameter];
  Dims strides[3];
  for (size_t i = 0; i < kernel->inputs.size(); ++i) {
    const TensorView& input = call.operand(kernel->inputs[i]);
    operands.inputs[i] = input.data();
    strides[i] = broadcastStrides(input, out.shape);
  }
  const size_t inputs = kernel->inputs.size();
  const ElementwiseLayout layout =
      inputs == 1   ? elementwiseLayout(out.shape, {out.strides, strides[0]})
      : inputs == 2 ? elementwiseLayout(out.shape, {out.strides, strides[0], strides[1]})
                    : elementwiseLayout(out.shape, {out.strides, strides[0], strides[1], strides[2]});
  checkCuda(kernel->launch(operands, layout, context.stream), kernel->what.c_str());
}

// ---- over the last axis ----------------------------------------------------------

// Dims [from, to) of `dims`.
Dims slice(const Dims& dims, size_t from, size_t to) {
  Dims part;
  part.size = to - from;
  for (size_t d = from; d < to; ++d) part[d - from] = dims[d];
  return part;
}

RowLayout rowLayout(const TensorView& x, const TensorView& out) {
  if (out.rank() == 0 || x.shape != out.shape)
    throw std::logic_error(fmt::format("internal error: rows of {} into {}", x.describe(), out.describe()));
  const size_t last = out.rank() - 1;
  RowLayout layout;
  layout.rows = elementwiseLayout(slice(out.shape, 0, last), {slice(out.strides, 0, last), slice(x.strides, 0, last)});
  layout.length = out.shape[last];
  layout.outStride = out.strides[last];
  layout.xStride = x.strides[last];
  return layout;
}

void rmsNorm(const ComputeContext& context, const KernelCall& call) {
  using O = operands::RmsNorm;
  const TensorView& x = call.operand(O::x);
  const TensorView& w = call.operand(O::w);
  const TensorView& out = call.operand(O::out);
  checkCuda(launchRmsNorm(out.dtype, out.data(), x.data(), w.data(), w.strides[0], call.scalars[O::eps],
                          rowLayout(x, out), context.stream),
            "rms_norm kernel launch");
}

void softmax(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Unary;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  checkCuda(launchSoftmax(out.dtype, out.data(), x.data(), rowLayout(x, out), context.stream), "softmax kernel launch");
}

void layerNorm(const ComputeContext& context, const KernelCall& call) {
  using O = operands::LayerNorm;
  const TensorView& x = call.operand(O::x);
  const TensorView& w = call.operand(O::w);
  const TensorView& b = call.operand(O::b);
  const TensorView& out = call.operand(O::out);
  checkCuda(launchLayerNorm(out.dtype, out.data(), x.data(), w.data(), w.strides[0], b.data(), b.strides[0],
                            call.scalars[O::eps], rowLayout(x, out), context.stream),
            "layer_norm kernel launch");
}

void rope(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Rope;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  checkCuda(launchRope(out.dtype, out.data(), x.data(), call.integer(O::heads), call.integer(O::offset),
                       call.scalars[O::theta], rowLayout(x, out), context.stream),
            "rope kernel launch");
}

// ---- along an axis ---------------------------------------------------------------

// sum, mean, max: one Reduction per operation of the family.
constexpr std::pair<OpKind, Reduction> kReductionEntries[] = {
    {OpKind::Sum, Reduction::Sum}, {OpKind::Mean, Reduction::Mean}, {OpKind::Max, Reduction::Max}};
constexpr OpTable<std::optional<Reduction>> reductionTable() {
  OpTable<std::optional<Reduction>> table{};
  for (const auto& [kind, reduction] : kReductionEntries) table[opIndex(kind)] = reduction;
  return table;
}
constexpr OpTable<std::optional<Reduction>> kReductions = reductionTable();
static_assert(coversExactly(kReductions, KernelFamily::Reduce), "a CUDA reduction for every reduction, and only those");

void reduce(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Reduce;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const auto axis = static_cast<size_t>(call.integer(O::axis));
  Dims rest;  // x's strides without the axis: over out's shape
  for (size_t d = 0; d < x.rank(); ++d)
    if (d != axis) rest[rest.size++] = x.strides[d];
  ReductionLayout layout;
  layout.outputs = elementwiseLayout(out.shape, {out.strides, rest});
  layout.count = x.shape[axis];
  layout.axisStride = x.strides[axis];
  checkCuda(launchReduction(*kReductions[opIndex(call.kind)], out.dtype, out.data(), x.data(), layout, context.stream),
            "reduction kernel launch");
}

void topK(const ComputeContext& context, const KernelCall& call) {
  using O = operands::TopK;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const TensorView& indices = call.operand(O::indices);
  const size_t last = x.rank() - 1;
  TopKLayout layout;
  layout.rows =
      elementwiseLayout(slice(x.shape, 0, last),
                        {slice(out.strides, 0, last), slice(indices.strides, 0, last), slice(x.strides, 0, last)});
  layout.length = x.shape[last];
  layout.k = out.shape[last];
  layout.xStride = x.strides[last];
  layout.outStride = out.strides[last];
  layout.indexStride = indices.strides[last];
  checkCuda(
      launchTopK(x.dtype, out.data(), reinterpret_cast<int32_t*>(indices.data()), x.data(), layout, context.stream),
      "top_k kernel launch");
}

// ---- constants -------------------------------------------------------------------

void fill(const ComputeContext& context, const KernelCall& call) {
  const TensorView& out = call.operand(operands::Fill::type);
  checkCuda(launchFill(out.dtype, out.data(), elementwiseLayout(out.shape, {out.strides}),
                       call.scalars[operands::Fill::value], context.stream),
            "fill kernel launch");
}

void iota(const ComputeContext& context, const KernelCall& call) {
  const TensorView& out = call.operand(operands::Iota::type);
  const auto axis = static_cast<size_t>(call.integer(operands::Iota::axis));
  int64_t inner = 1;
  for (size_t d = axis + 1; d < out.rank(); ++d) inner *= out.shape[d];
  const int64_t extent = out.rank() ? out.shape[axis] : 1;
  checkCuda(
      launchIota(out.dtype, out.data(), elementwiseLayout(out.shape, {out.strides}), inner, extent, context.stream),
      "iota kernel launch");
}

// ---- attention's merge -----------------------------------------------------------

void mergeAttention(const ComputeContext& context, const KernelCall& call) {
  using O = operands::MergeAttention;
  const TensorView& o = call.operand(O::o);
  const TensorView& lse = call.operand(O::lse);
  const TensorView& part = call.operand(O::part);
  const TensorView& partLse = call.operand(O::part_lse);
  for (const TensorView* t : {&o, &part})
    if (t->rank() != 2 || (t->shape[1] > 1 && t->strides[1] != 1))
      throw std::logic_error(fmt::format("internal error: merge_attention on {}", t->describe()));
  AttentionMerge merge;
  merge.rows = o.shape[0];
  merge.heads = lse.shape[1];
  merge.headDim = merge.heads > 0 ? o.shape[1] / merge.heads : 0;
  merge.o = o.data();
  merge.oRowStride = o.strides[0];
  merge.part = part.data();
  merge.partRowStride = part.strides[0];
  merge.lse = reinterpret_cast<float*>(lse.data());
  merge.lseRowStride = lse.strides[0];
  merge.lseHeadStride = lse.strides[1];
  merge.partLse = reinterpret_cast<const float*>(partLse.data());
  merge.partLseRowStride = partLse.strides[0];
  merge.partLseHeadStride = partLse.strides[1];
  checkCuda(launchMergeAttention(o.dtype, merge, context.stream), "merge_attention kernel launch");
}

// ---- row indexing ----------------------------------------------------------------

// gather_rows and scatter_add_rows: `perEntry` is shaped idx.shape +
// table.shape[1:].
RowIndexing rowIndexing(const TensorView& perEntry, const TensorView& table, const TensorView& idx) {
  const size_t entryRank = idx.rank();
  if (table.rank() == 0 || perEntry.rank() != entryRank + table.rank() - 1)
    throw std::logic_error(
        fmt::format("internal error: rows of {} by {} for {}", table.describe(), idx.describe(), perEntry.describe()));
  RowIndexing indexing;
  indexing.entries = elementwiseLayout(idx.shape, {slice(perEntry.strides, 0, entryRank), idx.strides});
  indexing.columns =
      elementwiseLayout(slice(table.shape, 1, table.rank()),
                        {slice(perEntry.strides, entryRank, perEntry.rank()), slice(table.strides, 1, table.rank())});
  indexing.tableRows = table.shape[0];
  indexing.tableRowStride = table.strides[0];
  return indexing;
}

const int32_t* indices(const TensorView& idx) { return reinterpret_cast<const int32_t*>(idx.data()); }

void gatherRows(const ComputeContext& context, const KernelCall& call) {
  using O = operands::GatherRows;
  const TensorView& x = call.operand(O::x);
  const TensorView& idx = call.operand(O::idx);
  const TensorView& out = call.operand(O::out);
  const IndexCheck check = context.indexFaults.checkFor(OpKind::GatherRows, context.loc, context.names);
  checkCuda(launchGatherRows(dtypeSize(out.dtype), out.data(), x.data(), indices(idx), rowIndexing(out, x, idx), check,
                             context.stream),
            "gather_rows kernel launch");
}

void scatterAddRows(const ComputeContext& context, const KernelCall& call) {
  using O = operands::ScatterAddRows;
  const TensorView& src = call.operand(O::src);
  const TensorView& idx = call.operand(O::idx);
  const TensorView& out = call.operand(O::out);
  const IndexCheck check = context.indexFaults.checkFor(OpKind::ScatterAddRows, context.loc, context.names);
  checkCuda(launchScatterAddRows(out.dtype, out.data(), src.data(), indices(idx), rowIndexing(src, out, idx), check,
                                 context.stream),
            "scatter_add_rows kernel launch");
}

void bucket(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Bucket;
  const TensorView& idx = call.operand(O::idx);
  const TensorView& out = call.operand(O::out);
  checkCuda(launchBucket(reinterpret_cast<int32_t*>(out.data()), out.strides[0], out.strides[1], out.shape[0],
                         out.shape[1], indices(idx), elementwiseLayout(idx.shape, {idx.strides}), context.stream),
            "bucket kernel launch");
}

// ---- dispatch --------------------------------------------------------------------

using Computation = void (*)(const ComputeContext&, const KernelCall&);

// Every kernel family's computation, by the family list; a computation's
// family has one by construction, and None none.
constexpr FamilyTable<Computation> kComputations = {nullptr,
#define HOSTIR_CUDA_COMPUTATION_ENTRY(family) &familyComputation<KernelFamily::family>,
                                                    HOSTIR_KERNEL_FAMILY_LIST(HOSTIR_CUDA_COMPUTATION_ENTRY)
#undef HOSTIR_CUDA_COMPUTATION_ENTRY
};
static_assert(coversEveryFamily(kComputations), "a CUDA computation for every kernel family");

Computation computationOf(OpKind kind) { return kComputations[static_cast<size_t>(kernelFamilyOf(kind))]; }

// The families whose operations find their kernels in cuda_kernels.cu's
// table (elementwiseComputation), each by its name.
constexpr bool isElementwiseFamily(KernelFamily family) {
  return family == KernelFamily::Unary || family == KernelFamily::Binary || family == KernelFamily::Scale ||
         family == KernelFamily::Cast || family == KernelFamily::Where;
}

}  // namespace

// The computations of the families above.
#define HOSTIR_CUDA_COMPUTATION(family, function)                                                       \
  template <>                                                                                           \
  void familyComputation<KernelFamily::family>(const ComputeContext& context, const KernelCall& call) { \
    function(context, call);                                                                            \
  }
HOSTIR_CUDA_COMPUTATION(Linear, linear)
HOSTIR_CUDA_COMPUTATION(Matmul, matmul)
HOSTIR_CUDA_COMPUTATION(Unary, elementwise)
HOSTIR_CUDA_COMPUTATION(Binary, elementwise)
HOSTIR_CUDA_COMPUTATION(Scale, elementwise)
HOSTIR_CUDA_COMPUTATION(Cast, elementwise)
HOSTIR_CUDA_COMPUTATION(Where, elementwise)
HOSTIR_CUDA_COMPUTATION(RmsNorm, rmsNorm)
HOSTIR_CUDA_COMPUTATION(Softmax, softmax)
HOSTIR_CUDA_COMPUTATION(Attention, attention)
HOSTIR_CUDA_COMPUTATION(MergeAttention, mergeAttention)
HOSTIR_CUDA_COMPUTATION(GatherRows, gatherRows)
HOSTIR_CUDA_COMPUTATION(ScatterAddRows, scatterAddRows)
HOSTIR_CUDA_COMPUTATION(Reduce, reduce)
HOSTIR_CUDA_COMPUTATION(LayerNorm, layerNorm)
HOSTIR_CUDA_COMPUTATION(Rope, rope)
HOSTIR_CUDA_COMPUTATION(Bucket, bucket)
HOSTIR_CUDA_COMPUTATION(Fill, fill)
HOSTIR_CUDA_COMPUTATION(Iota, iota)
HOSTIR_CUDA_COMPUTATION(TopK, topK)
#undef HOSTIR_CUDA_COMPUTATION

// cumsum: one line along the axis per element of x without it.
template <>
void familyComputation<KernelFamily::Cumsum>(const ComputeContext& context, const KernelCall& call) {
  using O = operands::Cumsum;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const auto axis = static_cast<size_t>(call.integer(O::axis));
  Dims shape, outStrides, xStrides;  // x's and out's without the axis
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    shape[shape.size++] = x.shape[d];
    outStrides[outStrides.size++] = out.strides[d];
    xStrides[xStrides.size++] = x.strides[d];
  }
  ReductionLayout lines;
  lines.outputs = elementwiseLayout(shape, {outStrides, xStrides});
  lines.count = x.shape[axis];
  lines.axisStride = x.strides[axis];
  checkCuda(launchCumsum(out.dtype, out.data(), x.data(), lines, out.strides[axis], context.stream),
            "cumsum kernel launch");
}

void runComputation(const ComputeContext& context, const KernelCall& call) {
  Computation computation = computationOf(call.kind);
  if (!computation) noKernel(call.kind);
  computation(context, call);
}

bool cudaHasKernel(OpKind kind) {
  Computation computation = computationOf(kind);
  // An elementwise operation also needs its entry in cuda_kernels.cu's table.
  if (isElementwiseFamily(kernelFamilyOf(kind))) return elementwiseComputation(kind) != nullptr;
  return computation != nullptr;
}

}  // namespace hostir::cuda
