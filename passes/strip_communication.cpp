#include "passes/strip_communication.h"

#include "passes/strip_work.h"

namespace hostir {

Status StripCommunicationPass::run(Program& program, const PassContext&) {
  eraseOperationsIf(program.body, [](const Operation& op) {
    switch (op.kind) {
      case OpKind::Allreduce:
      case OpKind::Allgather:
      case OpKind::ReduceScatter:
      case OpKind::Broadcast:
      case OpKind::Wait: return true;
      default: return false;
    }
  });
  return std::nullopt;
}

}  // namespace hostir
