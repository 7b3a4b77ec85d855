// The bound check's rules for the communications: allreduce, allgather,
// reduce_scatter, broadcast and sendrecv, checked for a team of world_
// ranks (ir/shape_checker.h).
#include "ir/diagnostic.h"
#include "ir/shape_checker.h"
#include "ir/shapes.h"

namespace hostir::verification {

void ShapeChecker::checkAllreduce(const Operation& op) {
  const BoundTensor& t = tensor(op, operands::Allreduce::t);
  if (op.operands[operands::Allreduce::out])
    requireShape(op, operands::Allreduce::out, t.shape, "the result of 'allreduce'");
  bindHandle(op);
}

void ShapeChecker::checkAllgather(const Operation& op) {
  const BoundTensor& t = tensor(op, operands::Allgather::t);
  int64_t axis = intOperand(op, operands::Allgather::axis, 0);
  checkAxis(op, operands::Allgather::axis, axis, t);
  std::vector<int64_t> shape = t.shape;
  int64_t& extent = shape[static_cast<size_t>(axis)];
  if (__builtin_mul_overflow(extent, world_, &extent))
    fail(op.loc,
         fmt::format("'allgather' over {} ranks: the gathered extent of axis {}, {} x {}, does not fit in 64 bits",
                     world_, axis, t.shape[static_cast<size_t>(axis)], world_));
  checkByteSize(op.loc, "the gathered tensor", t.dtype, shape);
  requireShape(op, operands::Allgather::out, shape, fmt::format("'allgather' over {} ranks", world_));
  bindHandle(op);
}

void ShapeChecker::checkReduceScatter(const Operation& op) {
  const BoundTensor& t = tensor(op, operands::ReduceScatter::t);
  int64_t axis = intOperand(op, operands::ReduceScatter::axis, 0);
  checkAxis(op, operands::ReduceScatter::axis, axis, t);
  std::vector<int64_t> shape = t.shape;
  int64_t& extent = shape[static_cast<size_t>(axis)];
  if (extent % world_ != 0)
    fail(op.operands[operands::ReduceScatter::t]->loc,
         fmt::format("'reduce_scatter' splits axis {} of extent {} over {} ranks: it must divide evenly", axis, extent,
                     world_));
  extent = shardExtent(extent, world_);
  requireShape(op, operands::ReduceScatter::out, shape, fmt::format("'reduce_scatter' over {} ranks", world_));
  bindHandle(op);
}

void ShapeChecker::checkBroadcast(const Operation& op) {
  int64_t root = intOperand(op, operands::Broadcast::root);
  if (root < 0 || root >= world_)
    fail(op.operands[operands::Broadcast::root]->loc,
         fmt::format("root {} is not a rank of a team of {}", root, world_));
  bindHandle(op);
}

void ShapeChecker::checkSendRecv(const Operation& op) {
  // The structure check gave src and out one dtype; their element
  // counts may differ (a ring of uneven blocks), pairing is checked
  // across ranks by `hostir check`.
  for (size_t operand : {size_t{operands::SendRecv::to}, size_t{operands::SendRecv::from}}) {
    int64_t peer = intOperand(op, operand);
    if (peer < 0 || peer >= world_)
      fail(op.operands[operand]->loc,
           fmt::format("'sendrecv' {} rank {}, which is not a rank of a team of {}",
                       operand == operands::SendRecv::to ? "sends to" : "receives from", peer, world_));
  }
  bindHandle(op);
}

// A communication's optional result: the handle `wait` takes.
void ShapeChecker::bindHandle(const Operation& op) {
  if (op.result()) bind(op.result()->name, BoundValue{ValueKind::Handle});
}

}  // namespace hostir::verification
