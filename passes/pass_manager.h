// Runs a pipeline of passes. After each pass the program is verified, and,
// when the context has a race check, race-checked: a pass that makes races
// the program did not have is an error naming the pass and both statements.
// Dumps the IR after the passes asked for (`--print-ir-after-all`,
// `--print-ir-after`).
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace hostir {

struct PassInfo {
  std::string_view name;
  std::string_view summary;
  std::function<std::unique_ptr<Pass>()> create;
  // The pass with options as a pipeline writes them, MLIR style
  // (`pipeline{depth=2}`: "depth=2"); null for a pass that takes none.
  std::function<Result<std::unique_ptr<Pass>>(std::string_view options)> createWithOptions = nullptr;
};

// Every pass the tools know, in a stable order.
const std::vector<PassInfo>& registeredPasses();

// A pipeline as written on a command line ("a,b,c") as its list of pass
// names: split at every comma, blanks around a name dropped; "" is no pass.
// A pipeline is this list from there to the pass manager.
std::vector<std::string> splitPipeline(std::string_view pipeline);

struct PassManagerOptions {
  bool printIrAfterAll = false;
  std::set<std::string> printIrAfter;  // pass names
  std::ostream* irDump = nullptr;      // where dumps go (the CLI uses stderr)
  // Checked after every pass; a failure names the pass that broke the
  // program. Unset: verifyProgram with the context's bindings.
  std::function<Status(const Program&)> verifyAfterEach;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  void addPass(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  // Adds the named passes in order, each a name or `name{options}`; an
  // empty or unknown name, or options the pass does not take, is an error.
  Status addPasses(const std::vector<std::string>& names);
  // The same for a pipeline as written ("assign-streams,canonicalize").
  Status addPipeline(std::string_view pipeline) { return addPasses(splitPipeline(pipeline)); }
  // Runs every pass with `context`. With a race check in the context, the
  // input must verify with the context's bindings (it is checked first);
  // the races it already has are not the passes' doing. A program the
  // passes changed records the team it was proved race-free for
  // (Program::provedFor: the context's world and streams), or none when the
  // result is not race-free or there is no race check to prove it. Throws
  // Cancelled when the context's flag is set (checked between passes too).
  Status run(Program& program, const PassContext& context = {}) const;
  size_t size() const { return passes_.size(); }
  // The first pass of the pipeline that consults the cost model, or null.
  const Pass* firstNeedingCostModel() const;

 private:
  PassManagerOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
};

}  // namespace hostir
