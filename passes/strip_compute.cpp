#include "passes/strip_compute.h"

#include "passes/strip_work.h"

namespace hostir {

Status StripComputePass::run(Program& program, const PassContext&) {
  eraseOperationsIf(program.body, [](const Operation& op) {
    switch (op.kind) {
      case OpKind::Linear:
      case OpKind::Matmul:
      case OpKind::Add:
      case OpKind::Copy: return op.results.empty();
      default: return false;
    }
  });
  return std::nullopt;
}

}  // namespace hostir
