// The issue rules of the operations that work on the rank's own tensors:
// allocate and deallocate (stream-ordered memory), shard_by_stream (a view),
// copy, and every computation: linear, matmul, add (runtime/issue_rules.h).
// A computation's rule is one case of issueCompute's switch at the end of
// this file: the shape of its result and whether its kernel is elementwise.
#include <fmt/format.h>

#include <new>
#include <stdexcept>
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
bool overlapsInput(const TensorView& out, const TensorView* input, bool elementwise) {
  if (!input) return false;
  ViewOverlap overlap = overlapOf(out, *input);
  return overlap == ViewOverlap::Partial || (overlap == ViewOverlap::Identical && !elementwise);
}

// A temporary for the result of `in` when `out` overlaps an input.
TensorView stagingTemporary(RunFrame& frame, const Instruction& in, const TensorView& out) {
  return allocateAt(frame, in, out.dtype, out.shape, false, "the temporary of an output that overlaps an input");
}

// Copies the staged result into place and frees the temporary.
void unstage(RunFrame& frame, const TensorView& temporary, const TensorView& out) {
  frame.backend.copy(frame.current, temporary, out);
  frame.backend.deallocate(temporary, frame.current);
}

// Tensor operand `operand` of `in`, also entered in `call`.
const TensorView& input(RunFrame& frame, const Instruction& in, KernelCall& call, size_t operand) {
  const TensorView& view = frame.tensor(in, operand);
  call.operands[operand] = &view;
  return view;
}

void optionalInput(RunFrame& frame, const Instruction& in, KernelCall& call, size_t operand) {
  if (frame.present(in, operand)) input(frame, in, call, operand);
}

// Issues `call` (its inputs entered) on the current stream, writing its
// `outOperand` (a new dtype[shape] result, or its out= tensor), through a
// temporary when an input overlaps it.
void issueKernel(RunFrame& frame, const Instruction& in, KernelCall& call, size_t outOperand, DType dtype,
                 const Dims& shape, bool elementwise) {
  const TensorView& out = output(frame, in, outOperand, dtype, shape);
  bool staged = false;
  for (const TensorView* input : call.operands) staged = staged || overlapsInput(out, input, elementwise);
  if (!staged) {
    call.operands[outOperand] = &out;
    frame.backend.compute(frame.current, call);
    return;
  }
  TensorView temporary = stagingTemporary(frame, in, out);
  call.operands[outOperand] = &temporary;
  frame.backend.compute(frame.current, call);
  unstage(frame, temporary, out);
}

// out = x · wᵀ (+ bias): [x's leading dims, w's first].
void issueLinear(RunFrame& frame, const Instruction& in) {
  using O = operands::Linear;
  KernelCall call{in.op};
  const TensorView& x = input(frame, in, call, O::x);
  const TensorView& w = input(frame, in, call, O::w);
  optionalInput(frame, in, call, O::bias);
  Dims shape = x.shape;
  shape[shape.size - 1] = w.shape[0];
  issueKernel(frame, in, call, O::out, x.dtype, shape, /*elementwise=*/false);
}

// out = a · b: [a's first, b's second].
void issueMatmul(RunFrame& frame, const Instruction& in) {
  using O = operands::Matmul;
  KernelCall call{in.op};
  const TensorView& a = input(frame, in, call, O::a);
  const TensorView& b = input(frame, in, call, O::b);
  issueKernel(frame, in, call, O::out, a.dtype, Dims{a.shape[0], b.shape[1]}, /*elementwise=*/false);
}

// out = a op b, elementwise, shaped like a: add and every binary
// elementwise operation whose operand positions `O` name a, b and out.
template <typename O>
void issueBinaryElementwise(RunFrame& frame, const Instruction& in) {
  KernelCall call{in.op};
  const TensorView& a = input(frame, in, call, O::a);
  input(frame, in, call, O::b);
  issueKernel(frame, in, call, O::out, a.dtype, a.shape, /*elementwise=*/true);
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

void issueCopy(RunFrame& frame, const Instruction& in) {
  using O = operands::Copy;
  const TensorView& src = frame.tensor(in, O::src);
  const TensorView& out = output(frame, in, O::out, src.dtype, src.shape);
  if (!overlapsInput(out, &src, /*elementwise=*/true)) {
    frame.backend.copy(frame.current, src, out);
    return;
  }
  TensorView temporary = stagingTemporary(frame, in, out);
  frame.backend.copy(frame.current, src, temporary);
  unstage(frame, temporary, out);
}

void issueCompute(RunFrame& frame, const Instruction& in) {
  switch (in.op) {
    case OpKind::Linear: issueLinear(frame, in); return;
    case OpKind::Matmul: issueMatmul(frame, in); return;
    case OpKind::Add: issueBinaryElementwise<operands::Add>(frame, in); return;
    default: break;
  }
  throw std::logic_error(fmt::format("internal error: '{}' has no issue rule", signatureOf(in.op).name));
}

}  // namespace hostir
