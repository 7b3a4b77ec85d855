// Everything `hostir check` proves about a verified program before it runs,
// and `hostir run` requires: for the bound params, a team of `world` ranks
// and `streams` worker streams (where an analysis reaches one of its limits,
// the property is reported as not proved, never as holding),
//  * no stream races (as checkRaces);
//  * no read of an element that nothing has written, and every output
//    fully written when the program ends;
//  * every rank issues the same communications in the same order, and each
//    sendrecv pairs with its peer's sendrecv of the same position.
// Every rank is issued by the evaluator against the race-checking backend
// (one rank when the program never names `rank` and has no sendrecv: then
// all ranks are alike).
// Library code: the results are values; formatProgramCheck renders them.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/communication_sequence.h"
#include "analysis/initialization_analysis.h"
#include "analysis/race_check.h"
#include "ir/ir.h"

namespace hostir {

// An output with elements that nothing wrote by the end of the program.
struct UnwrittenOutputReport {
  std::string output;
  SourceLoc declaredAt;
  UnwrittenRegion unwritten;
  int64_t rank = 0;
};

// An output the check could not prove fully written: it reached a limit.
struct UnprovenOutputReport {
  std::string output;
  SourceLoc declaredAt;
  std::string limit;  // the limit reached, as a phrase
  int64_t rank = 0;
};

struct ProgramCheck {
  std::vector<RaceReport> races;
  std::vector<UninitializedRead> uninitializedReads;  // each statement and buffer once
  std::vector<UnwrittenOutputReport> unwrittenOutputs;
  // Where an analysis reached a limit: not proved, so not accepted.
  std::vector<UnprovenRead> unprovenReads;
  std::vector<UnprovenOutputReport> unprovenOutputs;
  // The first difference between ranks: at most one of the two, the earlier.
  std::optional<CommunicationMismatch> communicationMismatch;
  std::optional<SendRecvPairMismatch> sendRecvMismatch;
  int64_t ranksChecked = 0;  // 1 when the program never names `rank` and has no sendrecv

  bool ok() const {
    return races.empty() && uninitializedReads.empty() && unwrittenOutputs.empty() && unprovenReads.empty() &&
           unprovenOutputs.empty() && !communicationMismatch && !sendRecvMismatch;
  }
};

// `program` must have passed verifyProgram with these params and world.
// Throws Cancelled (ir/cancellation.h) once `cancel` is set, at the next
// operation it issues; null: it cannot be cancelled.
ProgramCheck checkProgram(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                          int64_t streams, const std::atomic<bool>* cancel = nullptr);

// Every finding as FILE:LINE:COL messages with notes (races as formatRace):
// the communication mismatch first, then races, uninitialized reads and
// unwritten outputs. Empty when the check is ok.
std::string formatProgramCheck(const ProgramCheck& check, std::string_view file, std::string_view source);

// A program whose passes proved it for another team (its proved_for
// clause) than `world` ranks and `streams` worker streams: `run` must prove
// it again, so `--unchecked` refuses it. The refusal, FILE-prefixed, or
// nullopt when the program may run unchecked.
std::optional<std::string> uncheckedRefusal(const Program& program, int64_t world, int64_t streams,
                                            std::string_view file);
// The note a failed check adds for such a program ("" for any other).
std::string provedForNote(const Program& program, int64_t world, int64_t streams, std::string_view file);

// "2 races, 1 uninitialized read and a communication mismatch between ranks"
// (empty when ok), for a summary line.
std::string summarizeFindings(const ProgramCheck& check);

}  // namespace hostir
