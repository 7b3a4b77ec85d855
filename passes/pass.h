// A pass rewrites a Program in place. Passes are registered by name so the
// command line can build a pipeline (`--passes a,b`), as mlir-opt does.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/race_finding.h"
#include "hostir/defaults.h"
#include "ir/cancellation.h"
#include "ir/ir.h"
#include "ir/verifier.h"

namespace hostir {

// A decision a pass explains under `--remarks`: which statement, and why.
struct Remark {
  std::string pass;  // e.g. "assign-streams"
  SourceLoc loc;
  std::string message;
  std::vector<Note> notes = {};
  // A pass stopped short of its work (a limit): shown even where remarks are not.
  bool warning = false;
  // A scheduling pass's choice for the loop at `loc` ("as written", "worker
  // streams", "2 worker streams"); empty for other remarks. `tune` prints it.
  std::string schedule = {};
};
using RemarkSink = std::function<void(const Remark&)>;

// Lists the races of a program that verifies with the context's bindings:
// every rank, the parameters bound, the pool of worker streams the program
// will run with. Whoever runs the passes decides the worker pool and the
// team, so the context carries the check (passes/race_oracle.h builds it
// from analysis/race_check) rather than the passes building it themselves.
using RaceOracle = std::function<std::vector<RaceFinding>(const Program&)>;

// What the cost model predicts for one program (passes/cost_oracle.h).
struct CostPrediction {
  double seconds = 0;  // the whole run, on the slowest rank
  // Per top-level statement of the body: the seconds its work costs alone
  // (summed over a loop's iterations; 0 for statements that issue none),
  // on rank 0. Straight-line scheduling weighs its tasks with these.
  std::vector<double> statementSeconds;
};

// Predicts a program's run time on the machine the passes schedule for,
// with the context's bindings; an error when the model cannot price it.
using CostOracle = std::function<Result<CostPrediction>(const Program&)>;

// What a pass may rely on besides the program.
struct PassContext {
  Bindings bindings;                  // the params and team size the program is verified for
  RaceOracle raceCheck;               // empty: nothing can be proved race-free
  int64_t streams = kDefaultStreams;  // the worker stream pool raceCheck proves for
  RemarkSink remarks;                 // empty: remarks are dropped
  CostOracle predict;                 // empty: no machine (`--machine`), so no pass may consult a cost model
  // The smallest predicted gain, as a fraction of the time without the
  // change, for which a pass that consults the cost model makes the change.
  double minimumGain = kDefaultMinimumGain;
  // Set by another thread to stop the passes (ir/cancellation.h); null: they
  // cannot be cancelled. Build raceCheck with the same flag (raceOracle), so
  // that a long race proof stops too.
  const std::atomic<bool>* cancel = nullptr;

  // Throws Cancelled once `cancel` is set. Passes call it per statement or
  // candidate they consider, so that a cancel is seen within milliseconds.
  void checkCancelled() const { throwIfCancelled(cancel); }

  void remark(std::string_view pass, SourceLoc loc, std::string message, std::vector<Note> notes = {}) const {
    if (remarks) remarks(Remark{std::string(pass), loc, std::move(message), std::move(notes)});
  }
  void warn(std::string_view pass, SourceLoc loc, std::string message) const {
    if (remarks) remarks(Remark{std::string(pass), loc, std::move(message), {}, true});
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;     // e.g. "assign-streams"
  virtual std::string_view summary() const = 0;  // one line for --help
  // Throws Cancelled when the context's flag is set; `program` is then left
  // valid to destroy or assign, but not as any pass would leave it.
  virtual Status run(Program& program, const PassContext& context) = 0;
  // Whether it consults the context's cost model (the tools then require --machine).
  virtual bool needsCostModel() const { return false; }
  // With an empty context: default bindings, no race check, no remarks.
  // (Derived passes say `using Pass::run;` to keep this overload visible.)
  Status run(Program& program) { return run(program, PassContext{}); }
};

}  // namespace hostir
