#include "analysis/communication_sequence.h"

#include <fmt/format.h>

namespace hostir {

IssuedCommunication issuedCommunication(const CollectiveCall& call) {
  CommunicationSignature s;
  s.kind = call.kind;
  s.inputDtype = call.input.dtype;
  s.outputDtype = call.output.dtype;
  s.inputElements = call.input.numel();
  s.outputElements = call.output.numel();
  // Only the fields the kind uses: the evaluator leaves the others at their defaults anyway.
  if (call.kind == OpKind::Allreduce || call.kind == OpKind::ReduceScatter) s.op = call.op;
  if (call.kind == OpKind::Allgather || call.kind == OpKind::ReduceScatter) s.axis = call.axis;
  if (call.kind == OpKind::Broadcast) s.root = call.root;
  if (call.kind == OpKind::SendRecv) {
    s.to = call.to;
    s.from = call.from;
  }
  return IssuedCommunication{s, call.loc};
}

bool agreeAcrossRanks(const CommunicationSignature& a, const CommunicationSignature& b) {
  if (a.kind == OpKind::SendRecv && b.kind == OpKind::SendRecv) return true;
  return a == b;
}

std::string describeCommunication(const CommunicationSignature& c, const CommunicationSignature* other) {
  std::string text =
      fmt::format("{} of {} {} elements", signatureOf(c.kind).name, c.inputElements, dtypeName(c.inputDtype));
  if (c.kind == OpKind::Broadcast) text += fmt::format(" from root {}", c.root);
  if (c.kind == OpKind::SendRecv) {
    text += fmt::format(" to rank {}, receiving {} from rank {}", c.to, c.outputElements, c.from);
    return text;  // its other fields are not compared across ranks
  }
  if (!other) return text;
  // The output follows from the input unless a separate `out` of another size was given.
  bool sameInput = c.inputElements == other->inputElements && c.inputDtype == other->inputDtype;
  if (sameInput && (c.outputElements != other->outputElements || c.outputDtype != other->outputDtype))
    text += fmt::format(" into {} {} elements", c.outputElements, dtypeName(c.outputDtype));
  if (c.op != other->op) text += fmt::format(" with op={}", reduceOpName(c.op));
  if (c.axis != other->axis) text += fmt::format(" along axis {}", c.axis);
  return text;
}

size_t CommunicationSequence::Hash::operator()(const IssuedCommunication& c) const {
  const CommunicationSignature& s = c.signature;
  uint64_t h = static_cast<uint64_t>(s.kind);
  for (uint64_t v : {uint64_t(s.inputDtype), uint64_t(s.outputDtype), uint64_t(s.op), uint64_t(s.inputElements),
                     uint64_t(s.outputElements), uint64_t(s.axis), uint64_t(s.root), uint64_t(s.to), uint64_t(s.from),
                     uint64_t(c.loc.line), uint64_t(c.loc.col)})
    h = (h ^ v) * 0x100000001b3ull;
  return static_cast<size_t>(h);
}

void CommunicationSequence::append(const IssuedCommunication& c) {
  auto [it, added] = ids_.emplace(c, static_cast<uint32_t>(distinct_.size()));
  if (added) distinct_.push_back(c);
  order_.push_back(it->second);
}

void CommunicationComparer::issue(const IssuedCommunication& c) {
  uint64_t index = issued_++;
  SourceLoc previous = lastLoc_;
  lastLoc_ = c.loc;
  if (mismatch_) return;
  if (index >= reference_.size()) {
    // One more than the reference rank issues.
    CommunicationMismatch m;
    m.index = index;
    m.first = {referenceRank_, std::nullopt, index > 0 ? reference_[index - 1].loc : SourceLoc{}};
    m.second = {rank_, c, previous};
    mismatch_ = m;
    return;
  }
  const IssuedCommunication& expected = reference_[index];
  if (agreeAcrossRanks(expected.signature, c.signature)) return;
  CommunicationMismatch m;
  m.index = index;
  m.first = {referenceRank_, expected, index > 0 ? reference_[index - 1].loc : SourceLoc{}};
  m.second = {rank_, c, previous};
  mismatch_ = m;
}

std::optional<CommunicationMismatch> CommunicationComparer::finish() const {
  if (mismatch_) return mismatch_;
  if (issued_ >= reference_.size()) return std::nullopt;
  // The rank stopped short: the reference's next communication has no partner.
  CommunicationMismatch m;
  m.index = issued_;
  m.first = {referenceRank_, reference_[issued_], issued_ > 0 ? reference_[issued_ - 1].loc : SourceLoc{}};
  m.second = {rank_, std::nullopt, lastLoc_};
  return m;
}

void SendRecvLog::append(uint64_t position, const IssuedCommunication& c) {
  sequence_.append(c);
  positions_.push_back(position);
}

std::optional<SendRecvPairMismatch> findSendRecvPairMismatch(const std::vector<SendRecvLog>& logs, uint64_t limit) {
  const int64_t world = static_cast<int64_t>(logs.size());
  for (size_t j = 0;; ++j) {
    bool any = false;
    for (int64_t r = 0; r < world; ++r) {
      const SendRecvLog& log = logs[static_cast<size_t>(r)];
      if (j >= log.size() || log.position(j) >= limit) continue;
      any = true;
      const IssuedCommunication& sent = log[j];
      const int64_t q = sent.signature.to;
      if (q < 0 || q >= world) continue;  // the evaluator refuses it before it is issued
      SendRecvPairMismatch m{log.position(j), r, q, sent, std::nullopt};
      const SendRecvLog& peer = logs[static_cast<size_t>(q)];
      if (j >= peer.size() || peer.position(j) != log.position(j)) return m;
      const CommunicationSignature& received = peer[j].signature;
      if (received.from != r || received.outputDtype != sent.signature.inputDtype ||
          received.outputElements != sent.signature.inputElements) {
        m.received = peer[j];
        return m;
      }
    }
    if (!any) return std::nullopt;
  }
}

}  // namespace hostir
