// canonicalize: removes the ordering that the race analysis proves implied,
// as IREE's ElideTimepoints elides timepoints already reached. It removes
//   * synchronize, wait and wait_event statements whose ordering is implied
//     by others (or needed by nothing: the executor waits for every stream
//     when the program ends, before outputs are read);
//   * record_event statements and get_current_stream captures left unused;
//   * set_current_stream statements that change no statement's stream: a
//     switch to the stream already current, or one overridden before any
//     statement issues on it (or before a with block gives its stream back);
//   * loops, with blocks and ifs left empty by the removals (an if whose
//     then branch is empty but not its else branch becomes `if not COND`).
// Statements inside if branches are handled as those of loop bodies: a
// branch is a scope, and a loop or if that switches streams leaves the
// current stream after it unknown.
// and writes the remaining switches with the fewest of them:
//   * set_current_stream(s) ... set_current_stream(p), where p is known to
//     be the stream current before (a capture made while it was current),
//     becomes `with s { ... }`;
//   * adjacent `with s` blocks merge (only views and integers between them);
//   * a `with s` where s is already current gives way to its body.
// A synchronization is removed only when the program without it has no race
// that the program with it did not have, for every rank with the bound
// parameters and the context's worker pool: the race oracle is the proof.
// It tries them one at a time, last to first, so every synchronization that
// remains is needed (removing it alone makes a race). The stream switches
// and with blocks are rewritten by what the text shows (no oracle needed),
// so without a race oracle only they change. The program's meaning does not change. Each removal
// is a remark; a program that does not verify is left as it is.
#pragma once

#include "passes/pass.h"

namespace hostir {

class CanonicalizePass : public Pass {
 public:
  static constexpr std::string_view kName = "canonicalize";
  static constexpr std::string_view kSummary =
      "remove the synchronizations, events and stream switches that the race analysis proves implied";

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;
};

// What CanonicalizePass does, for passes that canonicalize their output;
// its remarks are made under `remarkAs`.
Status canonicalizeProgram(Program& program, const PassContext& context,
                           std::string_view remarkAs = CanonicalizePass::kName);

}  // namespace hostir
