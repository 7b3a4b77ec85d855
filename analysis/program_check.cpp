#include "analysis/program_check.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "analysis/race_check_backend.h"
#include "ir/cancellation.h"
#include "ir/mesh.h"
#include "ir/rank_dependence.h"
#include "runtime/evaluator.h"

namespace hostir {
namespace {

bool hasSendRecv(const Program& program) {
  bool found = false;
  walkStatements(program.body, [&](const Statement& s) { found |= s.isOp() && s.op().kind == OpKind::SendRecv; });
  return found;
}

// A communication's lane: the mesh axes it runs over and the group it runs
// in (the whole team: {0, 0}). Each group matches its own calls, so the
// ranks are compared lane by lane, each with its group's first rank.
using Lane = std::pair<uint32_t, int64_t>;
Lane laneOf(uint32_t over, int64_t rank, const std::vector<int64_t>& mesh) {
  return over == 0 ? Lane{0, 0} : Lane{over, meshGroup(mesh, over, rank).color};
}
int64_t laneLeader(const Lane& lane, const std::vector<int64_t>& mesh) {
  return lane.first == 0 ? 0 : meshGroupRank(mesh, lane.first, lane.second, 0);
}

// The cross-rank comparison, lane by lane: each lane's first rank's
// communications (rank 0's for the whole team), every other rank of the
// lane compared with them as it issues its own, and each lane's sendrecvs
// by rank, for pairing once every rank has run.
class LaneComparison {
 public:
  explicit LaneComparison(int64_t ranks) : ranks_(ranks) {}

  // Before rank `rank` runs; `mesh` (its evaluator's) outlives the rank's run.
  void beginRank(int64_t rank, const std::vector<int64_t>& mesh) {
    rank_ = rank;
    mesh_ = &mesh;
    comparers_.clear();
    positions_.clear();
  }
  void issue(const CollectiveCall& call) {
    IssuedCommunication issued = issuedCommunication(call, rank_, *mesh_);
    const Lane lane = laneOf(call.over, rank_, *mesh_);
    const uint64_t position = positions_[lane]++;
    if (call.kind == OpKind::SendRecv) {
      std::vector<SendRecvLog>& logs = sendRecvs_[lane];
      logs.resize(static_cast<size_t>(ranks_));
      logs[static_cast<size_t>(rank_)].append(position, issued);
    }
    if (laneLeader(lane, *mesh_) == rank_)
      references_[lane].append(issued);
    else
      comparerOf(lane).issue(issued);
  }
  // After the rank's run: its earliest difference over every lane of its
  // groups (counting those it issued nothing in) into `result`, if earlier.
  void endRank(ProgramCheck& result) {
    for (const auto& [lane, reference] : references_)
      if (laneLeader(lane, *mesh_) != rank_ && laneOf(lane.first, rank_, *mesh_) == lane) comparerOf(lane);
    for (const auto& [lane, comparer] : comparers_) {
      auto mismatch = comparer.finish();
      if (mismatch && (!result.communicationMismatch || mismatch->index < result.communicationMismatch->index)) {
        result.communicationMismatch = mismatch;
        mismatchLane_ = lane;
      }
    }
  }
  // After every rank: the first sendrecv that does not pair, which replaces the mismatch.
  void pair(ProgramCheck& result) const {
    for (const auto& [lane, logs] : sendRecvs_) {
      // Below the lane's first difference in kind, its ranks' sendrecvs sit at the same positions.
      const uint64_t limit = mismatchLane_ == lane ? result.communicationMismatch->index : UINT64_MAX;
      result.sendRecvMismatch = findSendRecvPairMismatch(logs, limit);
      if (result.sendRecvMismatch) {
        result.communicationMismatch.reset();
        return;
      }
    }
  }

 private:
  CommunicationComparer& comparerOf(const Lane& lane) {
    return comparers_.try_emplace(lane, references_[lane], laneLeader(lane, *mesh_), rank_).first->second;
  }

  int64_t ranks_;
  std::map<Lane, CommunicationSequence> references_;
  std::map<Lane, std::vector<SendRecvLog>> sendRecvs_;  // per lane, by rank
  std::optional<Lane> mismatchLane_;
  // The rank being run.
  int64_t rank_ = 0;
  const std::vector<int64_t>* mesh_ = nullptr;
  std::map<Lane, CommunicationComparer> comparers_;
  std::map<Lane, uint64_t> positions_;
};

}  // namespace

ProgramCheck checkProgram(const Program& program, const std::map<std::string, int64_t>& params, int64_t world,
                          int64_t streams, const std::atomic<bool>* cancel) {
  ProgramCheck result;
  // A sendrecv's partner is another rank's statement, so pairing needs every
  // rank even when all issue the same (a constant `to` pairs on no team but one).
  const bool pairs = hasSendRecv(program);
  result.ranksChecked = namesRank(program) || pairs ? world : 1;
  // A finding every rank has is reported once, for the first rank that has it.
  std::set<std::string> seenRaces, seenReads, seenOutputs, seenUnproven;
  LaneComparison lanes(result.ranksChecked);
  const bool alike = result.ranksChecked == 1;
  for (int64_t rank = 0; rank < result.ranksChecked; ++rank) {
    throwIfCancelled(cancel);  // also where a rank issues no operation to poll at
    Evaluator evaluator(program, params, rank, world);
    lanes.beginRank(rank, evaluator.meshExtents());
    RaceCheckBackend backend(
        streams, nullptr,
        RaceCheckOptions{
            .trackInitialization = true, .rank = alike ? RaceCheckOptions::kEveryRank : rank, .cancel = cancel});
    if (result.ranksChecked > 1 || pairs)
      backend.observeCommunications([&](const CollectiveCall& call) { lanes.issue(call); });
    std::map<std::string, TensorView> inputs;
    for (const TensorSpec& spec : evaluator.inputs())
      inputs[spec.name] = backend.input(spec.dtype, spec.localShape, spec.name);
    std::map<std::string, TensorView> outputs = evaluator.run(backend, inputs);

    for (const Race& race : backend.analysis().races()) {
      std::string key = fmt::format("{}:{}|{}:{}|{}", race.first.loc.line, race.first.loc.col, race.second.loc.line,
                                    race.second.loc.col, race.buffer);
      if (seenRaces.insert(key).second) result.races.push_back(RaceReport{race, rank});
    }
    for (const UninitializedRead& read : backend.initialization()->reads()) {
      std::string key =
          fmt::format("{}:{}|{}", read.reader.loc.line, read.reader.loc.col, read.unwritten.allocation.name);
      if (seenReads.insert(key).second) result.uninitializedReads.push_back(read);
    }
    for (const UnprovenRead& read : backend.initialization()->unprovenReads()) {
      std::string key = fmt::format("{}:{}|{}", read.reader.loc.line, read.reader.loc.col, read.allocation.name);
      if (seenUnproven.insert(key).second) result.unprovenReads.push_back(read);
    }
    for (const TensorSpec& spec : evaluator.outputs()) {
      Coverage coverage = backend.coverage(outputs[spec.name]);
      if (coverage.proved() || !seenOutputs.insert(spec.name).second) continue;
      const Decl* decl = program.findDecl(spec.name);
      const SourceLoc declaredAt = decl ? decl->loc : SourceLoc{};
      if (coverage.unwritten)
        result.unwrittenOutputs.push_back(UnwrittenOutputReport{spec.name, declaredAt, *coverage.unwritten, rank});
      else
        result.unprovenOutputs.push_back(UnprovenOutputReport{spec.name, declaredAt, coverage.unproven, rank});
    }
    // The earliest difference over all ranks and lanes (the lowest rank on a tie).
    if (!alike) lanes.endRank(result);
  }
  lanes.pair(result);
  return result;
}

namespace {

std::string plural(size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string communications(uint64_t n) {
  return n == 0 ? "none" : fmt::format("only {}", plural(n, "communication", "communications"));
}

Diagnostic mismatchDiagnostic(const CommunicationMismatch& m) {
  const auto& a = m.first;
  const auto& b = m.second;
  const uint64_t number = m.index + 1;
  const std::string prefix = "ranks issue different communications";
  if (a.communication && b.communication) {
    const CollectiveSignature& sa = a.communication->signature;
    const CollectiveSignature& sb = b.communication->signature;
    return Diagnostic{
        a.communication->loc,
        fmt::format("{}: communication #{} is {} on rank {} but {} on rank {}", prefix, number, describe(sa, &sb),
                    a.rank, describe(sb, &sa), b.rank),
        {Note{b.communication->loc, fmt::format("rank {} issues its communication #{} here", b.rank, number)}}};
  }
  // One side ran out: the other's communication has no partner.
  const auto& present = a.communication ? a : b;
  const auto& missing = a.communication ? b : a;
  Diagnostic d{present.communication->loc, fmt::format("{}: communication #{} is {} on rank {} but rank {} issues {}",
                                                       prefix, number, describe(present.communication->signature),
                                                       present.rank, missing.rank, communications(m.index))};
  if (m.index > 0)
    d.notes.push_back(
        Note{missing.lastLoc, fmt::format("rank {} issues its last communication (#{}) here", missing.rank, m.index)});
  else
    d.notes.push_back(
        Note{{}, fmt::format("rank {} reaches the end of the program without communicating", missing.rank)});
  return d;
}

std::string elements(const CollectiveSignature& s, bool sent) {
  return fmt::format("{} {} elements", sent ? s.sendCount : s.recvCount, dtypeName(s.dtype));
}

Diagnostic pairDiagnostic(const SendRecvPairMismatch& m) {
  const uint64_t number = m.index + 1;
  const CollectiveSignature& sent = m.sent.signature;
  std::string text =
      fmt::format("ranks' sendrecv pairs do not match: communication #{} sends {} from rank {} to rank {}, but ",
                  number, elements(sent, true), m.sender, m.receiver);
  if (!m.received) {
    // Kinds agree below the limit, so this only happens on a malformed log.
    return Diagnostic{m.sent.loc, text + fmt::format("rank {} has no communication #{}", m.receiver, number)};
  }
  const CollectiveSignature& received = m.received->signature;
  if (received.from != m.sender)
    text += fmt::format("rank {}'s communication #{} receives from rank {}", m.receiver, number, received.from);
  else
    text += fmt::format("rank {} receives {} from rank {}", m.receiver, elements(received, false), m.sender);
  return Diagnostic{
      m.sent.loc,
      text,
      {Note{m.received->loc, fmt::format("rank {} issues its communication #{} here", m.receiver, number)}}};
}

Note allocationNote(const Allocation& a) {
  if (a.op == OpKind::Allocate)
    return Note{a.loc, fmt::format("'{}' is allocated here, uninitialized (allocate without zero=true)", a.name)};
  return Note{a.loc, fmt::format("'{}' is allocated here as the result of {}", a.name, signatureOf(a.op).name)};
}

}  // namespace

std::string formatProgramCheck(const ProgramCheck& check, std::string_view file, std::string_view source) {
  std::string out;
  if (check.communicationMismatch)
    out += renderDiagnostic(mismatchDiagnostic(*check.communicationMismatch), file, source);
  if (check.sendRecvMismatch) out += renderDiagnostic(pairDiagnostic(*check.sendRecvMismatch), file, source);
  for (const RaceReport& race : check.races) out += formatRace(race, file, source);
  for (const UninitializedRead& read : check.uninitializedReads) {
    Diagnostic d{read.reader.loc,
                 fmt::format("{} on {} reads '{}'{} before anything writes it (rank {})",
                             signatureOf(read.reader.op).name, streamName(read.reader.stream),
                             read.unwritten.allocation.name, read.unwritten.region.toString(), read.rank),
                 {allocationNote(read.unwritten.allocation)}};
    out += renderDiagnostic(d, file, source);
  }
  for (const UnwrittenOutputReport& r : check.unwrittenOutputs) {
    Diagnostic d{r.declaredAt,
                 fmt::format("output '{}' is not fully written when the program ends: nothing writes '{}'{} (rank {})",
                             r.output, r.unwritten.allocation.name, r.unwritten.region.toString(), r.rank),
                 {allocationNote(r.unwritten.allocation)}};
    out += renderDiagnostic(d, file, source);
  }
  for (const UnprovenRead& read : check.unprovenReads) {
    Diagnostic d{read.reader.loc,
                 fmt::format("could not prove that {} on {} reads only written elements of '{}': {} (rank {})",
                             signatureOf(read.reader.op).name, streamName(read.reader.stream), read.allocation.name,
                             read.limit, read.rank),
                 {allocationNote(read.allocation)}};
    out += renderDiagnostic(d, file, source);
  }
  for (const UnprovenOutputReport& r : check.unprovenOutputs) {
    Diagnostic d{r.declaredAt, fmt::format("could not prove that output '{}' is fully written when the program ends: "
                                           "{} (rank {})",
                                           r.output, r.limit, r.rank)};
    out += renderDiagnostic(d, file, source);
  }
  return out;
}

std::optional<std::string> uncheckedRefusal(const Program& program, int64_t world, int64_t streams,
                                            std::string_view file) {
  auto other = provedForAnotherTeam(program, world, streams);
  if (!other) return std::nullopt;
  return fmt::format(
      "{}: error: the program was {} (its proved_for clause); --unchecked cannot skip the proof for another team: "
      "run it checked, or apply its passes for this team\n",
      file, *other);
}

std::string provedForNote(const Program& program, int64_t world, int64_t streams, std::string_view file) {
  auto other = provedForAnotherTeam(program, world, streams);
  if (!other) return {};
  return fmt::format("{}: note: the program was {} (its proved_for clause)\n", file, *other);
}

std::string summarizeFindings(const ProgramCheck& check) {
  std::vector<std::string> parts;
  if (!check.races.empty()) parts.push_back(plural(check.races.size(), "race", "races"));
  if (!check.uninitializedReads.empty())
    parts.push_back(plural(check.uninitializedReads.size(), "uninitialized read", "uninitialized reads"));
  if (!check.unwrittenOutputs.empty())
    parts.push_back(plural(check.unwrittenOutputs.size(), "unwritten output", "unwritten outputs"));
  if (!check.unprovenReads.empty())
    parts.push_back(plural(check.unprovenReads.size(), "unproven read", "unproven reads"));
  if (!check.unprovenOutputs.empty())
    parts.push_back(plural(check.unprovenOutputs.size(), "unproven output", "unproven outputs"));
  if (check.communicationMismatch || check.sendRecvMismatch) parts.push_back("a communication mismatch between ranks");
  if (parts.empty()) return {};
  std::string text = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) text += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return text;
}

}  // namespace hostir
