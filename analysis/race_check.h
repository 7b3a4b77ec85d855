// `hostir check`'s race analysis: every rank's program (params bound, loops
// unrolled by the evaluator itself) issued against the race-checking
// backend, which proves it race-free or reports each race once.
#pragma once

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "analysis/race_analysis.h"
#include "ir/ir.h"

namespace hostir {

struct RaceReport {
  Race race;
  int64_t rank = 0;
};

// `program` must have passed verifyProgram with these params and world.
// Every rank is checked, or rank 0 alone when the program never names `rank`
// (then every rank issues the same work). Throws Cancelled (ir/cancellation.h)
// once `cancel` is set, at the next operation it issues.
std::vector<RaceReport> checkRaces(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                                   int64_t streams, const std::atomic<bool>* cancel = nullptr);

// One race as FILE:LINE:COL messages with both statements, their streams,
// the tensor and region, and the missing edge.
std::string formatRace(const RaceReport& report, std::string_view file, std::string_view source);

// "the main stream" for slot -1, else "stream(slot)".
std::string streamName(int slot);

}  // namespace hostir
