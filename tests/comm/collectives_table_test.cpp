// The collectives table (ir/collectives.h) against the op table: every
// operation of category Communication has a row, and every row has a name
// (the op table's), a shape rule, a bus factor and a reduce flag that agree
// with its statement's operands.
#include "ir/collectives.h"

#include <gtest/gtest.h>

#include <set>

namespace hostir {
namespace {

TEST(CollectivesTable, EveryCommunicationHasARowAndEveryRowAnOperation) {
  std::set<OpKind> communications;
  for (const OpSignature& sig : allSignatures()) {
    std::optional<CollectiveKind> kind = collectiveOf(sig.kind);
    EXPECT_EQ(kind.has_value(), sig.category == OpCategory::Communication) << sig.name;
    if (sig.category == OpCategory::Communication) communications.insert(sig.kind);
  }
  std::set<OpKind> rows;
  for (const CollectiveInfo& row : allCollectives()) {
    rows.insert(row.op);
    EXPECT_EQ(collectiveOf(row.op), row.kind) << row.name;
    EXPECT_EQ(&collectiveInfo(row.kind), &row) << row.name;
  }
  EXPECT_EQ(rows, communications);
}

TEST(CollectivesTable, EveryRowHasANameAShapeRuleABusFactorAndAReduceFlag) {
  for (const CollectiveInfo& row : allCollectives()) {
    SCOPED_TRACE(std::string(row.name));
    const OpSignature& sig = signatureOf(row.op);
    // Its name is the op table's, which machine profiles spell too.
    EXPECT_EQ(row.name, sig.name);
    EXPECT_EQ(collectiveName(row.kind), row.name);
    EXPECT_EQ(collectiveByName(row.name), row.kind);
    EXPECT_EQ(sig.cost, CostRule::Collective);
    // The shape rule names the operands the statement has: an axis for the
    // rules that split along one, a root for the one in place, peers for
    // the one sized per peer, an `out` otherwise.
    EXPECT_EQ(takesOperand(row.kind, "axis"), splitsAlongAxis(row.shape));
    EXPECT_EQ(takesOperand(row.kind, "root"), row.shape == CollectiveShape::InPlace);
    EXPECT_EQ(takesOperand(row.kind, "to") && takesOperand(row.kind, "from"), row.shape == CollectiveShape::PerPeer);
    EXPECT_EQ(outOperand(sig).has_value(), row.shape != CollectiveShape::InPlace);
    // Every rule's input is the first operand, a tensor it reads.
    ASSERT_FALSE(sig.operands.empty());
    EXPECT_EQ(sig.operands[0].kind, OperandKind::Tensor);
    // A reducing collective takes `op` and refuses i32; the others move every dtype.
    EXPECT_EQ(row.reduces, takesOperand(row.kind, "op"));
    for (DType dtype : kAllDTypes) EXPECT_EQ(acceptsDType(row.kind, dtype), !row.reduces || isFloating(dtype));
    // A bus factor for every team: none for one rank, at most 2 (allreduce's limit) for any.
    ASSERT_NE(row.busFactor, nullptr);
    EXPECT_EQ(busFactor(row.kind, 1), 0);
    for (int64_t n : {2, 3, 4, 8, 1024}) {
      EXPECT_GT(busFactor(row.kind, n), 0) << n;
      EXPECT_LT(busFactor(row.kind, n), 2) << n;
    }
    // What prices it on a profile without its own entries has entries of its own.
    EXPECT_EQ(collectiveInfo(row.pricedAs).pricedAs, row.pricedAs);
  }
}

// nccl-tests' bus factors (its doc/PERFORMANCE.md).
TEST(CollectivesTable, BusFactorsAreNcclTests) {
  for (int64_t n : {2, 3, 4, 8}) {
    const double d = static_cast<double>(n);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::Allreduce, n), 2 * (d - 1) / d);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::Allgather, n), (d - 1) / d);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::ReduceScatter, n), (d - 1) / d);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::AllToAll, n), (d - 1) / d);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::Broadcast, n), 1);
    EXPECT_DOUBLE_EQ(busFactor(CollectiveKind::SendRecv, n), 1);
  }
}

TEST(CollectivesTable, AllToAllExchangesEqualPartsAndMovesIndices) {
  const CollectiveInfo& a2a = collectiveInfo(CollectiveKind::AllToAll);
  EXPECT_EQ(a2a.op, OpKind::AllToAll);
  EXPECT_EQ(a2a.shape, CollectiveShape::Exchanged);
  EXPECT_FALSE(a2a.reduces);
  EXPECT_TRUE(acceptsDType(CollectiveKind::AllToAll, DType::I32));
  EXPECT_FALSE(acceptsDType(CollectiveKind::Allreduce, DType::I32));
  EXPECT_FALSE(acceptsDType(CollectiveKind::ReduceScatter, DType::I32));
  EXPECT_EQ(a2a.pricedAs, CollectiveKind::Allgather);
}

}  // namespace
}  // namespace hostir
