// A pass rewrites a Program in place. Passes are registered by name so the
// command line can build a pipeline (`--passes a,b`), as mlir-opt does.
#pragma once

#include <memory>
#include <string_view>

#include "hostir/ir.h"

namespace hostir {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;     // e.g. "assign-streams"
  virtual std::string_view summary() const = 0;  // one line for --help
  virtual Status run(Program& program) = 0;
};

}  // namespace hostir
