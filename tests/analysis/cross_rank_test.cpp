// The cross-rank rule: every rank issues the same communications in the
// same order. Each class of rank-dependent communication is checked at 2, 3
// and 4 ranks, with the first difference, both ranks and both statements
// expected; rank-dependent programs whose communications agree are accepted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <string>
#include <vector>

#include "analysis/program_check.h"
#include "program_check_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

struct MismatchCase {
  const char* name;
  const char* text;  // line 1 is the `program` line
  uint64_t index;    // 0-based number of the first differing communication
  // The rank whose communications differ from rank 0's first, for a team of `world`.
  std::function<int64_t(int64_t world)> rank;
  // Which side has a communication at `index` (false: that rank issued fewer).
  bool rankZeroHasIt, otherRankHasIt;
  uint32_t rankZeroLine, otherRankLine;  // the statements (0: none)
  // A part of the message, for a team of `world`.
  std::function<std::string(int64_t world)> says;
};

int64_t rankOne(int64_t) { return 1; }

const std::vector<MismatchCase>& mismatchCases() {
  static const std::vector<MismatchCase> kCases = {
      {"LoopTripCount", R"hir(program trip_count(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  c0 = allreduce(y, op=sum)
  wait(c0)
  for i in range(rank) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
)hir",
       1, rankOne, false, true, 4, 7,
       [](int64_t) {
         return std::string(
             "communication #2 is allreduce of 64 f32 elements on rank 1 but rank 0 issues only 1 communication");
       }},

      {"ElementCount", R"hir(program element_count(N = 64) {
  input  x : f32[N, 8]
  y = allocate(f32[N, 8])
  copy(x, out=y)
  yi = shard_by_stream(y, axis=0, index=0, chunks=min(rank, 1) + 1)
  c = allreduce(yi, op=sum)
  wait(c)
}
)hir",
       0, rankOne, true, true, 6, 6,
       [](int64_t) {
         return std::string(
             "communication #1 is allreduce of 512 f32 elements on rank 0 but allreduce of 256 f32 elements on rank 1");
       }},

      {"Dtype", R"hir(program dtype(N = 64) {
  input  x : f32[N]
  a = allocate(f32[N], zero=true)
  b = allocate(f16[N], zero=true)
  for i in range(1 - min(rank, 1)) {
    c = allreduce(a, op=sum)
    wait(c)
  }
  for i in range(min(rank, 1)) {
    d = allreduce(b, op=sum)
    wait(d)
  }
}
)hir",
       0, rankOne, true, true, 6, 10,
       [](int64_t) {
         return std::string("allreduce of 64 f32 elements on rank 0 but allreduce of 64 f16 elements on rank 1");
       }},

      {"ReduceOp", R"hir(program reduce_op(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  for i in range(1 - min(rank, 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
  for i in range(min(rank, 1)) {
    d = allreduce(y, op=max)
    wait(d)
  }
}
)hir",
       0, rankOne, true, true, 5, 9,
       [](int64_t) {
         return std::string(
             "allreduce of 64 f32 elements with op=sum on rank 0 but allreduce of 64 f32 elements with op=max on rank "
             "1");
       }},

      {"Axis", R"hir(program axis(N = 8) {
  input  x : f32[N, N]
  rows = allocate(f32[N * world, N])
  cols = allocate(f32[N, N * world])
  for i in range(1 - min(rank, 1)) {
    c = allgather(x, out=rows, axis=0)
    wait(c)
  }
  for i in range(min(rank, 1)) {
    d = allgather(x, out=cols, axis=1)
    wait(d)
  }
}
)hir",
       0, rankOne, true, true, 6, 10,
       [](int64_t) {
         return std::string(
             "allgather of 64 f32 elements along axis 0 on rank 0 but allgather of 64 f32 elements along axis 1 on "
             "rank 1");
       }},

      {"RootIsRank", R"hir(program root_is_rank(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  c = broadcast(y, root=rank)
  wait(c)
}
)hir",
       0, rankOne, true, true, 5, 5,
       [](int64_t) {
         return std::string(
             "broadcast of 64 f32 elements from root 0 on rank 0 but broadcast of 64 f32 elements from root 1 on rank "
             "1");
       }},

      {"RootIsTheNextRank", R"hir(program root_is_next(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  c = broadcast(y, root=(rank + 1) % world)
  wait(c)
}
)hir",
       0, rankOne, true, true, 5, 5,
       [](int64_t world) {
         return fmt::format(
             "broadcast of 64 f32 elements from root 1 on rank 0 but broadcast of 64 f32 elements from "
             "root {} on rank 1",
             2 % world);
       }},

      {"OnlyRankZeroCommunicates", R"hir(program only_rank_zero(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  for i in range(1 - min(rank, 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
)hir",
       0, rankOne, true, false, 5, 0,
       [](int64_t) {
         return std::string("communication #1 is allreduce of 64 f32 elements on rank 0 but rank 1 issues none");
       }},

      {"OnlyTheLastRankCommunicates", R"hir(program only_last_rank(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  c0 = allreduce(y, op=sum)
  wait(c0)
  for i in range(rank / (world - 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
)hir",
       1, [](int64_t world) { return world - 1; }, false, true, 4, 7,
       [](int64_t world) {
         return fmt::format(
             "communication #2 is allreduce of 64 f32 elements on rank {} but rank 0 issues only 1 communication",
             world - 1);
       }},

      {"KindDiffers", R"hir(program kind_differs(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  for i in range(1 - min(rank, 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
  for i in range(min(rank, 1)) {
    d = broadcast(y, root=0)
    wait(d)
  }
}
)hir",
       0, rankOne, true, true, 5, 9,
       [](int64_t) {
         return std::string(
             "allreduce of 64 f32 elements on rank 0 but broadcast of 64 f32 elements from root 0 on rank 1");
       }},

      {"ReduceScatterElementCount", R"hir(program reduce_scatter_count(N = 24) {
  input  x : f32[N * world, 4]
  o = allocate(f32[N, 4])
  xr = shard_by_stream(x, axis=1, index=0, chunks=min(rank, 1) + 1)
  orr = shard_by_stream(o, axis=1, index=0, chunks=min(rank, 1) + 1)
  c = reduce_scatter(xr, out=orr, axis=0, op=sum)
  wait(c)
}
)hir",
       0, rankOne, true, true, 6, 6,
       [](int64_t world) {
         return fmt::format(
             "reduce_scatter of {} f32 elements on rank 0 but reduce_scatter of {} f32 elements on rank 1",
             24 * world * 4, 24 * world * 2);
       }},
  };
  return kCases;
}

// A case of a table on a team of `world` ranks.
template <typename Case>
struct AtWorld {
  const Case* c;
  int64_t world;
};

// Every case of a table at 2, 3 and 4 ranks.
template <typename Case>
std::vector<AtWorld<Case>> atEveryWorld(const std::vector<Case>& cases) {
  std::vector<AtWorld<Case>> params;
  for (const Case& c : cases)
    for (int64_t world : {2, 3, 4}) params.push_back({&c, world});
  return params;
}

// NAME_WRanks, the test's name.
template <typename Case>
std::string atWorldName(const ::testing::TestParamInfo<AtWorld<Case>>& info) {
  return fmt::format("{}_{}Ranks", info.param.c->name, info.param.world);
}

using MismatchParam = AtWorld<MismatchCase>;

void PrintTo(const MismatchParam& p, std::ostream* os) { *os << p.c->name << " on " << p.world << " ranks"; }

class CrossRankMismatch : public ::testing::TestWithParam<MismatchParam> {};

TEST_P(CrossRankMismatch, ReportsTheFirstDifferenceWithBothRanks) {
  const MismatchCase& c = *GetParam().c;
  const int64_t world = GetParam().world;
  ProgramCheck check = testing::checkText(c.text, world);
  EXPECT_EQ(check.ranksChecked, world);
  ASSERT_TRUE(check.communicationMismatch.has_value());
  EXPECT_FALSE(check.ok());
  const CommunicationMismatch& m = *check.communicationMismatch;
  EXPECT_EQ(m.index, c.index);
  EXPECT_EQ(m.first.rank, 0);
  EXPECT_EQ(m.second.rank, c.rank(world));
  ASSERT_EQ(m.first.communication.has_value(), c.rankZeroHasIt);
  ASSERT_EQ(m.second.communication.has_value(), c.otherRankHasIt);
  // The side without a communication there names its last one (if any).
  EXPECT_EQ(c.rankZeroHasIt ? m.first.communication->loc.line : m.first.lastLoc.line, c.rankZeroLine);
  EXPECT_EQ(c.otherRankHasIt ? m.second.communication->loc.line : m.second.lastLoc.line, c.otherRankLine);

  std::string text = formatProgramCheck(check, "p.hir", c.text);
  SCOPED_TRACE(text);
  // Positioned at the communication that has no match (rank 0's when it has one).
  uint32_t errorLine = c.rankZeroHasIt ? c.rankZeroLine : c.otherRankLine;
  EXPECT_THAT(text, HasSubstr(fmt::format("p.hir:{}:", errorLine)));
  EXPECT_THAT(text, HasSubstr(": error: ranks issue different communications: "));
  EXPECT_THAT(text, HasSubstr(c.says(world)));
  // The other rank's statement (or where it ended) is a note.
  uint32_t noteLine = c.rankZeroHasIt ? c.otherRankLine : c.rankZeroLine;
  if (noteLine) {
    EXPECT_THAT(text, HasSubstr(fmt::format("p.hir:{}:", noteLine)));
  }
  EXPECT_THAT(text, HasSubstr(": note: rank "));
  EXPECT_EQ(summarizeFindings(check), "a communication mismatch between ranks");
}

INSTANTIATE_TEST_SUITE_P(Table, CrossRankMismatch, ::testing::ValuesIn(atEveryWorld(mismatchCases())),
                         atWorldName<MismatchCase>);

// The same message shape as the language contract's example, with the note
// at rank 1's statement.
TEST(CrossRank, MessageNamesBothRanksStatementsAndCounts) {
  constexpr const char* kText = R"hir(program sizes(N = 128) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  a = shard_by_stream(y, axis=0, index=0, chunks=2)
  c1 = allreduce(a, op=sum)
  wait(c1)
  for i in range(1 - min(rank, 1)) {
    c2 = allreduce(a, op=sum)
    wait(c2)
  }
  for i in range(min(rank, 1)) {
    c3 = allreduce(y, op=sum)
    wait(c3)
  }
}
)hir";
  ProgramCheck check = testing::checkText(kText, 2);
  std::string text = formatProgramCheck(check, "p.hir", kText);
  EXPECT_EQ(text,
            "p.hir:8:10: error: ranks issue different communications: communication #2 is allreduce of 64 f32 "
            "elements on rank 0 but allreduce of 128 f32 elements on rank 1\n"
            "    c2 = allreduce(a, op=sum)\n"
            "         ^\n"
            "p.hir:12:10: note: rank 1 issues its communication #2 here\n"
            "    c3 = allreduce(y, op=sum)\n"
            "         ^\n");
}

// ---------------------------------------------------------------------------
// Rank-dependent programs whose communications agree.

struct AcceptedCase {
  const char* name;
  const char* text;
};

const std::vector<AcceptedCase>& acceptedCases() {
  static const std::vector<AcceptedCase> kCases = {
      {"EachRankComputesItsOwnChunk", R"hir(program own_chunk(N = 48) {
  input  x : f32[N, 4]
  output y : f32[N, 4]
  y = allocate(f32[N, 4], zero=true)
  xr = shard_by_stream(x, axis=0, index=rank, chunks=world)
  yr = shard_by_stream(y, axis=0, index=rank, chunks=world)
  copy(xr, out=yr)
  c = allreduce(y, op=sum)
  wait(c)
}
)hir"},
      {"EachRankUsesItsOwnStream", R"hir(program own_stream(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  main = get_current_stream()
  set_current_stream(stream(rank))
  synchronize(main)
  copy(x, out=y)
  c = allreduce(y, op=sum)
  set_current_stream(main)
  wait(c)
}
)hir"},
      {"RankDependentComputeLoop", R"hir(program compute_loop(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  for i in range(rank) {
    add(y, x, out=y)
  }
  c = allreduce(y, op=sum)
  wait(c)
}
)hir"},
      {"RootFollowsTheLoopIndex", R"hir(program root_loop(N = 64, S = 5) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  copy(x, out=y)
  for i in range(S) {
    c = broadcast(y, root=i % world)
    wait(c)
  }
}
)hir"},
      {"EqualChunksChosenByRank", R"hir(program equal_chunks(N = 48) {
  input  x : f32[N, 4]
  output y : f32[N, 4]
  y = allocate(f32[N, 4])
  copy(x, out=y)
  yr = shard_by_stream(y, axis=0, index=rank, chunks=world)
  c = allreduce(yr, op=max)
  wait(c)
}
)hir"},
      {"OnlyTheRootWritesWhatItBroadcasts", R"hir(program root_writes(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  for i in range(1 - min(rank, 1)) {
    copy(x, out=y)
  }
  c = broadcast(y, root=0)
  wait(c)
}
)hir"},
  };
  return kCases;
}

using AcceptedParam = AtWorld<AcceptedCase>;

void PrintTo(const AcceptedParam& p, std::ostream* os) { *os << p.c->name << " on " << p.world << " ranks"; }

class CrossRankAccepted : public ::testing::TestWithParam<AcceptedParam> {};

TEST_P(CrossRankAccepted, PassesEveryCheck) {
  const AcceptedCase& c = *GetParam().c;
  ProgramCheck check = testing::checkText(c.text, GetParam().world);
  EXPECT_TRUE(check.ok()) << formatProgramCheck(check, c.name, c.text);
}

INSTANTIATE_TEST_SUITE_P(Table, CrossRankAccepted, ::testing::ValuesIn(atEveryWorld(acceptedCases())),
                         atWorldName<AcceptedCase>);

// ---------------------------------------------------------------------------
// Which ranks are checked.

TEST(CrossRank, AProgramThatNeverNamesRankIsCheckedOnOneRank) {
  constexpr const char* kText = R"hir(program no_rank(N = 64, S = 4) {
  input  x : f32[N] shard(0)
  output y : f32[N]
  y = allocate(f32[N], zero=true)
  for i in range(S) {
    c = allgather(x, out=y, axis=0)
    wait(c)
  }
}
)hir";
  for (int64_t world : {1, 2, 4}) {
    ProgramCheck check = testing::checkText(kText, world);
    EXPECT_EQ(check.ranksChecked, 1) << "world " << world;
    EXPECT_TRUE(check.ok()) << formatProgramCheck(check, "no_rank.hir", kText);
  }
}

TEST(CrossRank, ATeamOfOneHasNothingToCompare) {
  ProgramCheck check = testing::checkText(mismatchCases()[0].text, 1);
  EXPECT_EQ(check.ranksChecked, 1);
  EXPECT_FALSE(check.communicationMismatch.has_value());
}

// The earliest difference over all ranks is the one reported: rank 2 differs
// at #1, rank 1 only at #2.
TEST(CrossRank, TheEarliestDifferenceOverAllRanksIsReported) {
  constexpr const char* kText = R"hir(program earliest(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N], zero=true)
  for i in range(rank / 2) {
    c = broadcast(y, root=0)
    wait(c)
  }
  d = allreduce(y, op=sum)
  wait(d)
  for i in range(min(rank, 1)) {
    e = allreduce(y, op=sum)
    wait(e)
  }
}
)hir";
  ProgramCheck check = testing::checkText(kText, 3);
  ASSERT_TRUE(check.communicationMismatch.has_value());
  EXPECT_EQ(check.communicationMismatch->index, 0u);
  EXPECT_EQ(check.communicationMismatch->second.rank, 2);
}

// The reference rank's sequence stays small however long the program is:
// each distinct statement and signature is stored once.
TEST(CommunicationSequence, StoresEachDistinctCommunicationOnce) {
  CommunicationSequence sequence;
  IssuedCommunication a{{OpKind::Allreduce, DType::F32, DType::F32, ReduceOp::Sum, 64, 64, 0, 0}, {3, 5}};
  IssuedCommunication b = a;
  b.signature.inputElements = b.signature.outputElements = 32;
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

// ---------------------------------------------------------------------------
// sendrecv: the kind agrees at every position; sizes, dtypes and peers may
// differ between ranks, but each sendrecv to rank q must meet q's sendrecv
// from this rank at the same position with the same dtype and element count.

constexpr const char* kRing = R"hir(program ring(N = 64, S = 3) {
  input  x : f32[N]
  output y : f32[N]
  output u : f32[N]
  y = allocate(f32[N])
  h = sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
  wait(h)
  u = allocate(f32[N], zero=true)
  for i in range(S) {
    a = shard_by_stream(x, axis=0, index=0, chunks=rank + 1)
    b = shard_by_stream(u, axis=0, index=0, chunks=(rank + world - i % world) % world + 1)
    c = sendrecv(a, out=b, to=(rank + i) % world, from=(rank + world - i % world) % world)
    wait(c)
  }
  g = allreduce(u, op=sum)
  wait(g)
}
)hir";

TEST(CrossRankSendRecv, RingsAndUnevenBlocksPairForOneToFiveRanks) {
  for (int64_t world = 1; world <= 5; ++world) {
    ProgramCheck check = testing::checkText(kRing, world);
    EXPECT_EQ(check.ranksChecked, world);
    EXPECT_TRUE(check.ok()) << "world " << world << "\n" << formatProgramCheck(check, "ring.hir", kRing);
  }
}

struct PairCase {
  const char* name;
  const char* text;
  int64_t worldMin;
  // The expected error (with position) and note line, for a team of `world`.
  std::function<std::string(int64_t world)> error;
  std::function<std::string(int64_t world)> note;
};

const std::vector<PairCase>& pairCases() {
  static const std::vector<PairCase> kCases = {
      {"WrongFrom", R"hir(program wrong_from(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  c = allreduce(x, op=sum)
  wait(c)
  h = sendrecv(x, out=y, to=(rank + 1) % world, from=rank)
  wait(h)
}
)hir",
       2,
       [](int64_t) {
         return std::string(
             "p.hir:7:7: error: ranks' sendrecv pairs do not match: communication #2 sends 64 f32 elements from rank 0 "
             "to rank 1, but rank 1's communication #2 receives from rank 1\n");
       },
       [](int64_t) { return std::string("p.hir:7:7: note: rank 1 issues its communication #2 here\n"); }},

      {"CountMismatch", R"hir(program counts(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  a = allocate(f32[N + min(rank, 1)], zero=true)
  y = allocate(f32[N])
  h = sendrecv(a, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
  wait(h)
}
)hir",
       2,
       [](int64_t world) {
         return fmt::format(
             "p.hir:6:7: error: ranks' sendrecv pairs do not match: communication #1 sends 65 f32 elements from rank 1 "
             "to rank {0}, but rank {0} receives 64 f32 elements from rank 1\n",
             2 % world);
       },
       [](int64_t world) {
         return fmt::format("p.hir:6:7: note: rank {} issues its communication #1 here\n", 2 % world);
       }},

      {"DtypeMismatch", R"hir(program dtypes(N = 64) {
  a = allocate(f32[N], zero=true)
  b = allocate(f32[N])
  p = allocate(f16[N], zero=true)
  q = allocate(f16[N])
  for i in range(1 - min(rank, 1)) {
    h = sendrecv(a, out=b, to=(rank + 1) % world, from=(rank + world - 1) % world)
    wait(h)
  }
  for i in range(min(rank, 1)) {
    k = sendrecv(p, out=q, to=(rank + 1) % world, from=(rank + world - 1) % world)
    wait(k)
  }
}
)hir",
       2,
       [](int64_t) {
         return std::string(
             "p.hir:7:9: error: ranks' sendrecv pairs do not match: communication #1 sends 64 f32 elements from rank 0 "
             "to rank 1, but rank 1 receives 64 f16 elements from rank 0\n");
       },
       [](int64_t) { return std::string("p.hir:11:9: note: rank 1 issues its communication #1 here\n"); }},

      // Never names `rank`, yet every rank must be checked: rank 1 sends to 0, which receives from itself.
      {"ConstantTo", R"hir(program constant_to(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  sendrecv(x, out=y, to=0, from=0)
}
)hir",
       2,
       [](int64_t) {
         return std::string(
             "p.hir:5:3: error: ranks' sendrecv pairs do not match: communication #1 sends 64 f32 elements from rank 1 "
             "to rank 0, but rank 0's communication #1 receives from rank 0\n");
       },
       [](int64_t) { return std::string("p.hir:5:3: note: rank 0 issues its communication #1 here\n"); }},

      // Another kind on the other rank: the cross-rank rule's own message.
      {"AgainstAnAllreduce", R"hir(program kinds(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N])
  for i in range(1 - min(rank, 1)) {
    h = sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
    wait(h)
  }
  for i in range(min(rank, 1)) {
    k = allreduce(x, out=y, op=sum)
    wait(k)
  }
}
)hir",
       2,
       [](int64_t world) {
         return fmt::format(
             "p.hir:5:9: error: ranks issue different communications: communication #1 is sendrecv of 64 f32 "
             "elements to rank 1, receiving 64 from rank {} on rank 0 but allreduce of 64 f32 elements on rank 1\n",
             world - 1);
       },
       [](int64_t) { return std::string("p.hir:9:9: note: rank 1 issues its communication #1 here\n"); }},
  };
  return kCases;
}

using PairParam = AtWorld<PairCase>;

void PrintTo(const PairParam& p, std::ostream* os) { *os << p.c->name << " on " << p.world << " ranks"; }

class CrossRankSendRecvMismatch : public ::testing::TestWithParam<PairParam> {};

TEST_P(CrossRankSendRecvMismatch, ReportsTheFirstFailingPairWithBothRanks) {
  const PairCase& c = *GetParam().c;
  const int64_t world = GetParam().world;
  ProgramCheck check = testing::checkText(c.text, world);
  EXPECT_EQ(check.ranksChecked, world);
  EXPECT_FALSE(check.ok());
  // One report: the pair's or the kind's, never both.
  EXPECT_NE(check.sendRecvMismatch.has_value(), check.communicationMismatch.has_value());
  std::string text = formatProgramCheck(check, "p.hir", c.text);
  EXPECT_THAT(text, HasSubstr(c.error(world)));
  EXPECT_THAT(text, HasSubstr(c.note(world)));
  EXPECT_EQ(summarizeFindings(check), "a communication mismatch between ranks");
}

INSTANTIATE_TEST_SUITE_P(Table, CrossRankSendRecvMismatch, ::testing::ValuesIn(atEveryWorld(pairCases())),
                         atWorldName<PairCase>);

TEST(CrossRankSendRecv, TheWholeReportOfAWrongPeer) {
  constexpr const char* kText = R"hir(program peers(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + 1) % world)
}
)hir";
  ProgramCheck check = testing::checkText(kText, 3);
  ASSERT_TRUE(check.sendRecvMismatch.has_value());
  EXPECT_EQ(check.sendRecvMismatch->index, 0u);
  EXPECT_EQ(check.sendRecvMismatch->sender, 0);
  EXPECT_EQ(check.sendRecvMismatch->receiver, 1);
  EXPECT_EQ(formatProgramCheck(check, "p.hir", kText),
            "p.hir:5:3: error: ranks' sendrecv pairs do not match: communication #1 sends 64 f32 elements from rank 0 "
            "to rank 1, but rank 1's communication #1 receives from rank 2\n"
            "  sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + 1) % world)\n"
            "  ^\n"
            "p.hir:5:3: note: rank 1 issues its communication #1 here\n"
            "  sendrecv(x, out=y, to=(rank + 1) % world, from=(rank + 1) % world)\n"
            "  ^\n");
  // Two ranks pair either way round.
  EXPECT_TRUE(testing::checkText(kText, 2).ok());
}

// The earlier of a kind difference and a failing pair is reported: here
// rank 1's extra allreduce comes after a pair that already fails.
TEST(CrossRankSendRecv, TheEarlierOfAKindDifferenceAndAFailingPairIsReported) {
  constexpr const char* kText = R"hir(program order(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N])
  sendrecv(x, out=y, to=0, from=0)
  for i in range(min(rank, 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
}
)hir";
  ProgramCheck check = testing::checkText(kText, 2);
  ASSERT_TRUE(check.sendRecvMismatch.has_value());
  EXPECT_FALSE(check.communicationMismatch.has_value());
  EXPECT_EQ(check.sendRecvMismatch->index, 0u);

  // A kind difference first: the pair after it is not looked at.
  constexpr const char* kKindFirst = R"hir(program order(N = 64) {
  input  x : f32[N]
  y = allocate(f32[N])
  for i in range(min(rank, 1)) {
    c = allreduce(y, op=sum)
    wait(c)
  }
  sendrecv(x, out=y, to=0, from=0)
}
)hir";
  ProgramCheck kindFirst = testing::checkText(kKindFirst, 2);
  ASSERT_TRUE(kindFirst.communicationMismatch.has_value());
  EXPECT_FALSE(kindFirst.sendRecvMismatch.has_value());
  EXPECT_EQ(kindFirst.communicationMismatch->index, 0u);
}

// Pairing keeps each distinct sendrecv statement and signature once.
TEST(CrossRankSendRecv, TheLogStoresEachDistinctSendRecvOnce) {
  IssuedCommunication a{{OpKind::SendRecv, DType::F32, DType::F32, ReduceOp::Sum, 64, 64, 0, 0, 1, 0}, {3, 5}};
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
