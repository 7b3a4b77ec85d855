#include "harness.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <fstream>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "ir/parser.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/race_oracle.h"
#include "runtime/evaluator.h"

namespace hostir::reftest {

std::string sourceDir() { return HOSTIR_SOURCE_DIR; }

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string examplePath(const std::string& name) { return sourceDir() + "/examples/" + name + ".hir"; }

Program parseOrThrow(const std::string& text, const std::string& file) {
  auto parsed = parseProgram(text);
  if (!parsed) throw std::runtime_error(renderDiagnostic(parsed.error(), file, text));
  if (auto error = verifyStructure(*parsed)) throw std::runtime_error(renderDiagnostic(*error, file, text));
  return std::move(*parsed);
}

Program loadExample(const std::string& name) {
  std::string path = examplePath(name);
  return parseOrThrow(readText(path), path);
}

std::string withDType(std::string text, DType dtype) {
  std::string name(dtypeName(dtype));
  for (size_t at = text.find("$T"); at != std::string::npos; at = text.find("$T", at + name.size()))
    text.replace(at, 2, name);
  return text;
}

Program assignStreams(Program program, int64_t world, const std::map<std::string, int64_t>& set) {
  // As `hostir opt` runs it: each rewrite proved by the race check, with the
  // bound params and 4 worker streams.
  auto context = raceCheckedContext(program, Bindings{set, world}, 4);
  if (!context) throw std::runtime_error(context.error().message);
  AssignStreamsPass pass;
  if (auto error = pass.run(program, *context)) throw std::runtime_error("assign-streams failed: " + error->message);
  if (auto error = verifyStructure(program))
    throw std::runtime_error("assign-streams produced an invalid program: " + error->message);
  return program;
}

Params bindAll(const Program& program, const Params& overrides) {
  auto params = bindParams(program, Bindings{overrides, 1});
  if (!params) throw std::runtime_error(params.error().message);
  return *params;
}

Status verifyFor(const Program& program, const Params& overrides, int64_t world) {
  return verifyProgram(program, Bindings{overrides, world});
}

std::vector<TensorSpec> inputSpecs(const Program& program, const Params& params, int64_t world) {
  return Evaluator(program, params, 0, world).inputs();
}

std::vector<TensorSpec> outputSpecs(const Program& program, const Params& params, int64_t world) {
  return Evaluator(program, params, 0, world).outputs();
}

std::map<std::string, HostTensor> globalInputs(const Program& program, const Params& params, int64_t world,
                                               uint64_t seed, const std::map<std::string, HostTensor>& given) {
  std::map<std::string, HostTensor> inputs;
  for (const TensorSpec& spec : inputSpecs(program, params, world)) {
    auto it = given.find(spec.name);
    inputs[spec.name] = it != given.end() ? it->second : seededGlobal(seed, spec);
  }
  return inputs;
}

std::map<std::string, RefTensor> toRef(const std::map<std::string, HostTensor>& tensors) {
  std::map<std::string, RefTensor> out;
  for (const auto& [name, t] : tensors) out[name] = toRef(t);
  return out;
}

RunRequest makeRequest(const Program& program, const Params& params, uint64_t seed, int64_t streams) {
  RunRequest request;
  request.program = program;
  request.params = params;
  request.seed = seed;
  request.backend.streams = streams;
  return request;
}

std::optional<Result<RunResult>> runWithin(const RunRequest& request, int64_t world, std::chrono::milliseconds limit) {
  // The future is heap-allocated and leaked on a timeout: destroying the
  // future of a std::async task that never returns would block forever.
  auto* future = new std::future<Result<RunResult>>(
      std::async(std::launch::async, [request, world] { return runInProcess(request, world); }));
  if (future->wait_for(limit) != std::future_status::ready) return std::nullopt;
  std::optional<Result<RunResult>> result(future->get());
  delete future;
  return result;
}

std::string describe(const std::string& program, const Params& params, int64_t world, bool assigned, int64_t streams) {
  std::vector<std::string> items;
  for (const auto& [k, v] : params) items.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{}({}) world={} {} streams={}", program, fmt::join(items, ", "), world,
                     assigned ? "assign-streams" : "original", streams);
}

void limitAddressSpaceToUsedPlus64MiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  uint64_t kib = 0;
  while (std::getline(status, line))
    if (line.rfind("VmSize:", 0) == 0) kib = std::stoull(line.substr(7));
  rlimit limit{(kib + 64 * 1024) * 1024, RLIM_INFINITY};
  ::setrlimit(RLIMIT_AS, &limit);
}

}  // namespace hostir::reftest
