// The one signature of a collective: what ranks must agree on, and the
// wording every mismatch shares (the program check, `run --unchecked` and
// the communicators that match their ranks' calls).
#include "comm/collective_signature.h"

#include <gtest/gtest.h>

#include <vector>

namespace hostir {
namespace {

CollectiveSignature allToAll(size_t count, DType dtype = DType::F32, int64_t axis = 0) {
  CollectiveSignature s{CollectiveKind::AllToAll, dtype, count, count};
  s.axis = axis;
  return s;
}

CollectiveSignature sendRecv(size_t sendCount, int to, size_t recvCount, int from) {
  CollectiveSignature s{CollectiveKind::SendRecv, DType::F32, sendCount, recvCount};
  s.to = to;
  s.from = from;
  return s;
}

TEST(CollectiveSignature, NormalizedKeepsOnlyTheFieldsItsKindTakes) {
  CollectiveSignature s = allToAll(12, DType::F32, 1);
  s.op = ReduceOp::Max;  // all_to_all takes no op, root or peers
  s.root = 3;
  s.to = 1;
  const CollectiveSignature n = normalized(s);
  EXPECT_EQ(n.op, ReduceOp::Sum);
  EXPECT_EQ(n.root, 0);
  EXPECT_EQ(n.to, 0);
  EXPECT_EQ(n.axis, 1);  // it takes an axis
  EXPECT_EQ(n, normalized(allToAll(12, DType::F32, 1)));
  CollectiveSignature r{CollectiveKind::Allreduce, DType::F32, 8, 8, ReduceOp::Max};
  r.axis = 2;
  EXPECT_EQ(normalized(r).op, ReduceOp::Max);
  EXPECT_EQ(normalized(r).axis, 0);
}

TEST(CollectiveSignature, RanksAgreeOnTheWholeSignatureButSendRecvsPair) {
  EXPECT_TRUE(agreeAcrossRanks(allToAll(12), allToAll(12)));
  EXPECT_FALSE(agreeAcrossRanks(allToAll(12), allToAll(9)));
  EXPECT_FALSE(agreeAcrossRanks(allToAll(12), allToAll(12, DType::I32)));
  EXPECT_FALSE(agreeAcrossRanks(allToAll(12, DType::F32, 0), allToAll(12, DType::F32, 1)));
  EXPECT_TRUE(agreeAcrossRanks(sendRecv(4, 1, 4, 1), sendRecv(8, 0, 2, 0)));
}

TEST(CollectiveSignature, DescriptionsNameWhatTellsTwoCallsApart) {
  EXPECT_EQ(describe(allToAll(12)), "all_to_all of 12 f32 elements");
  const CollectiveSignature a = allToAll(12, DType::F32, 0), b = allToAll(12, DType::F32, 1);
  EXPECT_EQ(describe(a, &b), "all_to_all of 12 f32 elements along axis 0");
  CollectiveSignature sum{CollectiveKind::Allreduce, DType::F32, 64, 64, ReduceOp::Sum};
  CollectiveSignature max = sum;
  max.op = ReduceOp::Max;
  EXPECT_EQ(describe(max, &sum), "allreduce of 64 f32 elements with op=max");
  CollectiveSignature gathered{CollectiveKind::Allgather, DType::F32, 4, 12};
  CollectiveSignature more = gathered;
  more.recvCount = 16;
  EXPECT_EQ(describe(more, &gathered), "allgather of 4 f32 elements into 16 f32 elements");
  CollectiveSignature bcast{CollectiveKind::Broadcast, DType::F16, 8, 8};
  bcast.root = 2;
  EXPECT_EQ(describe(bcast), "broadcast of 8 f16 elements from root 2");
  EXPECT_EQ(describe(sendRecv(4, 1, 5, 2)), "sendrecv of 4 f32 elements to rank 1, receiving 5 from rank 2");
  EXPECT_EQ(describe(Rendezvous{}), "barrier");
}

TEST(CollectiveSignature, AllToAllSplitsIntoEqualPartsOnly) {
  EXPECT_EQ(signatureError(allToAll(12), 4), "");
  EXPECT_EQ(signatureError(allToAll(0), 4), "");
  EXPECT_EQ(signatureError(allToAll(7), 1), "");
  EXPECT_EQ(signatureError(allToAll(10), 4),
            "all_to_all of 10 f32 elements over 4 ranks: 10 elements do not split into 4 equal parts");
  CollectiveSignature unequal = allToAll(12);
  unequal.recvCount = 8;
  EXPECT_EQ(signatureError(unequal, 4), "all_to_all of 12 f32 elements over 4 ranks receives 12 elements, not 8");
  EXPECT_EQ(signatureError(allToAll(12, DType::I32), 4), "");
}

TEST(CollectiveSignature, ReductionsRefuseIndices) {
  CollectiveSignature r{CollectiveKind::ReduceScatter, DType::I32, 8, 2};
  EXPECT_EQ(signatureError(r, 4), "reduce_scatter cannot reduce i32 elements: they hold indices, which only move");
  CollectiveSignature g{CollectiveKind::Allgather, DType::I32, 2, 8};
  EXPECT_EQ(signatureError(g, 4), "");
}

TEST(CollectiveSignature, ARendezvousFindsTheFirstRankThatDiffers) {
  std::vector<Rendezvous> calls = {allToAll(12), allToAll(12), allToAll(9)};
  EXPECT_EQ(findMismatch(calls),
            "collective mismatch: rank 0 called all_to_all of 12 f32 elements but rank 2 called all_to_all of 9 f32 "
            "elements");
  calls = {allToAll(12), std::nullopt};
  EXPECT_EQ(findMismatch(calls),
            "collective mismatch: rank 0 called all_to_all of 12 f32 elements but rank 1 called barrier");
  calls = {allToAll(10), allToAll(10), allToAll(10)};
  EXPECT_EQ(findMismatch(calls),
            "all_to_all of 10 f32 elements over 3 ranks: 10 elements do not split into 3 equal parts");
  calls = {std::nullopt, std::nullopt};
  EXPECT_EQ(findMismatch(calls), "");
}

TEST(CollectiveSignature, SendRecvsPairWithTheirReceivers) {
  // A ring of 3: rank 1 sends 8 to rank 2, which expects 5.
  std::vector<CollectiveSignature> ring = {sendRecv(8, 1, 8, 2), sendRecv(8, 2, 8, 0), sendRecv(8, 0, 5, 1)};
  std::optional<SendRecvPairError> e = findUnpairedSendRecv(ring);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->sender, 1);
  EXPECT_EQ(e->receiver, 2);
  EXPECT_EQ(e->sends, "rank 1 sends 8 f32 elements to rank 2");
  EXPECT_EQ(e->receives, "rank 2 receives 5 f32 elements from rank 1");
  ring[2] = sendRecv(8, 0, 8, 1);
  EXPECT_FALSE(findUnpairedSendRecv(ring).has_value());
  std::vector<Rendezvous> calls(ring.begin(), ring.end());
  calls[1] = sendRecv(8, 2, 8, 2);  // rank 1 receives from rank 2, which sends to rank 0
  EXPECT_EQ(findMismatch(calls),
            "sendrecv mismatch: rank 0 sends 8 f32 elements to rank 1, but rank 1 receives from rank 2");
}

TEST(CollectiveSignature, PartsDifferByAtMostOne) {
  EXPECT_EQ(partRange(10, 0, 3), (std::pair<size_t, size_t>{0, 4}));
  EXPECT_EQ(partRange(10, 1, 3), (std::pair<size_t, size_t>{4, 7}));
  EXPECT_EQ(partRange(10, 2, 3), (std::pair<size_t, size_t>{7, 10}));
}

}  // namespace
}  // namespace hostir
