#include "passes/pass_manager.h"

#include <fmt/format.h>

#include <ostream>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/canonicalize.h"
#include "passes/overlap.h"
#include "passes/pipeline.h"
#include "passes/strip_communication.h"
#include "passes/strip_compute.h"

namespace hostir {

const std::vector<PassInfo>& registeredPasses() {
  static const std::vector<PassInfo> kPasses = {
      {AssignStreamsPass::kName, AssignStreamsPass::kSummary, [] { return std::make_unique<AssignStreamsPass>(); }},
      {CanonicalizePass::kName, CanonicalizePass::kSummary, [] { return std::make_unique<CanonicalizePass>(); }},
      {OverlapPass::kName, OverlapPass::kSummary, [] { return std::make_unique<OverlapPass>(); }},
      {PipelinePass::kName, PipelinePass::kSummary, [] { return std::make_unique<PipelinePass>(); },
       [](std::string_view options) -> Result<std::unique_ptr<Pass>> {
         Result<int64_t> depth = PipelinePass::parseOptions(options);
         if (!depth) return depth.error();
         return std::unique_ptr<Pass>(std::make_unique<PipelinePass>(*depth));
       }},
      {StripCommunicationPass::kName, StripCommunicationPass::kSummary,
       [] { return std::make_unique<StripCommunicationPass>(); }},
      {StripComputePass::kName, StripComputePass::kSummary, [] { return std::make_unique<StripComputePass>(); }},
  };
  return kPasses;
}

std::vector<std::string> splitPipeline(std::string_view pipeline) {
  std::vector<std::string> names;
  if (pipeline.empty()) return names;
  for (size_t begin = 0;;) {
    size_t end = pipeline.find(',', begin);
    std::string_view name = pipeline.substr(begin, end == std::string_view::npos ? end : end - begin);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    names.emplace_back(name);
    if (end == std::string_view::npos) return names;
    begin = end + 1;
  }
}

Status PassManager::addPasses(const std::vector<std::string>& names) {
  for (const std::string& written : names) {
    if (written.empty()) return Diagnostic{{}, fmt::format("empty pass name in pipeline '{}'", fmt::join(names, ","))};
    // `name{options}`, as mlir-opt writes a pass's options.
    std::string_view name = written;
    std::optional<std::string_view> options;
    if (size_t brace = name.find('{'); brace != std::string_view::npos) {
      if (name.back() != '}')
        return Diagnostic{{}, fmt::format("pass '{}': options are written name{{key=value}}", written)};
      options = name.substr(brace + 1, name.size() - brace - 2);
      name = name.substr(0, brace);
    }
    const PassInfo* found = nullptr;
    for (const PassInfo& info : registeredPasses())
      if (info.name == name) found = &info;
    if (!found) {
      std::vector<std::string_view> known;
      for (const PassInfo& info : registeredPasses()) known.push_back(info.name);
      return Diagnostic{{}, fmt::format("unknown pass '{}' (known passes: {})", name, fmt::join(known, ", "))};
    }
    if (!options) {
      addPass(found->create());
      continue;
    }
    if (!found->createWithOptions) return Diagnostic{{}, fmt::format("pass '{}' takes no options", name)};
    Result<std::unique_ptr<Pass>> pass = found->createWithOptions(*options);
    if (!pass) return pass.error();
    addPass(std::move(*pass));
  }
  return std::nullopt;
}

const Pass* PassManager::firstNeedingCostModel() const {
  for (const auto& pass : passes_)
    if (pass->needsCostModel()) return pass.get();
  return nullptr;
}

Status PassManager::run(Program& program, const PassContext& context) const {
  auto verify = [&](const Program& p) {
    return options_.verifyAfterEach ? options_.verifyAfterEach(p) : verifyProgram(p, context.bindings, context.cancel);
  };
  // The races the program has before each pass, when they can be checked.
  std::vector<RaceFinding> races;
  if (context.raceCheck) {
    if (auto error = verifyProgram(program, context.bindings, context.cancel)) return error;
    races = context.raceCheck(program);
  }
  const Program input = passes_.empty() ? Program{} : program;
  for (const auto& pass : passes_) {
    context.checkCancelled();
    if (auto error = pass->run(program, context)) {
      error->message = fmt::format("pass '{}' failed: {}", pass->name(), error->message);
      return error;
    }
    if (auto error = verify(program)) {
      error->message = fmt::format("pass '{}' produced an invalid program: {}", pass->name(), error->message);
      return error;
    }
    bool dump = options_.printIrAfterAll || options_.printIrAfter.count(std::string(pass->name()));
    if (dump && options_.irDump)
      *options_.irDump << fmt::format("# -----// IR Dump After {} //----- #\n", pass->name()) << printProgram(program)
                       << "\n";
    if (!context.raceCheck) continue;
    context.checkCancelled();
    std::vector<RaceFinding> after = context.raceCheck(program);
    std::vector<RaceFinding> added = newRaces(races, after);
    if (!added.empty()) {
      const Race& race = added.front().race;
      std::string more = added.size() > 1 ? fmt::format(" (and {} more)", added.size() - 1) : "";
      // The error points at the racing access; a note at the other one.
      std::vector<Note> notes = raceNotes(added.front());
      if (race.second.loc.valid()) notes.erase(notes.begin());
      return Diagnostic{
          race.second.loc.valid() ? race.second.loc : race.first.loc,
          fmt::format("pass '{}' made the program racy: {}{}", pass->name(), describeRace(added.front()), more),
          std::move(notes)};
    }
    races = std::move(after);
  }
  if (!passes_.empty() && !(program == input)) {
    // What the passes made holds for the team its races were checked on.
    if (context.raceCheck && races.empty())
      program.provedFor = ProvedFor{context.bindings.world, context.streams, {}};
    else
      program.provedFor.reset();
  }
  return std::nullopt;
}

}  // namespace hostir
