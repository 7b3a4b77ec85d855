#include "passes/canonicalize.h"

namespace hostir {

Status canonicalizeProgram(Program&, const PassContext&, std::string_view) { return std::nullopt; }

Status CanonicalizePass::run(Program& program, const PassContext& context) {
  return canonicalizeProgram(program, context);
}

}  // namespace hostir
