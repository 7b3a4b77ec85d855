// assign-streams (nvFuser's AssignStreams): runs the iterations of every
// top-level loop that issues work on worker streams, so that one
// iteration's communication overlaps the next one's computation.
//
//   main = get_current_stream()
//   for i in range(S) {
//     with stream(i) {
//       synchronize(main)      # the iteration sees everything issued before the loop
//       ...the original body...
//     }                        # main is the current stream again
//   }
//   for j in range(S) {        # the join: later work sees every iteration
//     synchronize(stream(j))
//   }
//
// Iteration i of range(a, b) runs on stream(i - a), so the iterations use
// stream(0) .. stream(b - a - 1) whatever the start; the join synchronizes
// the same streams.
//
// A loop is rewritten only when its iterations are independent: the pass
// rewrites it, race-checks the whole program with the context's bindings
// and keeps the rewrite only if it made no race the program did not have.
// Loops left as they are: nested loops (their top-level loop moves as a
// whole), loops that do no work, i.e. no computation or communication, only
// views, integers or ordering (nothing to overlap; this also makes the pass
// idempotent, as join loops are left alone), loops that call
// set_current_stream or hold with blocks themselves (they already manage
// streams; this keeps a rewritten loop as it is, too), loops inside a
// top-level with block (it chose their stream), loops inside an if branch
// (they run on some ranks only; an if inside a loop's body moves with the
// body), and loops whose iterations depend on each other or that nothing
// proves independent (no race check in the context; a body with an if is
// race-checked with the branches each rank and iteration takes). Each
// decision is a remark.
#pragma once

#include <functional>

#include "passes/pass.h"

namespace hostir {

class AssignStreamsPass : public Pass {
 public:
  // Asked, for each loop the pass can rewrite safely, whether to keep the
  // rewrite: the program with the loop as written, then with the rewrite
  // (overlap keeps only the rewrites the cost model says pay).
  using KeepRewrite = std::function<bool(const Program& asWritten, const Program& rewritten, const ForLoop& loop)>;

  // Asked first, for each loop the pass could rewrite, whether to weigh it
  // at all (overlap: while its budget of predictions lasts).
  using ConsiderLoop = std::function<bool(const ForLoop& loop)>;

  AssignStreamsPass() = default;
  explicit AssignStreamsPass(KeepRewrite keep, ConsiderLoop consider = nullptr)
      : keep_(std::move(keep)), consider_(std::move(consider)) {}

  static constexpr std::string_view kName = "assign-streams";
  static constexpr std::string_view kSummary =
      "run the iterations of each top-level loop that issues work on worker streams, joined afterwards, where "
      "they are independent";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;

 private:
  KeepRewrite keep_;       // empty: every safe rewrite is kept
  ConsiderLoop consider_;  // empty: every loop is considered
};

// Whether assign-streams considers this loop: it issues work and does not
// choose its own streams. It is rewritten when its iterations are also
// proved independent.
bool assignStreamsApplies(const ForLoop& loop);

}  // namespace hostir
