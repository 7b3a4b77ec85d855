#include "analysis/communication_sequence.h"

#include <fmt/format.h>

#include "ir/mesh.h"
#include "runtime/collective_plan.h"

namespace hostir {

IssuedCommunication issuedCommunication(const CollectiveCall& call, int64_t rank, const std::vector<int64_t>& mesh) {
  IssuedCommunication issued{collectiveSignature(call), call.loc, call.over};
  if (call.over != 0 && call.kind == OpKind::SendRecv) {
    const int64_t color = meshGroup(mesh, call.over, rank).color;
    issued.signature.to = static_cast<int>(meshGroupRank(mesh, call.over, color, call.to));
    issued.signature.from = static_cast<int>(meshGroupRank(mesh, call.over, color, call.from));
  }
  return issued;
}

size_t CommunicationSequence::Hash::operator()(const IssuedCommunication& c) const {
  const CollectiveSignature& s = c.signature;
  uint64_t h = static_cast<uint64_t>(s.kind);
  for (uint64_t v : {uint64_t(s.dtype), uint64_t(s.op), uint64_t(s.sendCount), uint64_t(s.recvCount), uint64_t(s.axis),
                     uint64_t(s.root), uint64_t(s.to), uint64_t(s.from), uint64_t(c.over), uint64_t(c.loc.line),
                     uint64_t(c.loc.col)})
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
  if (expected.over == c.over && agreeAcrossRanks(expected.signature, c.signature)) return;
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
      const CollectiveSignature& received = peer[j].signature;
      if (received.from != r || received.dtype != sent.signature.dtype ||
          received.recvCount != sent.signature.sendCount) {
        m.received = peer[j];
        return m;
      }
    }
    if (!any) return std::nullopt;
  }
}

}  // namespace hostir
