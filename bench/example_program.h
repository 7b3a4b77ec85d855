// The benchmarks' programs are the examples users run (examples/*.hir),
// read at start-up and sized with params, so a benchmark always times the
// program the README shows.
#pragma once

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "hostir/defaults.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/race_oracle.h"

namespace hostir::bench {

// examples/NAME.hir, parsed.
inline Program exampleProgram(const std::string& name) {
  std::string path = std::string(HOSTIR_SOURCE_DIR) + "/examples/" + name + ".hir";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parseProgram(text.str());
  if (!parsed) throw std::runtime_error(path + ": " + parsed.error().message);
  return std::move(*parsed);
}

// assign-streams as `hostir opt --set ...` runs it: each rewrite proved with
// the race check for these bindings. The benchmarks need the loop
// rewritten, so a loop left as it is is an error here.
inline void assignStreams(Program& program, const Bindings& bindings) {
  auto context = raceCheckedContext(program, bindings, kDefaultStreams);
  if (!context) throw std::runtime_error(context.error().message);
  const Program before = program;
  if (auto error = AssignStreamsPass().run(program, *context)) throw std::runtime_error(error->message);
  if (program == before) throw std::runtime_error("assign-streams left the benchmark's loop as it is");
}

// The params of a verified program under `bindings`.
inline std::map<std::string, int64_t> verifiedParams(const Program& program, const Bindings& bindings) {
  if (auto error = verifyProgram(program, bindings)) throw std::runtime_error(error->message);
  return *bindParams(program, bindings);
}

}  // namespace hostir::bench
