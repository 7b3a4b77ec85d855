// The bound check's rules for the operations that work on the rank's own
// tensors: allocate, deallocate, shard_by_stream, copy, and every
// computation (ir/shape_checker.h). A computation's rule is a member of
// ComputeRules and one case of checkCompute's switch, at the end of this file.
#include <stdexcept>

#include "ir/diagnostic.h"
#include "ir/shape_checker.h"
#include "ir/shapes.h"

namespace hostir::verification {

void ShapeChecker::checkAllocate(const Operation& op) {
  const TensorType& type = op.operands[operands::Allocate::type]->type;
  bindTensor(op.result()->name, type.dtype, extents(type), op.result()->name);
}

void ShapeChecker::checkDeallocate(const Operation& op) {
  const Arg& arg = *op.operands[operands::Deallocate::t];
  BufferState& buffer = *lookup(arg.nameValue()).tensor.buffer;
  buffer.deallocated = true;
  buffer.deallocatedAt = op.loc;
}

void ShapeChecker::checkShardByStream(const Operation& op) {
  const BoundTensor& t = tensor(op, operands::ShardByStream::t);
  int64_t axis = intOperand(op, operands::ShardByStream::axis);
  int64_t chunks = intOperand(op, operands::ShardByStream::chunks);
  int64_t index = intOperand(op, operands::ShardByStream::index);
  checkAxis(op, operands::ShardByStream::axis, axis, t);
  if (chunks < 1)
    fail(op.operands[operands::ShardByStream::chunks]->loc, fmt::format("chunks must be at least 1, got {}", chunks));
  if (index < 0 || index >= chunks)
    fail(op.operands[operands::ShardByStream::index]->loc,
         fmt::format("index {} is out of range for {} chunks", index, chunks));
  std::vector<int64_t> shape = t.shape;
  int64_t& extent = shape[static_cast<size_t>(axis)];
  extent = chunkExtent(extent, index, chunks);
  BoundTensor view{t.dtype, std::move(shape), t.buffer};
  bind(op.result()->name, BoundValue{ValueKind::Tensor, 0, std::move(view)});
}

void ShapeChecker::checkCopy(const Operation& op) {
  const BoundTensor& src = tensor(op, operands::Copy::src);
  produce(op, operands::Copy::out, src.dtype, src.shape);
}

// The shape rules of the computations: each checks its operands and binds
// its result (or checks its out= operand) through the checker.
struct ComputeRules {
  ShapeChecker& c;
  const Operation& op;

  void linear() {
    const BoundTensor& x = c.tensor(op, operands::Linear::x);
    const BoundTensor& w = c.tensor(op, operands::Linear::w);
    if (x.shape.empty()) fail(op.operands[operands::Linear::x]->loc, "'linear' needs an input x of rank 1 or more");
    if (w.shape.size() != 2)
      fail(op.operands[operands::Linear::w]->loc,
           fmt::format("'linear' needs a weight of shape [N, K], got {}", shapeString(w.shape)));
    if (w.shape[1] != x.shape.back())
      fail(op.operands[operands::Linear::w]->loc,
           fmt::format("'linear' contracts K: x is {} but w is {} (w must be [N, {}])", shapeString(x.shape),
                       shapeString(w.shape), x.shape.back()));
    if (op.operands[operands::Linear::bias])
      c.requireShape(op, operands::Linear::bias, {w.shape[0]}, "the bias of 'linear'");
    std::vector<int64_t> shape = x.shape;
    shape.back() = w.shape[0];
    c.produce(op, operands::Linear::out, x.dtype, shape);
  }

  void matmul() {
    const BoundTensor& a = c.tensor(op, operands::Matmul::a);
    const BoundTensor& b = c.tensor(op, operands::Matmul::b);
    if (a.shape.size() != 2)
      fail(op.operands[operands::Matmul::a]->loc,
           fmt::format("'matmul' needs a of shape [M, K], got {}", shapeString(a.shape)));
    if (b.shape.size() != 2)
      fail(op.operands[operands::Matmul::b]->loc,
           fmt::format("'matmul' needs b of shape [K, N], got {}", shapeString(b.shape)));
    if (a.shape[1] != b.shape[0])
      fail(op.operands[operands::Matmul::b]->loc,
           fmt::format("'matmul' contracts K: a is {} but b is {}", shapeString(a.shape), shapeString(b.shape)));
    c.produce(op, operands::Matmul::out, a.dtype, {a.shape[0], b.shape[1]});
  }

  // a op b, elementwise: b has a's shape; the result is like a.
  template <typename O>
  void binaryElementwise() {
    const BoundTensor& a = c.tensor(op, O::a);
    if (c.tensor(op, O::b).shape != a.shape)  // the message only when it fails
      c.requireShape(op, O::b, a.shape, fmt::format("'{}' (no broadcasting)", op.signature().name));
    c.produce(op, O::out, a.dtype, a.shape);
  }
};

void ShapeChecker::checkCompute(const Operation& op) {
  ComputeRules rules{*this, op};
  switch (op.kind) {
    case OpKind::Linear: rules.linear(); return;
    case OpKind::Matmul: rules.matmul(); return;
    case OpKind::Add: rules.binaryElementwise<operands::Add>(); return;
    default: break;
  }
  throw std::logic_error(fmt::format("internal error: '{}' has no shape rule", op.signature().name));
}

}  // namespace hostir::verification
