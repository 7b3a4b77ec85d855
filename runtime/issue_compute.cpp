// The issue rules of the operations that work on the rank's own tensors:
// allocate and deallocate (stream-ordered memory), shard_by_stream (a view),
// and the kernels linear, matmul, copy and add (runtime/issue_rules.h).
#include <fmt/format.h>

#include <initializer_list>
#include <new>
#include <string_view>

#include "ir/byte_size.h"
#include "runtime/issue_rules.h"

namespace hostir {
namespace {

// The backend's memory for `what` (the result of `in`, or a temporary of
// it); a request it cannot satisfy becomes an error at the statement,
// naming the size and the tensor.
TensorView allocateAt(RunFrame& frame, const Instruction& in, DType dtype, const Dims& shape, bool zero,
                      std::string_view what) {
  try {
    return frame.backend.allocate(dtype, shape, frame.current, zero);
  } catch (const std::bad_alloc&) {
    throw DiagnosticError{
        Diagnostic{in.loc, fmt::format("cannot allocate {} for {}",
                                       formatBytes(tensorBytes(dtypeSize(dtype), {shape.begin(), shape.size})), what)}};
  }
}

TensorView allocateResult(RunFrame& frame, const Instruction& in, DType dtype, const Dims& shape, bool zero) {
  return allocateAt(frame, in, dtype, shape, zero, fmt::format("'{}'", in.resultName));
}

// `y = op(...)` allocates its result on the current stream; `op(..., out=y)` writes into y.
// A reference into the result's slot (never an operand's), so issuing copies no view.
const TensorView& output(RunFrame& frame, const Instruction& in, size_t outOperand, DType dtype, const Dims& shape) {
  if (frame.present(in, outOperand)) return frame.tensor(in, outOperand);
  TensorView& result = frame.value(in.result).tensor;
  result = allocateResult(frame, in, dtype, shape, false);
  return result;
}

// Read-then-write (docs/hostir-language.md, §1): every operation behaves as
// if it read all its inputs before writing its output. A kernel honours
// that by itself when its output shares no element with an input, and an
// elementwise one also when the output is the very input view (each element
// is read before it is written); otherwise the result goes to a temporary
// first and is copied into place. GEMMs stage on any sharing.
bool needsStaging(const TensorView& out, std::initializer_list<const TensorView*> inputs, bool elementwise) {
  for (const TensorView* input : inputs) {
    if (!input) continue;
    ViewOverlap overlap = overlapOf(out, *input);
    if (overlap == ViewOverlap::Partial || (overlap == ViewOverlap::Identical && !elementwise)) return true;
  }
  return false;
}

// Issues `kernel` into `out` on the current stream, through a temporary
// when needsStaging says so.
template <typename Kernel>
void issueReadThenWrite(RunFrame& frame, const Instruction& in, const TensorView& out,
                        std::initializer_list<const TensorView*> inputs, bool elementwise, Kernel&& kernel) {
  if (!needsStaging(out, inputs, elementwise)) {
    kernel(out);
    return;
  }
  TensorView temporary =
      allocateAt(frame, in, out.dtype, out.shape, false, "the temporary of an output that overlaps an input");
  kernel(temporary);
  frame.backend.copy(frame.current, temporary, out);
  frame.backend.deallocate(temporary, frame.current);
}

}  // namespace

void issueAllocate(RunFrame& frame, const Instruction& in) {
  Dims shape;
  shape.size = in.dims.size();
  for (size_t d = 0; d < in.dims.size(); ++d) shape[d] = frame.integer(in.dims[d]);
  frame.value(in.result).tensor = allocateResult(frame, in, in.dtype, shape, in.zero);
}

void issueDeallocate(RunFrame& frame, const Instruction& in) {
  using O = operands::Deallocate;
  frame.backend.deallocate(frame.tensor(in, O::t), frame.current);
  frame.value(in.operand[O::t]).tensor = TensorView{};
}

void issueShardByStream(RunFrame& frame, const Instruction& in) {
  using O = operands::ShardByStream;
  frame.value(in.result).tensor =
      frame.tensor(in, O::t).chunk(static_cast<size_t>(frame.integer(in.operand[O::axis])),
                                   frame.integer(in.operand[O::index]), frame.integer(in.operand[O::chunks]));
}

void issueLinear(RunFrame& frame, const Instruction& in) {
  using O = operands::Linear;
  const TensorView& x = frame.tensor(in, O::x);
  const TensorView& w = frame.tensor(in, O::w);
  const TensorView* bias = frame.present(in, O::bias) ? &frame.tensor(in, O::bias) : nullptr;
  Dims shape = x.shape;
  shape[shape.size - 1] = w.shape[0];
  issueReadThenWrite(frame, in, output(frame, in, O::out, x.dtype, shape), {&x, &w, bias}, false,
                     [&](const TensorView& out) { frame.backend.linear(frame.current, x, w, bias, out); });
}

void issueMatmul(RunFrame& frame, const Instruction& in) {
  using O = operands::Matmul;
  const TensorView& a = frame.tensor(in, O::a);
  const TensorView& b = frame.tensor(in, O::b);
  issueReadThenWrite(frame, in, output(frame, in, O::out, a.dtype, Dims{a.shape[0], b.shape[1]}), {&a, &b}, false,
                     [&](const TensorView& out) { frame.backend.matmul(frame.current, a, b, out); });
}

void issueCopy(RunFrame& frame, const Instruction& in) {
  using O = operands::Copy;
  const TensorView& src = frame.tensor(in, O::src);
  issueReadThenWrite(frame, in, output(frame, in, O::out, src.dtype, src.shape), {&src}, true,
                     [&](const TensorView& out) { frame.backend.copy(frame.current, src, out); });
}

void issueAdd(RunFrame& frame, const Instruction& in) {
  using O = operands::Add;
  const TensorView& a = frame.tensor(in, O::a);
  const TensorView& b = frame.tensor(in, O::b);
  issueReadThenWrite(frame, in, output(frame, in, O::out, a.dtype, a.shape), {&a, &b}, true,
                     [&](const TensorView& out) { frame.backend.add(frame.current, a, b, out); });
}

}  // namespace hostir
