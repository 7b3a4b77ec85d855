#include "analysis/race_check.h"

#include <fmt/format.h>

#include <set>

#include "analysis/race_check_backend.h"
#include "ir/cancellation.h"
#include "ir/rank_dependence.h"
#include "runtime/evaluator.h"

namespace hostir {

std::vector<RaceReport> checkRaces(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                                   int64_t streams, const std::atomic<bool>* cancel) {
  std::vector<RaceReport> reports;
  std::set<std::string> seen;  // a race that every rank has is reported once
  int64_t ranks = namesRank(program) ? world : 1;
  for (int64_t rank = 0; rank < ranks; ++rank) {
    throwIfCancelled(cancel);  // also where a rank issues no operation to poll at
    Evaluator evaluator(program, params, rank, world);
    RaceCheckBackend backend(streams, nullptr, RaceCheckOptions{.cancel = cancel});
    std::map<std::string, TensorView> inputs;
    for (const TensorSpec& spec : evaluator.inputs())
      inputs[spec.name] = backend.input(spec.dtype, spec.localShape, spec.name);
    evaluator.run(backend, inputs);
    for (const Race& race : backend.analysis().races()) {
      std::string key = fmt::format("{}:{}|{}:{}|{}", race.first.loc.line, race.first.loc.col, race.second.loc.line,
                                    race.second.loc.col, race.buffer);
      if (seen.insert(key).second) reports.push_back(RaceReport{race, rank});
    }
  }
  return reports;
}

std::string streamName(int slot) { return slot < 0 ? "the main stream" : fmt::format("stream({})", slot); }

namespace {

std::string verb(const AccessSite& site) { return site.write ? "writes" : "reads"; }

}  // namespace

std::string formatRace(const RaceReport& report, std::string_view file, std::string_view source) {
  const Race& r = report.race;
  std::string opFirst(signatureOf(r.first.op).name), opSecond(signatureOf(r.second.op).name);
  std::string region = fmt::format("'{}'{}", r.buffer, r.region.toString());
  Diagnostic main{
      r.second.loc,
      fmt::format("race on {}: {} on {} {} it while {} at {}:{}:{} on {} {} it, unordered (rank {})", region, opSecond,
                  streamName(r.second.stream), verb(r.second), opFirst, file, r.first.loc.line, r.first.loc.col,
                  streamName(r.first.stream), verb(r.first), report.rank)};
  std::string out = renderDiagnostic(main, file, source);
  out += renderMessage(Severity::Note, r.first.loc, "the other access", file, source);
  out += fmt::format(
      "{}: note: missing edge: nothing makes {} wait for {} after {}:{} (synchronize, record_event/"
      "wait_event or wait) before {}:{}\n",
      file, streamName(r.second.stream), streamName(r.first.stream), r.first.loc.line, r.first.loc.col,
      r.second.loc.line, r.second.loc.col);
  return out;
}

}  // namespace hostir
