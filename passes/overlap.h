// overlap: changes a program's schedule where the cost model (the context's
// `predict`, from `--machine`) predicts a gain of at least the context's
// `minimumGain`, and says why under `--remarks`, with the predicted times,
// for every change it makes and every one it does not.
//
//   * Loops. Each top-level loop that assign-streams could rewrite safely is
//     rewritten only when the program with the rewrite is predicted faster.
//   * Straight-line code. Each run of top-level statements with
//     computations and communications (and no stream management of its
//     own) is split over the main stream, for computations, and a
//     communication stream. The dependence graph comes from the op table's
//     read and write effects; list scheduling (passes/list_schedule.h)
//     orders the tasks, and record_event/wait_event or wait order only the
//     dependences that cross streams.
//
// Its output goes through canonicalize, and like every pass's it is
// race-checked by the pass manager. It needs both a cost model and the
// race check; without either it changes nothing and says so.
#pragma once

#include "passes/pass.h"

namespace hostir {

class OverlapPass : public Pass {
 public:
  static constexpr std::string_view kName = "overlap";
  static constexpr std::string_view kSummary =
      "overlap communication with computation where the cost model predicts a gain (needs --machine)";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  bool needsCostModel() const override { return true; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;
};

}  // namespace hostir
