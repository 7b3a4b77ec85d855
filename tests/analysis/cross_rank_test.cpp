// The cross-rank rule's bookkeeping: every rank issues the same
// communications in the same order, and each sendrecv pairs with its peer's.
// The programs (each class of rank-dependent communication at 2, 3 and 4
// ranks, programs whose communications agree, sendrecv pairing) are .hir
// files in programs/cross_rank/ with their expected reports inside them;
// here are the sequence and the sendrecv log, which a program cannot reach.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "analysis/communication_sequence.h"

namespace hostir {
namespace {

// The reference rank's sequence stays small however long the program is:
// each distinct statement and signature is stored once.
TEST(CommunicationSequence, StoresEachDistinctCommunicationOnce) {
  CommunicationSequence sequence;
  IssuedCommunication a{{CollectiveKind::Allreduce, DType::F32, 64, 64}, {3, 5}};
  IssuedCommunication b = a;
  b.signature.sendCount = b.signature.recvCount = 32;
  for (int i = 0; i < 1000; ++i) sequence.append(i % 3 == 2 ? b : a);
  ASSERT_EQ(sequence.size(), 1000u);
  EXPECT_EQ(sequence[0], a);
  EXPECT_EQ(sequence[2], b);
  EXPECT_EQ(sequence[999], a);

  CommunicationComparer same(sequence, 0, 1);
  for (size_t i = 0; i < sequence.size(); ++i) same.issue(sequence[i]);
  EXPECT_FALSE(same.finish().has_value());

  CommunicationComparer shorter(sequence, 0, 1);
  for (int i = 0; i < 10; ++i) shorter.issue(sequence[static_cast<size_t>(i)]);
  auto m = shorter.finish();
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->index, 10u);
  EXPECT_TRUE(m->first.communication.has_value());
  EXPECT_FALSE(m->second.communication.has_value());
  EXPECT_EQ(m->second.lastLoc, (SourceLoc{3, 5}));
}

// Pairing keeps each distinct sendrecv statement and signature once.
TEST(CrossRankSendRecv, TheLogStoresEachDistinctSendRecvOnce) {
  IssuedCommunication a{{CollectiveKind::SendRecv, DType::F32, 64, 64, ReduceOp::Sum, 0, 0, 1, 0}, {3, 5}};
  std::vector<SendRecvLog> logs(2);
  IssuedCommunication b = a;
  b.signature.to = 0;
  b.signature.from = 1;
  // Rank 0 sends to 1, but rank 1 receives from itself.
  for (uint64_t k = 0; k < 100; ++k) {
    logs[0].append(2 * k, a);
    logs[1].append(2 * k, b);
  }
  EXPECT_EQ(logs[0].size(), 100u);
  EXPECT_EQ(logs[0].position(99), 198u);
  auto m = findSendRecvPairMismatch(logs, UINT64_MAX);
  ASSERT_TRUE(m.has_value());  // rank 1 receives from 1, not from 0
  EXPECT_EQ(m->sender, 0);
  EXPECT_EQ(m->receiver, 1);

  IssuedCommunication fromZero = b;
  fromZero.signature.from = 0;
  IssuedCommunication toOne = a;
  toOne.signature.from = 1;
  std::vector<SendRecvLog> paired(2);
  for (uint64_t k = 0; k < 100; ++k) {
    paired[0].append(k, toOne);
    paired[1].append(k, fromZero);
  }
  EXPECT_FALSE(findSendRecvPairMismatch(paired, UINT64_MAX).has_value());
  // Only positions below the limit are compared.
  EXPECT_FALSE(findSendRecvPairMismatch(logs, 0).has_value());
}

}  // namespace
}  // namespace hostir
