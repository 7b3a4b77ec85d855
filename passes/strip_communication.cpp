#include "passes/strip_communication.h"

#include "passes/strip_work.h"

namespace hostir {

Status StripCommunicationPass::run(Program& program, const PassContext&) {
  // Every communication, and every operation on a communication handle
  // (`wait`): handles come only from communications.
  eraseOperationsIf(program.body, [](const Operation& op) {
    const OpSignature& sig = op.signature();
    if (sig.category == OpCategory::Communication) return true;
    for (const OperandSpec& spec : sig.operands)
      if (spec.kind == OperandKind::Handle) return true;
    return false;
  });
  return std::nullopt;
}

}  // namespace hostir
