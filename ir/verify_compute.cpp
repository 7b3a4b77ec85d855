// The bound check's rules for the operations that work on the rank's own
// tensors: allocate, deallocate, shard_by_stream, linear, matmul, copy and
// add (ir/shape_checker.h).
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

void ShapeChecker::checkLinear(const Operation& op) {
  const BoundTensor& x = tensor(op, operands::Linear::x);
  const BoundTensor& w = tensor(op, operands::Linear::w);
  if (x.shape.empty()) fail(op.operands[operands::Linear::x]->loc, "'linear' needs an input x of rank 1 or more");
  if (w.shape.size() != 2)
    fail(op.operands[operands::Linear::w]->loc,
         fmt::format("'linear' needs a weight of shape [N, K], got {}", shapeString(w.shape)));
  if (w.shape[1] != x.shape.back())
    fail(op.operands[operands::Linear::w]->loc,
         fmt::format("'linear' contracts K: x is {} but w is {} (w must be [N, {}])", shapeString(x.shape),
                     shapeString(w.shape), x.shape.back()));
  if (op.operands[operands::Linear::bias])
    requireShape(op, operands::Linear::bias, {w.shape[0]}, "the bias of 'linear'");
  std::vector<int64_t> shape = x.shape;
  shape.back() = w.shape[0];
  produce(op, operands::Linear::out, x.dtype, shape);
}

void ShapeChecker::checkMatmul(const Operation& op) {
  const BoundTensor& a = tensor(op, operands::Matmul::a);
  const BoundTensor& b = tensor(op, operands::Matmul::b);
  if (a.shape.size() != 2)
    fail(op.operands[operands::Matmul::a]->loc,
         fmt::format("'matmul' needs a of shape [M, K], got {}", shapeString(a.shape)));
  if (b.shape.size() != 2)
    fail(op.operands[operands::Matmul::b]->loc,
         fmt::format("'matmul' needs b of shape [K, N], got {}", shapeString(b.shape)));
  if (a.shape[1] != b.shape[0])
    fail(op.operands[operands::Matmul::b]->loc,
         fmt::format("'matmul' contracts K: a is {} but b is {}", shapeString(a.shape), shapeString(b.shape)));
  produce(op, operands::Matmul::out, a.dtype, {a.shape[0], b.shape[1]});
}

void ShapeChecker::checkCopy(const Operation& op) {
  const BoundTensor& src = tensor(op, operands::Copy::src);
  produce(op, operands::Copy::out, src.dtype, src.shape);
}

void ShapeChecker::checkAdd(const Operation& op) {
  const BoundTensor& a = tensor(op, operands::Add::a);
  requireShape(op, operands::Add::b, a.shape, "'add' (no broadcasting)");
  produce(op, operands::Add::out, a.dtype, a.shape);
}

}  // namespace hostir::verification
