// The communications a rank issues, in issue order, and the comparison of
// another rank's against them: every rank must issue the same communications
// in the same order (the same signature: kind, dtype, element counts, op,
// axis and root, `root` naming the same rank everywhere; agreeAcrossRanks). A sendrecv agrees in kind
// only: its sizes and peers differ between ranks, and it must instead pair
// with its peer's sendrecv of the same position (SendRecvLog and
// findSendRecvPairMismatch). One rank's sequence is kept
// compactly (each distinct statement-and-signature once, then four bytes per
// communication); the others are compared as they are issued, so a long
// program costs little memory.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "comm/collective_signature.h"
#include "runtime/backend.h"

namespace hostir {

// A communication's signature (comm/collective_signature.h: what must agree
// across ranks, worded as every mismatch is) and the statement that issued it.
struct IssuedCommunication {
  CollectiveSignature signature;
  SourceLoc loc;
  uint32_t over = 0;  // the mesh axes it runs over (ir/mesh.h), 0 for the whole team
  friend bool operator==(const IssuedCommunication&, const IssuedCommunication&) = default;
};

// The fields that must agree, as the evaluator issued them; a sendrecv's
// peers as team ranks (`mesh`: the program's mesh extents, for one over
// its axes, whose peers are places in this rank's group).
IssuedCommunication issuedCommunication(const CollectiveCall& call, int64_t rank = 0,
                                        const std::vector<int64_t>& mesh = {});

class CommunicationSequence {
 public:
  void append(const IssuedCommunication& c);
  size_t size() const { return order_.size(); }
  const IssuedCommunication& operator[](size_t index) const { return distinct_[order_[index]]; }

 private:
  struct Hash {
    size_t operator()(const IssuedCommunication& c) const;
  };
  std::vector<IssuedCommunication> distinct_;
  std::unordered_map<IssuedCommunication, uint32_t, Hash> ids_;
  std::vector<uint32_t> order_;
};

// The first place two ranks' communications differ. `index` is 0-based; a
// side without a communication there issued only `index` of them, the last
// at `lastLoc` (invalid when it issued none).
struct CommunicationMismatch {
  uint64_t index = 0;
  struct Side {
    int64_t rank = 0;
    std::optional<IssuedCommunication> communication;
    SourceLoc lastLoc;
  };
  Side first, second;  // first: the reference rank
};

// Compares one rank's communications, as it issues them, with a reference
// rank's; remembers the first difference.
class CommunicationComparer {
 public:
  CommunicationComparer(const CommunicationSequence& reference, int64_t referenceRank, int64_t rank)
      : reference_(reference), referenceRank_(referenceRank), rank_(rank) {}

  void issue(const IssuedCommunication& c);
  // After the rank's whole program: the first difference, counting a
  // reference communication the rank never issued.
  std::optional<CommunicationMismatch> finish() const;

 private:
  const CommunicationSequence& reference_;
  int64_t referenceRank_, rank_;
  uint64_t issued_ = 0;
  SourceLoc lastLoc_;
  std::optional<CommunicationMismatch> mismatch_;
};

// One rank's sendrecvs in issue order, with what pairing needs: each
// distinct statement-and-signature once, then twelve bytes per sendrecv
// (its id and its position among all the rank's communications).
class SendRecvLog {
 public:
  void append(uint64_t position, const IssuedCommunication& c);
  size_t size() const { return positions_.size(); }
  uint64_t position(size_t index) const { return positions_[index]; }
  const IssuedCommunication& operator[](size_t index) const { return sequence_[index]; }

 private:
  CommunicationSequence sequence_;
  std::vector<uint64_t> positions_;
};

// A sendrecv whose partner does not match: rank `sender`'s communication
// #index+1 sends to `receiver`, whose communication of that position
// (`received`, absent when it issues none there) is not a sendrecv from
// `sender` of the same dtype and element count.
struct SendRecvPairMismatch {
  uint64_t index = 0;
  int64_t sender = 0, receiver = 0;
  IssuedCommunication sent;
  std::optional<IssuedCommunication> received;
};

// The first failing pair, by position and then by sending rank, among the
// positions below `limit` (where every rank issues the same kinds, so the
// logs' positions line up). `logs` is indexed by rank.
std::optional<SendRecvPairMismatch> findSendRecvPairMismatch(const std::vector<SendRecvLog>& logs, uint64_t limit);

}  // namespace hostir
