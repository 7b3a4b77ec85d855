// A pass pipeline applied to a program: the pass manager with the race
// oracle and the cost oracle bound, errors rendered against the source.
// Shared by the API's applyPasses, simulate, run and its command-line entry points.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/program_impl.h"
#include "hostir/catalog.h"
#include "hostir/defaults.h"
#include "model/machine_profile.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"

namespace hostir::api {

struct PipelineOptions {
  int64_t streams = kDefaultStreams;  // the worker pool the output is race-checked for
  bool raceCheck = true;              // false: no race proof (assign-streams then rewrites nothing)
  // The machine that passes consulting the cost model schedule for; null: none.
  std::shared_ptr<const MachineProfile> machine;
  double minimumGain = kDefaultMinimumGain;
  RemarkSink remarks;  // empty: remarks dropped
  bool printIrAfterAll = false;
  std::set<std::string> printIrAfter;
  std::ostream* irDump = nullptr;
  // Set by another thread to stop the passes and their race proofs:
  // applyPipeline then throws hostir::Cancelled (ir/cancellation.h), not
  // Error, for the caller to tell a cancel from a failure. Null: no cancel.
  const std::atomic<bool>* cancel = nullptr;
};

// pipelineProblem (hostir/catalog.h) as Error (kind Usage), "passes: ...".
void checkPipeline(const std::vector<std::string>& passes, bool hasMachine);
// The minimum gain within its bounds (hostir/limits.h), else Error kind Usage.
void checkMinimumGain(double minimumGain);

// Applies `passes` in order, verifying and race-checking after each one;
// throws Error (Usage: a bad pipeline; Program: a pass failed, with its
// position), or Cancelled once `options.cancel` is set.
hostir::Program applyPipeline(const ProgramSource& source, const hostir::Program& program,
                              const std::vector<std::string>& passes, const Bindings& bindings,
                              const PipelineOptions& options);

// The profile named or written in a file; null for an empty name; throws
// Error (kind Program) when it cannot be read.
std::shared_ptr<const MachineProfile> loadMachine(const std::string& nameOrPath);

// A remark and its notes rendered against the source ("warning:" for a
// pass that stopped at a limit).
std::string renderRemark(const ProgramSource& source, const Remark& remark);

// Where the passes' remarks go: rendered, to onRemark and into `remarks`;
// their warnings to onWarning. Null when nothing listens. The callbacks
// and `source` must outlive the sink.
RemarkSink remarkSink(const ProgramSource& source, const std::function<void(const std::string&)>& onRemark,
                      const std::function<void(const std::string&)>& onWarning,
                      std::vector<std::string>* remarks = nullptr);

}  // namespace hostir::api
