// The bound check's rules for the operations that order streams or change
// host state: set_current_stream, synchronize, get_current_stream,
// record_event and ceildiv/min/max; wait and wait_event have nothing to
// check once the structure check has passed (ir/shape_checker.h).
#include "ir/diagnostic.h"
#include "ir/shape_checker.h"

namespace hostir::verification {

// set_current_stream(s), synchronize(s): a `stream(e)` number must not be negative.
void ShapeChecker::checkStreamOperand(const Operation& op) {
  static_assert(size_t{operands::SetCurrentStream::s} == size_t{operands::Synchronize::s});
  checkStreamNumber(*op.operands[operands::SetCurrentStream::s]);
}

// get_current_stream, record_event: a stream or an event, with nothing to check.
void ShapeChecker::bindStreamResult(const Operation& op) {
  bind(op.result()->name, BoundValue{op.signature().resultKind});
}

void ShapeChecker::checkIntValue(const Operation& op) {
  // Each operand on its own: a call around them would be one level deeper than the limit allows.
  const Arg& a = *op.operands[operands::IntValue::a];
  const Arg& b = *op.operands[operands::IntValue::b];
  auto value = applyIntFunction(op.intFunction, eval(a.expr, a.loc), eval(b.expr, b.loc), op.loc);
  if (!value) throw DiagnosticError{value.error()};
  bind(op.result()->name, BoundValue{ValueKind::Int, *value});
}

}  // namespace hostir::verification
