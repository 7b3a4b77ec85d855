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

#include <array>
#include <functional>

#include "passes/pass.h"

namespace hostir {

class AssignStreamsPass : public Pass {
 public:
  // One way to rewrite a loop: its schedule in words ("worker streams",
  // one per iteration, or "2 worker streams") and the whole program with it.
  struct LoopRewrite {
    std::string schedule;
    Program program;
    // "iterations on 2 worker streams", "as a pipeline of depth 1".
    std::string inWords() const;
  };
  // Asked, for each loop the pass can rewrite safely, which rewrite to keep:
  // an index into `rewrites`, or nullopt to leave the loop as written (overlap
  // keeps the one the cost model predicts fastest, where it pays). The
  // first rewrite runs each iteration on its own worker stream; with
  // `moreSchedules`, the others run iteration i on stream(i mod k) for each
  // power of two k below the loop's trip count (at most kMaxFewerStreams),
  // then pipeline the loop (passes/pipeline.h) at each of kPipelineDepths
  // where it fits that shape.
  using ChooseRewrite = std::function<std::optional<size_t>(
      const Program& asWritten, const std::vector<LoopRewrite>& rewrites, const ForLoop& loop)>;
  static constexpr int kMaxFewerStreams = 3;
  static constexpr std::array<int64_t, 2> kPipelineDepths = {1, 2};
  // Rewrites offered to choose_ per loop, at most.
  static constexpr int kMaxRewrites = 1 + kMaxFewerStreams + static_cast<int>(kPipelineDepths.size());

  // Asked first, for each loop the pass could rewrite, whether to weigh it
  // at all (overlap: while its budget of predictions lasts).
  using ConsiderLoop = std::function<bool(const ForLoop& loop)>;

  AssignStreamsPass() = default;
  explicit AssignStreamsPass(ChooseRewrite choose, ConsiderLoop consider = nullptr, bool moreSchedules = false)
      : choose_(std::move(choose)), consider_(std::move(consider)), moreSchedules_(moreSchedules) {}

  static constexpr std::string_view kName = "assign-streams";
  static constexpr std::string_view kSummary =
      "run the iterations of each top-level loop that issues work on worker streams, joined afterwards, where "
      "they are independent";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;

 private:
  ChooseRewrite choose_;        // empty: every safe rewrite is kept
  ConsiderLoop consider_;       // empty: every loop is considered
  bool moreSchedules_ = false;  // also offer choose_ fewer streams than iterations, and pipelines
};

// Whether assign-streams considers this loop: it issues work and does not
// choose its own streams. It is rewritten when its iterations are also
// proved independent.
bool assignStreamsApplies(const ForLoop& loop);

}  // namespace hostir
