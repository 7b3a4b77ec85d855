// Races as passes see them. passes/ cannot run a program, so the tools and
// the tests hand passes a race check (analysis/race_check's checkRaces) through the
// PassContext; a RaceFinding is one race it reports. Comparing the races of
// a program before and after a rewrite tells which ones the rewrite made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/race_analysis.h"
#include "ir/diagnostic.h"

namespace hostir {

struct RaceFinding {
  Race race;
  int64_t rank = 0;  // the first rank found to have it
};

// The same text for the same two statements and tensor, whichever access
// came first.
std::string raceKey(const Race& race);

// The races of `after` that `before` does not have, in `after`'s order.
std::vector<RaceFinding> newRaces(const std::vector<RaceFinding>& before, const std::vector<RaceFinding>& after);

// "race on 'y'[0:4, 0:8]: add on stream(1) writes it while copy at 9:5 on
// stream(0) reads it, unordered (rank 0)".
std::string describeRace(const RaceFinding& finding);

// One note at each access ("the racing access", "the other access").
std::vector<Note> raceNotes(const RaceFinding& finding);

}  // namespace hostir
