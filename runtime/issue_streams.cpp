// The issue rules of the operations that only order streams or change host
// state: wait, get_current_stream, set_current_stream, synchronize,
// record_event, wait_event, and the integers ceildiv/min/max
// (runtime/issue_rules.h).
#include <algorithm>

#include "ir/shapes.h"
#include "runtime/issue_rules.h"

namespace hostir {

void issueWait(RunFrame& frame, const Instruction& in) {
  frame.backend.waitEvent(frame.current, frame.eventOperand(in, operands::Wait::h));
}

void issueGetCurrentStream(RunFrame& frame, const Instruction& in) { frame.value(in.result).stream = frame.current; }

void issueSetCurrentStream(RunFrame& frame, const Instruction& in) {
  frame.current = frame.stream(in, operands::SetCurrentStream::s);
}

void issueSynchronize(RunFrame& frame, const Instruction& in) {
  Stream* target = frame.stream(in, operands::Synchronize::s);
  if (target != frame.current) frame.backend.waitEvent(frame.current, frame.backend.recordEvent(target));
}

void issueRecordEvent(RunFrame& frame, const Instruction& in) {
  frame.eventResult(in) = frame.backend.recordEvent(frame.current);
}

void issueWaitEvent(RunFrame& frame, const Instruction& in) {
  frame.backend.waitEvent(frame.current, frame.eventOperand(in, operands::WaitEvent::ev));
}

void issueIntValue(RunFrame& frame, const Instruction& in) {
  frame.value(in.result).integer = frame.integer(frame.slot(in, operands::IntValue::value));
}

}  // namespace hostir
