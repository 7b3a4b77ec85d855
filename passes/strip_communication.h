// strip-communication: the compute-only variant of a program, for measuring
// how much of a run is computation (scripts/bench-overlap.sh). Removes every
// collective and every `wait` (handles come only from collectives). The
// result computes on data that was never communicated: time it, do not
// check it.
#pragma once

#include "passes/pass.h"

namespace hostir {

class StripCommunicationPass : public Pass {
 public:
  static constexpr std::string_view kName = "strip-communication";
  static constexpr std::string_view kSummary =
      "benchmark variant: remove every collective and wait, leaving the computation";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;
};

}  // namespace hostir
