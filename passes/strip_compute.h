// strip-compute: the communication-only variant of a program, for measuring
// how much of a run is communication (scripts/bench-overlap.sh). Removes
// every linear, matmul, add and copy that writes into an existing tensor
// (`out=`). Those written `y = op(...)` stay: later statements use the
// tensor they define. The result communicates data that was never computed:
// time it, do not check it.
#pragma once

#include "passes/pass.h"

namespace hostir {

class StripComputePass : public Pass {
 public:
  static constexpr std::string_view kName = "strip-compute";
  static constexpr std::string_view kSummary =
      "benchmark variant: remove every linear, matmul, add and copy written with out=, leaving the communication";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;
};

}  // namespace hostir
