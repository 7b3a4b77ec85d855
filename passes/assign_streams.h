// assign-streams (nvFuser's AssignStreams): runs the iterations of every
// top-level loop that issues work on worker streams, so that one
// iteration's communication overlaps the next one's computation.
//
//   main = get_current_stream()
//   for i in range(S) {
//     set_current_stream(stream(i))
//     synchronize(main)        # the iteration sees everything issued before the loop
//     ...the original body...
//   }
//   set_current_stream(main)
//   for j in range(S) {        # the join: later work sees every iteration
//     synchronize(stream(j))
//   }
//
// Loops left as they are: nested loops (their top-level loop is rewritten
// as a whole), loops that do no work, i.e. no computation or communication,
// only views, integers or ordering (nothing to overlap; this also makes the
// pass idempotent, as join loops are left alone), and loops
// that call set_current_stream themselves (they already manage streams).
// The pass assumes the iterations are independent of each other, as
// nvFuser's does; `hostir check` proves the result race-free.
#pragma once

#include "passes/pass.h"

namespace hostir {

class AssignStreamsPass : public Pass {
 public:
  static constexpr std::string_view kName = "assign-streams";
  static constexpr std::string_view kSummary =
      "run the iterations of each top-level loop that issues work on worker streams, joined afterwards";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  Status run(Program& program) override;
};

// Whether assign-streams rewrites this loop.
bool assignStreamsApplies(const ForLoop& loop);

}  // namespace hostir
