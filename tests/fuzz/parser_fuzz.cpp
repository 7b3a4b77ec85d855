// libFuzzer target for the .hir front end and what runs on its output.
//
// For every input that parses it checks the printer's contract
// (ir/printer.h): parse(print(p)) succeeds and equals p, and printing
// that again gives the same text; the structural verifier runs on it. Input
// that is not a program is also tried as a lone expression (parseExpr), with
// the same round trip and an evaluation, so the expression paths see long
// operator chains and deep nesting directly. Depth bugs (stack overflows in
// a recursive walk) are crashes; scripts/test.sh runs the fuzzer with a
// -max_len large enough for chains of tens of thousands of terms. For every program that verifies (with the
// default bindings, and for a team of two) it runs assign-streams and
// pipeline{depth=2} and requires each result to verify too, to round-trip
// through the printer and to stay race-free.
// A violated property calls __builtin_trap(), after printing what broke to
// stderr; crashes and sanitizer reports are findings by themselves.
//
// The bound verifier unrolls loops (up to kMaxUnrolledStatements, millions of
// statement instances), which takes minutes under the sanitizers; programs
// that would unroll past kFuzzUnrollLimit skip the verifier and the pass so
// that every input runs in well under a second. They still go through the
// round trip and the structural check.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/race_check.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "passes/pipeline.h"
#include "passes/race_oracle.h"

namespace {

constexpr int64_t kFuzzUnrollLimit = 20'000;
// The worker pool the rewrites are race-checked for (hostir's default).
constexpr int64_t kFuzzStreams = 4;

// Counts the statement instances the bound verifier would walk for one rank,
// stopping at `limit`. It follows the verifier's walk without tensors:
// params, `rank`, `world`, loop indices and integer bindings; a loop whose
// bounds do not evaluate counts once (the verifier rejects it there).
class UnrollCounter {
 public:
  UnrollCounter(const hostir::Program& program, int64_t rank, int64_t world, int64_t limit)
      : rank_(rank), world_(world), limit_(limit) {
    for (const hostir::Param& p : program.params) env_[p.name] = p.value;
  }

  // False once the count passes the limit.
  bool walk(const std::vector<hostir::Statement>& body) {
    for (const hostir::Statement& stmt : body) {
      if (++count_ > limit_) return false;
      if (stmt.isOp()) {
        const hostir::Operation& op = stmt.op();
        if (op.kind == hostir::OpKind::IntValue && op.result() && op.operands.size() == 1 && op.operands[0]) {
          if (auto v = eval(op.operands[0]->expr)) env_[op.result()->name] = *v;
        }
        continue;
      }
      if (stmt.isWith()) {
        if (!walk(stmt.with().body)) return false;
        continue;
      }
      if (stmt.isIf()) {
        // Both branches: at least what the verifier walks, whichever it takes.
        for (const auto& branch : stmt.nestedBodies())
          if (!walk(branch)) return false;
        continue;
      }
      const hostir::ForLoop& loop = stmt.loop();
      auto start = loop.start.empty() ? std::optional<int64_t>(0) : eval(loop.start);
      auto end = eval(loop.end);
      if (!start || !end) continue;
      for (int64_t i = *start; i < *end; ++i) {
        env_[loop.index.name] = i;
        if (!walk(loop.body)) return false;
      }
    }
    return true;
  }

 private:
  std::optional<int64_t> eval(const hostir::Expr& e) {
    if (e.empty()) return std::nullopt;
    auto v = hostir::evaluate(e, [&](const std::string& name) -> std::optional<int64_t> {
      if (name == "rank") return rank_;
      if (name == "world") return world_;
      auto it = env_.find(name);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    });
    if (!v) return std::nullopt;
    return *v;
  }

  std::map<std::string, int64_t> env_;
  int64_t rank_, world_, limit_, count_ = 0;
};

// Whether the bound verifier stays within kFuzzUnrollLimit statement
// instances over all ranks (the verifier walks every rank).
bool smallEnoughToVerify(const hostir::Program& program, int64_t world) {
  for (int64_t rank = 0; rank < world; ++rank)
    if (!UnrollCounter(program, rank, world, kFuzzUnrollLimit / world).walk(program.body)) return false;
  return true;
}

[[noreturn]] void violation(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "hostir_parser_fuzz: %s\n%s\n", what.c_str(), detail.c_str());
  __builtin_trap();
}

// print -> parse -> compare -> print again.
void checkRoundTrip(const hostir::Program& program, const std::string& stage) {
  const std::string printed = hostir::printProgram(program);
  auto reparsed = hostir::parseProgram(printed);
  if (!reparsed) {
    const hostir::Diagnostic& d = reparsed.error();
    violation(stage, "the printed program does not parse: " + std::to_string(d.loc.line) + ":" +
                         std::to_string(d.loc.col) + ": " + d.message + "\n--- printed ---\n" + printed);
  }
  if (!(*reparsed == program)) violation(stage, "parse(print(p)) != p\n--- printed ---\n" + printed);
  const std::string again = hostir::printProgram(*reparsed);
  if (again != printed)
    violation(stage, "printing is not stable\n--- first ---\n" + printed + "--- second ---\n" + again);
}

// `pass` on a verified program: its result verifies, round-trips through
// the printer, and is race-free when the input was.
void checkPass(hostir::Pass& pass, const hostir::Program& program, const hostir::Bindings& bindings) {
  if (!smallEnoughToVerify(program, bindings.world)) return;
  if (hostir::verifyProgram(program, bindings)) return;  // not a valid program: nothing more to check
  const std::string name(pass.name());
  hostir::Program rewritten = program;
  // As `hostir opt` runs it: every rewrite is proved by the race check.
  auto context = hostir::raceCheckedContext(program, bindings, kFuzzStreams);
  if (!context) return;
  if (auto error = pass.run(rewritten, *context))
    violation(name + " failed on a verified program",
              error->message + "\n--- input ---\n" + hostir::printProgram(program));
  if (auto error = hostir::verifyProgram(rewritten, bindings))
    violation(name + " produced a program that does not verify",
              std::to_string(error->loc.line) + ":" + std::to_string(error->loc.col) + ": " + error->message +
                  "\n--- input ---\n" + hostir::printProgram(program) + "--- output ---\n" +
                  hostir::printProgram(rewritten));
  checkRoundTrip(rewritten, "round trip of the " + name + " output");
  // The pass's promise: a race-free program stays race-free.
  auto params = *hostir::bindParams(program, bindings);
  if (hostir::checkRaces(program, params, bindings.world, kFuzzStreams).empty() &&
      !hostir::checkRaces(rewritten, params, bindings.world, kFuzzStreams).empty())
    violation(name + " made a race-free program racy",
              "--- input ---\n" + hostir::printProgram(program) + "--- output ---\n" + hostir::printProgram(rewritten));
}

void checkPasses(const hostir::Program& program, const hostir::Bindings& bindings) {
  hostir::AssignStreamsPass assignStreams;
  checkPass(assignStreams, program, bindings);
  hostir::PipelinePass pipeline(2);
  checkPass(pipeline, program, bindings);
}

// parseExpr -> toString -> parseExpr -> compare, then evaluate.
void checkExpression(std::string_view source) {
  auto parsed = hostir::parseExpr(source);
  if (!parsed) return;
  const std::string printed = parsed->toString();
  auto reparsed = hostir::parseExpr(printed);
  if (!reparsed)
    violation("the printed expression does not parse", reparsed.error().message + "\n--- printed ---\n" + printed);
  if (!(*reparsed == *parsed)) violation("parseExpr(toString(e)) != e", printed);
  if (reparsed->toString() != printed) violation("printing an expression is not stable", printed);
  (void)hostir::evaluate(
      *parsed, [](const std::string& name) -> std::optional<int64_t> { return static_cast<int64_t>(name.size()); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  auto parsed = hostir::parseProgram(source);
  if (!parsed) {
    checkExpression(source);
    return 0;
  }
  checkRoundTrip(*parsed, "round trip of the parsed input");
  // Names, scopes and kinds: no unrolling, so every program gets this much.
  (void)hostir::verifyStructure(*parsed);

  hostir::Bindings defaults;
  checkPasses(*parsed, defaults);
  hostir::Bindings team;
  team.world = 2;
  checkPasses(*parsed, team);
  return 0;
}
