// strip-compute: the communication-only variant of a program, for measuring
// how much of a run is communication (scripts/bench-overlap.sh, and the
// comm_ms of `hostir simulate`). Removes every linear, matmul, add and copy
// that writes into an existing tensor (`out=`), and turns each one written
// `y = op(...)` into `y = allocate(...)` of its result's type
// (ir/symbolic_types.h), since later statements use the tensor it
// defines. The result communicates data that was never computed: time it,
// do not check it.
#pragma once

#include "passes/pass.h"

namespace hostir {

class StripComputePass : public Pass {
 public:
  static constexpr std::string_view kName = "strip-compute";
  static constexpr std::string_view kSummary =
      "benchmark variant: remove every linear, matmul, add and copy (a result becomes its allocation), leaving the "
      "communication";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;
};

}  // namespace hostir
