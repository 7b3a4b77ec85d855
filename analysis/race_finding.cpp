#include "analysis/race_finding.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace hostir {
namespace {

std::string position(SourceLoc loc) {
  return loc.valid() ? fmt::format("{}:{}", loc.line, loc.col) : std::string("a statement a pass inserted");
}

std::string streamName(int slot) { return slot < 0 ? "the main stream" : fmt::format("stream({})", slot); }

std::string opName(const AccessSite& site) { return std::string(signatureOf(site.op).name); }

std::string verb(const AccessSite& site) { return site.write ? "writes" : "reads"; }

}  // namespace

std::string raceKey(const Race& race) {
  std::string first = position(race.first.loc), second = position(race.second.loc);
  if (second < first) std::swap(first, second);
  return fmt::format("{}|{}|{}", first, second, race.buffer);
}

std::vector<RaceFinding> newRaces(const std::vector<RaceFinding>& before, const std::vector<RaceFinding>& after) {
  std::unordered_set<std::string> known;
  for (const RaceFinding& f : before) known.insert(raceKey(f.race));
  std::vector<RaceFinding> added;
  for (const RaceFinding& f : after)
    if (!known.count(raceKey(f.race))) added.push_back(f);
  return added;
}

std::string describeRace(const RaceFinding& finding) {
  const Race& r = finding.race;
  return fmt::format("race on '{}'{}: {} on {} {} it while {} at {} on {} {} it, unordered (rank {})", r.buffer,
                     r.region.toString(), opName(r.second), streamName(r.second.stream), verb(r.second),
                     opName(r.first), position(r.first.loc), streamName(r.first.stream), verb(r.first), finding.rank);
}

std::vector<Note> raceNotes(const RaceFinding& finding) {
  const Race& r = finding.race;
  return {Note{r.second.loc, fmt::format("the racing access: {} on {} {} '{}'", opName(r.second),
                                         streamName(r.second.stream), verb(r.second), r.buffer)},
          Note{r.first.loc, fmt::format("the other access: {} on {} {} '{}'", opName(r.first),
                                        streamName(r.first.stream), verb(r.first), r.buffer)}};
}

}  // namespace hostir
