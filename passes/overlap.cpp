#include "passes/overlap.h"

namespace hostir {

Status OverlapPass::run(Program&, const PassContext&) { return std::nullopt; }

}  // namespace hostir
