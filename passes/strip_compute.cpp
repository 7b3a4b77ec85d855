#include "passes/strip_compute.h"

#include "passes/strip_work.h"

namespace hostir {

Status StripComputePass::run(Program& program, const PassContext&) {
  // Local tensor work (compute and copies) written into an existing tensor:
  // those written `y = op(...)` define a tensor later statements use.
  eraseOperationsIf(program.body, [](const Operation& op) {
    return isLocalTensorWork(op.signature().category) && op.results.empty();
  });
  return std::nullopt;
}

}  // namespace hostir
