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

// `n = expr`.
void ShapeChecker::checkIntValue(const Operation& op) {
  const Arg& value = *op.operands[operands::IntValue::value];
  bind(op.result()->name, BoundValue{ValueKind::Int, eval(value.expr, value.loc)});
}

}  // namespace hostir::verification
