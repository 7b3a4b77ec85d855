#include "executor/communication_match_backend.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <vector>

#include "ir/mesh.h"
#include "runtime/collective_plan.h"

namespace hostir {
namespace {

// A rank's communication at one position as f64 values (exact: every field
// is far below 2^53): its signature, its place among the run's
// communications (or the marker that ends a run) and its statement.
enum Field { Kind, Dtype, SendCount, RecvCount, Op, Axis, Root, To, From, Over, Sequence, Line, Col, kFields };
constexpr double kEndOfRun = -1;  // Kind of the marker that ends a run

using Packed = std::array<double, kFields>;

struct Entry {
  std::optional<CollectiveSignature> signature;  // none: the rank ends its run here
  uint32_t over = 0;                             // its mesh axes (ir/mesh.h), 0 for the team
  uint64_t sequence = 0;
  SourceLoc loc;
};

Packed pack(const CollectiveCall* call, uint64_t sequence) {
  Packed p{};
  p[Sequence] = static_cast<double>(sequence);
  if (!call) {
    p[Kind] = kEndOfRun;
    return p;
  }
  const CollectiveSignature s = collectiveSignature(*call);
  p[Kind] = static_cast<double>(s.kind);
  p[Dtype] = static_cast<double>(s.dtype);
  p[SendCount] = static_cast<double>(s.sendCount);
  p[RecvCount] = static_cast<double>(s.recvCount);
  p[Op] = static_cast<double>(s.op);
  p[Axis] = static_cast<double>(s.axis);
  p[Root] = s.root;
  p[To] = s.to;
  p[From] = s.from;
  p[Over] = call->over;
  p[Line] = call->loc.line;
  p[Col] = call->loc.col;
  return p;
}

Entry unpack(const double* p) {
  Entry e;
  e.sequence = static_cast<uint64_t>(p[Sequence]);
  if (p[Kind] == kEndOfRun) return e;
  auto integer = [&](Field f) { return static_cast<int64_t>(p[f]); };
  CollectiveSignature s;
  s.kind = static_cast<CollectiveKind>(integer(Kind));
  s.dtype = static_cast<DType>(integer(Dtype));
  s.sendCount = static_cast<size_t>(integer(SendCount));
  s.recvCount = static_cast<size_t>(integer(RecvCount));
  s.op = static_cast<ReduceOp>(integer(Op));
  s.axis = integer(Axis);
  s.root = static_cast<int>(integer(Root));
  s.to = static_cast<int>(integer(To));
  s.from = static_cast<int>(integer(From));
  e.signature = s;
  e.over = static_cast<uint32_t>(integer(Over));
  e.loc = SourceLoc{static_cast<uint32_t>(integer(Line)), static_cast<uint32_t>(integer(Col))};
  return e;
}

bool sameCommunication(const Entry& a, const Entry& b) {
  if (a.sequence != b.sequence || a.signature.has_value() != b.signature.has_value() || a.over != b.over) return false;
  return !a.signature || agreeAcrossRanks(*a.signature, *b.signature);
}

std::string at(const Entry& e) { return e.loc.line > 0 ? fmt::format(" at {}:{}", e.loc.line, e.loc.col) : ""; }

// Where the sets of axes differ, each side's: "over tp", or "over the team".
std::string describe(const Program& program, const Entry& e, const Entry& other) {
  if (!e.signature) return fmt::format("ends the run after {} communication(s)", e.sequence);
  const CollectiveSignature* compared = other.signature ? &*other.signature : nullptr;
  std::string over;
  if (e.over != other.over && other.signature)
    over = e.over == 0 ? " over the team" : " over " + meshAxesText(program, e.over);
  return "issues " + describe(*e.signature, compared) + over + at(e);
}

}  // namespace

CommunicationMatchBackend::CommunicationMatchBackend(Backend& forward, Communicator& signatures, const Program& program)
    : ForwardingBackend(forward), signatures_(signatures), program_(program) {}

void CommunicationMatchBackend::beginRun() {
  issued_.clear();
  forward_.beginRun();
}

void CommunicationMatchBackend::collective(Stream* stream, const CollectiveCall& call) {
  // A communication over mesh axes matches within its group: agreed there.
  agree(&call, groups_.of(signatures_, call.over), issued_[call.over], call.over);
  forward_.collective(stream, call);
}

void CommunicationMatchBackend::synchronizeHost() {
  // A rank that issued fewer communications meets the others' next one
  // here: in each of its groups (every rank has one per set of axes), then
  // in the team. Groups first: a peer waiting in a group's exchange must
  // meet this rank there, not wait on it in the team's.
  for (uint32_t over : overs_) agree(nullptr, groups_.of(signatures_, over), issued_[over], over);
  agree(nullptr, signatures_, issued_[0], 0);
  forward_.synchronizeHost();
}

void CommunicationMatchBackend::agree(const CollectiveCall* call, Communicator& comm, uint64_t& issued, uint32_t over) {
  const Packed mine = pack(call, issued);
  const size_t world = static_cast<size_t>(comm.size());
  std::vector<double> all(kFields * world);
  comm.allgather(mine.data(), all.data(), kFields, DType::F64);
  std::vector<Entry> entries;
  for (size_t r = 0; r < world; ++r) entries.push_back(unpack(all.data() + r * kFields));
  const SourceLoc here = call ? call->loc : SourceLoc{};
  // In a group, ranks are its places (meshGroup), which `to` and `from` count too.
  const std::string among =
      over == 0 ? "ranks" : fmt::format("the ranks of its group over {} (by place)", meshAxesText(program_, over));
  for (size_t r = 1; r < world; ++r) {
    if (sameCommunication(entries[0], entries[r])) continue;
    throw DiagnosticError{Diagnostic{
        here,
        fmt::format("communication #{} does not match across {}: rank 0 {}, but rank {} {}; every rank must issue "
                    "the same communications in the same order",
                    issued + 1, among, describe(program_, entries[0], entries[r]), r,
                    describe(program_, entries[r], entries[0]))}};
  }
  // Every rank issues a sendrecv here: each must pair with its peer's.
  if (entries[0].signature && collectiveInfo(entries[0].signature->kind).shape == CollectiveShape::PerPeer) {
    std::vector<CollectiveSignature> sendRecvs;
    for (const Entry& e : entries) sendRecvs.push_back(*e.signature);
    if (std::optional<SendRecvPairError> e = findUnpairedSendRecv(sendRecvs))
      throw DiagnosticError{Diagnostic{
          here, fmt::format("communication #{} does not pair across ranks: {}{}, but {}{}; a sendrecv to rank q must "
                            "meet q's sendrecv from this rank with the same dtype and element count",
                            issued + 1, e->sends, at(entries[static_cast<size_t>(e->sender)]), e->receives,
                            at(entries[static_cast<size_t>(e->receiver)]))}};
  }
  ++issued;
}

}  // namespace hostir
