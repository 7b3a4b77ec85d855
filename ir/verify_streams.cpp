// The bound check's rules for the operations that order streams or change
// host state: set_current_stream, synchronize, get_current_stream,
// record_event and ceildiv/min/max, and the elements of handle and event
// arrays that communications, record_event, wait and wait_event name
// (ir/shape_checker.h).
#include "ir/diagnostic.h"
#include "ir/shape_checker.h"

namespace hostir::verification {

// set_current_stream(s), synchronize(s): a `stream(e)` number must not be negative.
void ShapeChecker::checkStreamOperand(const Operation& op) {
  static_assert(size_t{operands::SetCurrentStream::s} == size_t{operands::Synchronize::s});
  checkStreamNumber(*op.operands[operands::SetCurrentStream::s]);
}

// get_current_stream, record_event: a stream or an event, with nothing to check.
void ShapeChecker::bindStreamResult(const Operation& op) { bindEventResult(op); }

void ShapeChecker::bindEventResult(const Operation& op) {
  const NameDef& result = *op.result();
  if (!result.isElement()) {
    bind(result.name, BoundValue{op.signature().resultKind});
    return;
  }
  int64_t index = elementIndex(result.name, result.index, result.loc);
  auto [first, inserted] = issuedElements_[result.name].emplace(index, result.loc);
  if (!inserted)
    fail(result.loc,
         fmt::format("'{}[{}]' is defined twice in this run: rank {} defined it at {}:{} already", result.name, index,
                     values_[kRankSlot].integer, first->second.line, first->second.col));
}

void ShapeChecker::checkWaitOperand(const Operation& op) {
  static_assert(size_t{operands::Wait::h} == size_t{operands::WaitEvent::ev});
  const Arg& arg = *op.operands[operands::Wait::h];
  if (!arg.isElement()) return;
  int64_t index = elementIndex(arg.nameValue(), arg.index, arg.loc);
  const auto& issued = issuedElements_[arg.nameValue()];
  if (!issued.count(index))
    fail(arg.loc, fmt::format("'{}' waits on '{}[{}]', which rank {} has not issued yet", op.signature().name,
                              arg.nameValue(), index, values_[kRankSlot].integer));
}

int64_t ShapeChecker::elementIndex(const std::string& array, const Expr& index, SourceLoc loc) {
  int64_t value = eval(index, loc);
  if (value < 0) fail(loc, fmt::format("index {} of array '{}' is negative", value, array));
  return value;
}

// `n = expr`.
void ShapeChecker::checkIntValue(const Operation& op) {
  const Arg& value = *op.operands[operands::IntValue::value];
  bind(op.result()->name, BoundValue{ValueKind::Int, eval(value.expr, value.loc)});
}

}  // namespace hostir::verification
