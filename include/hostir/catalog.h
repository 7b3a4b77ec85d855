// What this build of hostir offers, for callers that present or check
// choices (the command line's --help, --version and messages, a UI): the
// passes, the shipped machine profiles and the backends, each answered
// without loading any backend's libraries.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hostir::api {

struct PassDescription {
  std::string name;     // as a pipeline names it
  std::string summary;  // one line
};

// Every registered pass, in the order `--help` lists them.
std::vector<PassDescription> passes();
// Their names.
std::vector<std::string> passNames();

// "a,b" as the list of pass names a pipeline is from then on; empty names
// are kept, for the pipeline's check to refuse them by position.
std::vector<std::string> splitPipeline(std::string_view pipeline);

// What is wrong with a pipeline, for the caller to phrase with its option's
// name: an empty or unknown pass name, or a pass that consults the cost
// model when there is no machine (`hasMachine` false), its advice ending
// with `howToGiveOne` (" with --machine"); nullopt when nothing is.
std::optional<std::string> pipelineProblem(const std::vector<std::string>& passes, bool hasMachine,
                                           std::string_view howToGiveOne = "");

// The machine profiles shipped with hostir, by the name `machine` takes.
std::vector<std::string> machineProfiles();

struct BackendDescription {
  std::string name;          // "cpu", "cuda"
  bool built = false;        // this build has it
  std::string builtWithout;  // when not built: what the build lacked ("the CUDA toolkit")
  // Why it cannot run here, as far as can be told without loading its
  // libraries; nullopt: it may.
  std::optional<std::string> unusable;
};

// Every backend, in the order `backend = "auto"` tries them.
std::vector<BackendDescription> backends();
// "auto" and every backend's name: what `backend` accepts.
std::vector<std::string> backendNames();

// The candidate fewest single-character edits away from `given`, when close
// enough to be a typo ("did you mean ...?"); nullopt otherwise. The parser's
// messages use the same rule.
std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace hostir::api
