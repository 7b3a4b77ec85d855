// The issue rules of the operations that work on the rank's own tensors:
// allocate and deallocate (stream-ordered memory), shard_by_stream (a view),
// copy, and every computation: linear, matmul, the elementwise and row
// operations, attention, gather/scatter, cast (runtime/issue_rules.h).
// A computation's rule (the shape of its result, by ir/result_shape.h, and
// whether its kernel is elementwise) is named by its row of ir/op_list.h;
// kIssueRules, at the end of this file, holds every operation's.
#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

#include "ir/byte_size.h"
#include "ir/result_shape.h"
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
        Diagnostic{frame.program.detail(in).loc,
                   fmt::format("cannot allocate {} for {}",
                               formatBytes(tensorBytes(dtypeSize(dtype), {shape.begin(), shape.size})), what)}};
  }
}

TensorView allocateResult(RunFrame& frame, const Instruction& in, DType dtype, const Dims& shape, bool zero) {
  return allocateAt(frame, in, dtype, shape, zero, fmt::format("'{}'", frame.program.detail(in).resultName));
}

// `y = op(...)` allocates its result on the current stream; `op(..., out=y)` writes into y.
// A reference into the result's slot (never an operand's), so issuing copies no view.
// The slot is that of the name standing for `outOperand` (its OperandEntry::access).
const TensorView& output(RunFrame& frame, const Instruction& in, size_t outOperand, DType dtype, const Dims& shape) {
  if (frame.present(in, outOperand)) return frame.tensor(in, outOperand);
  TensorView& result = frame.value(frame.program.operand(in, outOperand).access).tensor;
  result = allocateResult(frame, in, dtype, shape, false);
  return result;
}

// The dtype of what `in` writes into `operand`, for an operation on `dtype`:
// the operand's fixed one, if any (ir/result_shape.h's writtenDType: indices
// are i32). Asked only by the rules whose results have one, off the
// common path.
DType writtenDType(const Instruction& in, size_t operand, DType dtype) {
  return result_shape::writtenDType(signatureOf(in.op).operands[operand], dtype);
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

// The call that issues `in`, its signature's positions cleared.
KernelCall callFor(const Instruction& in) { return KernelCall(in.op, signatureOf(in.op).operands.size()); }

// Tensor operand `operand` of `in`, also entered in `call`.
const TensorView& input(RunFrame& frame, const Instruction& in, KernelCall& call, size_t operand) {
  const TensorView& view = frame.tensor(in, operand);
  call.operands[operand] = &view;
  return view;
}

void optionalInput(RunFrame& frame, const Instruction& in, KernelCall& call, size_t operand) {
  if (frame.present(in, operand)) input(frame, in, call, operand);
}

// At most two operands are written (attention's out and lse).
constexpr size_t kMaxWritten = 2;

// The rare path of issueWriting: the written operands in `staged` (bits by
// their position in `written`) go through temporaries, copied from them
// first when `readFirst`, and copied into place after the kernel.
void issueStaged(RunFrame& frame, const Instruction& in, KernelCall& call, std::initializer_list<size_t> written,
                 unsigned staged, bool readFirst) {
  std::array<std::optional<TensorView>, kMaxWritten> temporaries;
  std::array<const TensorView*, kMaxWritten> targets{};
  size_t k = 0;
  for (size_t w : written) {
    if (staged & (1u << k)) {
      targets[k] = call.operands[w];
      temporaries[k] = stagingTemporary(frame, in, *targets[k]);
      if (readFirst) frame.backend.copy(frame.current, *targets[k], *temporaries[k]);
      call.operands[w] = &*temporaries[k];
    }
    ++k;
  }
  frame.backend.compute(frame.current, call);
  for (size_t t = 0; t < kMaxWritten; ++t)
    if (targets[t]) unstage(frame, *temporaries[t], *targets[t]);
}

// Issues `call` (every operand entered) on the current stream. The operands
// `written` are those the kernel writes: each goes through a temporary when
// another operand overlaps it (read-then-write); `readFirst`: the kernel
// also reads them (an in-place update), so the temporary starts as a copy.
void issueWriting(RunFrame& frame, const Instruction& in, KernelCall& call, std::initializer_list<size_t> written,
                  bool elementwise, bool readFirst) {
  if (written.size() > kMaxWritten) throw std::logic_error("internal error: a kernel writes too many operands");
  unsigned staged = 0;  // decided on the operands as given, before any is replaced
  const size_t operandCount = signatureOf(in.op).operands.size();
  size_t k = 0;
  for (size_t w : written) {
    if (const TensorView* target = call.operands[w]) {
      for (size_t other = 0; other < operandCount; ++other)
        if (other != w && overlapsInput(*target, call.operands[other], elementwise)) {
          staged |= 1u << k;
          break;
        }
    }
    ++k;
  }
  if (staged == 0) {
    frame.backend.compute(frame.current, call);
    return;
  }
  issueStaged(frame, in, call, written, staged, readFirst);
}

// Issues `call` (its inputs entered) on the current stream, writing its
// `outOperand` (a new dtype[shape] result, or its out= tensor), through a
// temporary when an input overlaps it.
void issueKernel(RunFrame& frame, const Instruction& in, KernelCall& call, size_t outOperand, DType dtype,
                 const Dims& shape, bool elementwise) {
  call.operands[outOperand] = &output(frame, in, outOperand, dtype, shape);
  issueWriting(frame, in, call, {outOperand}, elementwise, /*readFirst=*/false);
}

// out = x · wᵀ (+ bias): [x's leading dims, w's first].
void issueLinear(RunFrame& frame, const Instruction& in) {
  using O = operands::Linear;
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  const TensorView& w = input(frame, in, call, O::w);
  optionalInput(frame, in, call, O::bias);
  issueKernel(frame, in, call, O::out, x.dtype, result_shape::linear(x.shape, w.shape), /*elementwise=*/false);
}

// out = op(a) · op(b): [(B,) M, N], M from a and N from b as their
// transposes say.
void issueMatmul(RunFrame& frame, const Instruction& in) {
  using O = operands::Matmul;
  KernelCall call = callFor(in);
  const TensorView& a = input(frame, in, call, O::a);
  const TensorView& b = input(frame, in, call, O::b);
  call.scalars[O::transpose_a] = frame.scalar(in, O::transpose_a, 0);
  call.scalars[O::transpose_b] = frame.scalar(in, O::transpose_b, 0);
  const Dims shape = result_shape::matmul(a.shape, b.shape, call.flag(O::transpose_a), call.flag(O::transpose_b));
  issueKernel(frame, in, call, O::out, a.dtype, shape, /*elementwise=*/false);
}

// out = a op b, elementwise, shaped like a (b broadcast to it): add, sub,
// mul, whose operand positions `O` name a, b and out.
template <typename O>
void issueBinaryElementwise(RunFrame& frame, const Instruction& in) {
  KernelCall call = callFor(in);
  const TensorView& a = input(frame, in, call, O::a);
  input(frame, in, call, O::b);
  issueKernel(frame, in, call, O::out, a.dtype, a.shape, /*elementwise=*/true);
}

// Integer operand `operand` of `call`, exact in `integers` and as a
// number in `scalars` (for the cost model).
void setInteger(const RunFrame& frame, const Instruction& in, KernelCall& call, size_t operand, int64_t absent) {
  call.integers[operand] = frame.integerOperand(in, operand, absent);
  call.scalars[operand] = static_cast<double>(call.integers[operand]);
}

// The axis of a reduction or iota over `rank` dims: the statement's, counted
// from the end when negative, else the last.
int64_t axisOperand(const RunFrame& frame, const Instruction& in, size_t operand, size_t rank) {
  return result_shape::normalizedAxis(frame.integerOperand(in, operand, static_cast<int64_t>(rank) - 1), rank);
}

template <typename>
constexpr bool kNever = false;

// Operand `I` of `in`, an operation whose operands are `O`, entered in
// `call` as its spec says (x and out aside): a tensor it reads, an integer
// (an axis normalized over x's rank), a float or a flag, each at its
// spec's default when absent. Chosen at compile time: no spec is read
// while issuing.
template <typename O, size_t I>
void enterOperand(RunFrame& frame, const Instruction& in, KernelCall& call, const TensorView& x) {
  constexpr OperandSpec spec = O::specs[I];
  if constexpr (I == O::x || I == O::out) {
    // entered by issueLikeX
  } else if constexpr (spec.kind == OperandKind::Tensor) {
    if constexpr (spec.required)
      input(frame, in, call, I);
    else
      optionalInput(frame, in, call, I);
  } else if constexpr (spec.kind == OperandKind::Int) {
    call.integers[I] = spec.axis ? axisOperand(frame, in, I, x.rank())
                                 : frame.integerOperand(in, I, static_cast<int64_t>(spec.byDefault));
    call.scalars[I] = static_cast<double>(call.integers[I]);
  } else if constexpr (spec.kind == OperandKind::Float || spec.kind == OperandKind::Bool) {
    call.scalars[I] = frame.scalar(in, I, spec.byDefault);
  } else {
    static_assert(kNever<O>, "an operation shaped like x takes tensors, integers, floats and flags");
  }
}

// out = f(x), shaped like x: the elementwise operations of one input and
// the row and axis operations (rms_norm, softmax, layer_norm, rope,
// cumsum), whose kernels read a row before they write it, so that the very
// view in and out is in place. Its other operands are entered as their
// specs (`O::specs`) say, so an operation shaped like x needs no rule of
// its own.
template <typename O>
void issueLikeX(RunFrame& frame, const Instruction& in) {
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  [&]<size_t... I>(std::index_sequence<I...>) { (enterOperand<O, I>(frame, in, call, x), ...); }
  (std::make_index_sequence<std::size(O::specs)>{});
  issueKernel(frame, in, call, O::out, x.dtype, x.shape, /*elementwise=*/true);
}

// out like q, and the optional f32 lse [Tq, heads]: two outputs, each
// staged when an input (or the other output) overlaps it.
void issueAttention(RunFrame& frame, const Instruction& in) {
  using O = operands::Attention;
  KernelCall call = callFor(in);
  const TensorView& q = input(frame, in, call, O::q);
  input(frame, in, call, O::k);
  input(frame, in, call, O::v);
  optionalInput(frame, in, call, O::lse);
  setInteger(frame, in, call, O::heads, 0);
  setInteger(frame, in, call, O::kv_heads, call.integer(O::heads));
  call.scalars[O::causal] = frame.scalar(in, O::causal, 0);
  setInteger(frame, in, call, O::q_offset, 0);
  setInteger(frame, in, call, O::k_offset, 0);
  call.operands[O::out] = &output(frame, in, O::out, q.dtype, q.shape);
  issueWriting(frame, in, call, {O::out, O::lse}, /*elementwise=*/false, /*readFirst=*/false);
}

// o and lse updated in place, element by element of each (row, head).
void issueMergeAttention(RunFrame& frame, const Instruction& in) {
  using O = operands::MergeAttention;
  KernelCall call = callFor(in);
  for (size_t operand : {O::o, O::lse, O::part, O::part_lse}) input(frame, in, call, operand);
  issueWriting(frame, in, call, {O::o, O::lse}, /*elementwise=*/true, /*readFirst=*/true);
}

// y = x[idx] on rows: idx.shape + x.shape[1:].
void issueGatherRows(RunFrame& frame, const Instruction& in) {
  using O = operands::GatherRows;
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  const TensorView& idx = input(frame, in, call, O::idx);
  issueKernel(frame, in, call, O::out, x.dtype, result_shape::gatherRows(x.shape, idx.shape), /*elementwise=*/false);
}

// out[idx[...]] += src[...]: any sharing between src and out is staged, as
// a row added early may be read as src later.
void issueScatterAddRows(RunFrame& frame, const Instruction& in) {
  using O = operands::ScatterAddRows;
  KernelCall call = callFor(in);
  for (size_t operand : {O::src, O::idx, O::out}) input(frame, in, call, operand);
  issueWriting(frame, in, call, {O::out}, /*elementwise=*/false, /*readFirst=*/true);
}

// out = x in the dtype the statement names (the compiled instruction's dtype).
void issueCast(RunFrame& frame, const Instruction& in) {
  using O = operands::Cast;
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  issueKernel(frame, in, call, O::out, in.dtype, x.shape, /*elementwise=*/true);
}

// out = a where c, else b: like a (c and b broadcast to it).
void issueWhere(RunFrame& frame, const Instruction& in) {
  using O = operands::Where;
  KernelCall call = callFor(in);
  input(frame, in, call, O::c);
  const TensorView& a = input(frame, in, call, O::a);
  input(frame, in, call, O::b);
  issueKernel(frame, in, call, O::out, a.dtype, a.shape, /*elementwise=*/true);
}

// sum, mean, max: x without the axis (in call.integers[axis], normalized).
void issueReduce(RunFrame& frame, const Instruction& in) {
  using O = operands::Reduce;
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  const int64_t axis = axisOperand(frame, in, O::axis, x.rank());
  call.integers[O::axis] = axis;
  call.scalars[O::axis] = static_cast<double>(axis);
  issueKernel(frame, in, call, O::out, x.dtype, result_shape::reduce(x.shape, axis), /*elementwise=*/false);
}

// The k largest along the last axis (x's dtype) and their i32 positions,
// both x's shape with k there; two outputs, each staged when an input
// overlaps it.
void issueTopK(RunFrame& frame, const Instruction& in) {
  using O = operands::TopK;
  KernelCall call = callFor(in);
  const TensorView& x = input(frame, in, call, O::x);
  setInteger(frame, in, call, O::k, 1);
  const Dims shape = result_shape::topK(x.shape, call.integer(O::k));
  call.operands[O::out] = &output(frame, in, O::out, x.dtype, shape);
  call.operands[O::indices] = &output(frame, in, O::indices, writtenDType(in, O::indices, x.dtype), shape);
  issueWriting(frame, in, call, {O::out, O::indices}, /*elementwise=*/false, /*readFirst=*/false);
}

// i32 [buckets, capacity] from idx.
void issueBucket(RunFrame& frame, const Instruction& in) {
  using O = operands::Bucket;
  KernelCall call = callFor(in);
  const TensorView& idx = input(frame, in, call, O::idx);
  setInteger(frame, in, call, O::buckets, 1);
  setInteger(frame, in, call, O::capacity, 1);
  const Dims shape = result_shape::bucket<Dims>(call.integer(O::buckets), call.integer(O::capacity));
  issueKernel(frame, in, call, O::out, writtenDType(in, O::out, idx.dtype), shape, /*elementwise=*/false);
}

// fill and iota: the type's tensor, allocated on the current stream, then
// computed into; the kernel finds it in the type slot (operands::Fill::type).
void issueConstant(RunFrame& frame, const Instruction& in) {
  static_assert(size_t{operands::Fill::type} == size_t{operands::Iota::type});
  const Dims shape = frame.dims(in);
  TensorView& result = frame.value(in.result).tensor;
  result = allocateResult(frame, in, in.dtype, shape, false);
  KernelCall call = callFor(in);
  call.operands[operands::Fill::type] = &result;
  const OpSignature& sig = signatureOf(in.op);
  for (size_t i = 0; i < sig.operands.size(); ++i) {
    if (sig.operands[i].kind == OperandKind::Float) call.scalars[i] = frame.scalar(in, i);
    if (sig.operands[i].kind == OperandKind::Int) {
      call.integers[i] = axisOperand(frame, in, i, shape.size);
      call.scalars[i] = static_cast<double>(call.integers[i]);
    }
  }
  frame.backend.compute(frame.current, call);
}

}  // namespace

// x's view with its axes permuted (the instruction's dims: the axes), copied into the result.
void issueTranspose(RunFrame& frame, const Instruction& in) {
  using O = operands::Transpose;
  const TensorView& x = frame.tensor(in, O::x);
  TensorView permuted = x;
  const Dims axes = frame.dims(in);
  permuted.shape = result_shape::transpose(x.shape, axes);
  permuted.strides = result_shape::transpose(x.strides, axes);
  const TensorView& out = output(frame, in, O::out, x.dtype, permuted.shape);
  if (!overlapsInput(out, &x, /*elementwise=*/false)) {
    frame.backend.copy(frame.current, permuted, out);
    return;
  }
  TensorView temporary = stagingTemporary(frame, in, out);
  frame.backend.copy(frame.current, permuted, temporary);
  unstage(frame, temporary, out);
}

void issueReshape(RunFrame& frame, const Instruction& in) {
  using O = operands::Reshape;
  const Dims shape = frame.dims(in);
  frame.value(in.result).tensor = frame.tensor(in, O::t).reshaped(shape);
}

void issueAllocate(RunFrame& frame, const Instruction& in) {
  const Dims shape = frame.dims(in);
  frame.value(in.result).tensor = allocateResult(frame, in, in.dtype, shape, in.zero);
}

void issueDeallocate(RunFrame& frame, const Instruction& in) {
  using O = operands::Deallocate;
  frame.backend.deallocate(frame.tensor(in, O::t), frame.current);
  frame.value(frame.slot(in, O::t)).tensor = TensorView{};
}

void issueShardByStream(RunFrame& frame, const Instruction& in) {
  using O = operands::ShardByStream;
  frame.value(in.result).tensor =
      frame.tensor(in, O::t).chunk(static_cast<size_t>(frame.integer(frame.slot(in, O::axis))),
                                   frame.integer(frame.slot(in, O::index)), frame.integer(frame.slot(in, O::chunks)));
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

// Every operation's rule, by its row of ir/op_list.h: the computations'
// above, the rest declared in runtime/issue_rules.h.
const IssueRule kIssueRules[kOpKindCount] = {
#define HOSTIR_ISSUE_RULE(kind, spelling, specs, mode, value, category, cost, shape, flops, kernel, result, check, \
                          issue)                                                                                   \
  &issue,
    HOSTIR_OP_LIST(HOSTIR_ISSUE_RULE)
#undef HOSTIR_ISSUE_RULE
};

}  // namespace hostir
