// Uninitialized reads, below the programs: the analysis that tracks what
// each buffer has written (writes coalesce, stripes stay exact, past its
// bounds nothing is claimed) and the boxes it is made of; and every example
// and golden program passes the whole check. The programs for each kind of
// read (kernel input, bias, communication input, in-place allreduce,
// broadcast on its root, partial writes, views, a chunked loop that misses
// a chunk), unwritten outputs and fully written programs are .hir files in
// programs/uninitialized/ with their expected reports inside them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/initialization_analysis.h"
#include "analysis/program_check.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------
// The shipped programs: every example and every golden program (inputs and
// pass outputs) passes the whole check on 1, 2 and 4 ranks wherever it
// verifies.

//
// Golden programs that read uninitialized memory by design, with the reads
// each makes (line of the reader, tensor) and the outputs they leave
// unwritten: the communication-only benchmark variants, whose pass removes
// the computations that wrote them (they are timed with --unchecked, never
// checked). An entry that no longer reads uninitialized memory fails this
// test, so the list cannot go stale.
struct KnownUninitialized {
  std::vector<std::pair<uint32_t, std::string>> reads;
  std::vector<std::string> unwrittenOutputs;
};

const std::map<std::string, KnownUninitialized>& knownUninitialized() {
  static const std::map<std::string, KnownUninitialized> kKnown = {
      {"benchmark_variants.strip-compute.hir", {{{11, "y"}, {14, "t"}}, {}}},
      {"value_forms.strip-compute.hir", {{{15, "doubled"}, {17, "t"}, {19, "p"}}, {"y"}}},
  };
  return kKnown;
}

TEST(ShippedPrograms, PassEveryCheck) {
  std::vector<std::filesystem::path> files = testing::hirFiles(testing::sourceDir() / "examples");
  for (const auto& path : testing::hirFiles(testing::sourceDir() / "tests" / "golden")) files.push_back(path);
  int checked = 0;
  for (const auto& path : files) {
    std::string text = testing::readFile(path);
    auto program = parseProgram(text);
    ASSERT_TRUE(program) << path;
    auto known = knownUninitialized().find(path.filename().string());
    for (int64_t world : {1, 2, 4}) {
      Bindings bindings{{}, world};
      if (verifyProgram(*program, bindings)) continue;  // e.g. a shard that does not divide by 4
      ProgramCheck check = checkProgram(*program, *bindParams(*program, bindings), world, 4);
      std::string report = formatProgramCheck(check, path.string(), text);
      ++checked;
      if (known == knownUninitialized().end()) {
        EXPECT_TRUE(check.ok()) << path.string() << " on " << world << " ranks:\n" << report;
        continue;
      }
      EXPECT_TRUE(check.races.empty() && !check.communicationMismatch) << report;
      std::vector<std::pair<uint32_t, std::string>> reads;
      for (const UninitializedRead& read : check.uninitializedReads)
        reads.emplace_back(read.reader.loc.line, read.unwritten.allocation.name);
      EXPECT_EQ(reads, known->second.reads) << path.string() << "\n" << report;
      std::vector<std::string> outputs;
      for (const UnwrittenOutputReport& output : check.unwrittenOutputs) outputs.push_back(output.output);
      EXPECT_EQ(outputs, known->second.unwrittenOutputs) << path.string() << "\n" << report;
    }
  }
  EXPECT_GE(checked, 40);
}

// ---------------------------------------------------------------------------
// The analysis itself: writes coalesce, so a chunked loop costs one box.

Allocation named(const char* name) { return Allocation{name, OpKind::Allocate, {}}; }

Box rows(int64_t lo, int64_t hi, int64_t cols = 8) {
  Box b;
  b.rank = 2;
  b.lo = {lo, 0};
  b.hi = {hi, cols};
  return b;
}

TEST(InitializationAnalysis, AChunkedLoopCoalescesIntoOneBox) {
  constexpr int64_t kChunks = 100'000;
  InitializationAnalysis a;
  a.declareBuffer(1, named("y"), rows(0, kChunks), false);
  AccessSite site{OpKind::Add, {7, 3}};
  for (int64_t i = 0; i < kChunks - 1; ++i) {
    a.write(1, rows(i, i + 1));
    ASSERT_EQ(a.storedBoxes(), 1u) << "after chunk " << i;
  }
  a.read(1, rows(0, kChunks - 1), site, 0);
  EXPECT_TRUE(a.reads().empty());
  auto missing = a.unwritten(1, rows(0, kChunks));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->region, rows(kChunks - 1, kChunks));
  a.write(1, rows(kChunks - 1, kChunks));
  EXPECT_EQ(a.storedBoxes(), 0u);  // fully written: the list is dropped
  EXPECT_FALSE(a.unwritten(1, rows(0, kChunks)).has_value());
}

TEST(InitializationAnalysis, ChunksInAnyOrderCoalesce) {
  InitializationAnalysis a;
  a.declareBuffer(1, named("y"), rows(0, 64), false);
  for (int64_t i : {5, 1, 7, 3, 0, 6, 2}) a.write(1, rows(8 * i, 8 * i + 8));
  EXPECT_LE(a.storedBoxes(), 2u);  // [0:64) but [32:40) is one or two boxes
  auto missing = a.unwritten(1, rows(0, 64));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->region, rows(32, 40));
  a.write(1, rows(32, 40));
  EXPECT_EQ(a.storedBoxes(), 0u);
}

TEST(InitializationAnalysis, AReadIsReportedOncePerStatementAndBuffer) {
  InitializationAnalysis a;
  a.declareBuffer(1, Allocation{"y", OpKind::Allocate, {3, 7}}, rows(0, 8), false);
  a.declareBuffer(2, named("x"), rows(0, 8), true);
  AccessSite first{OpKind::Add, {9, 3}}, second{OpKind::Copy, {10, 3}};
  for (int i = 0; i < 3; ++i) a.read(1, rows(2, 4), first, 0);
  a.read(1, rows(0, 8), second, 1);
  a.read(2, rows(0, 8), second, 1);  // an input: written
  ASSERT_EQ(a.reads().size(), 2u);
  EXPECT_EQ(a.reads()[0].unwritten.region, rows(2, 4));
  EXPECT_EQ(a.reads()[0].unwritten.allocation.loc, (SourceLoc{3, 7}));
  EXPECT_EQ(a.reads()[1].reader.loc, (SourceLoc{10, 3}));
  EXPECT_EQ(a.reads()[1].rank, 1);
}

// Stripes (writes that span every dimension but one) stay exact in any
// number and order: every other row, then the rest backwards.
TEST(InitializationAnalysis, StripesInAnyOrderAndNumberAreExact) {
  constexpr int64_t kRows = 200'000;
  InitializationAnalysis a;
  a.declareBuffer(1, named("y"), rows(0, kRows), false);
  for (int64_t r = 0; r < kRows; r += 2) a.write(1, rows(r, r + 1));
  EXPECT_EQ(a.storedBoxes(), static_cast<size_t>(kRows / 2));
  auto missing = a.unwritten(1, rows(0, kRows));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->region, rows(1, 2));
  missing = a.unwritten(1, rows(1000, 1003));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->region, rows(1001, 1002));
  EXPECT_FALSE(a.unwritten(1, rows(1000, 1001)).has_value());
  for (int64_t r = kRows - 1; r > 2; r -= 2) a.write(1, rows(r, r + 1));
  missing = a.unwritten(1, rows(0, kRows));
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->region, rows(1, 2));
  a.write(1, rows(1, 2));
  EXPECT_EQ(a.storedBoxes(), 0u);
  EXPECT_FALSE(a.unwritten(1, rows(0, kRows)).has_value());
}

// Column stripes, then a tile: the stripes become boxes and stay exact.
TEST(InitializationAnalysis, StripesThenATileStayExact) {
  InitializationAnalysis a;
  a.declareBuffer(1, named("y"), rows(0, 8), false);
  Box left = rows(0, 8), tile = rows(0, 4);
  left.hi[1] = 4;
  tile.lo[1] = 4;
  a.write(1, left);
  a.write(1, tile);
  auto missing = a.unwritten(1, rows(0, 8));
  ASSERT_TRUE(missing.has_value());
  Box expected = rows(4, 8);
  expected.lo[1] = 4;
  EXPECT_EQ(missing->region, expected);
  a.write(1, expected);
  EXPECT_EQ(a.storedBoxes(), 0u);
}

// Tiles that never coalesce (a checkerboard) cost at most the bound, and
// past it nothing is claimed: every read and the buffer as an output are
// "could not prove", until a write of the whole buffer proves them again.
TEST(InitializationAnalysis, DisjointTilesStayBoundedAndPastTheBoundAreNotProved) {
  InitializationAnalysis a;
  constexpr int64_t kSide = 128;  // 128 x 128 tiles, half of them written
  a.declareBuffer(1, named("y"), rows(0, kSide, kSide), false);
  for (int64_t i = 0; i < kSide; ++i)
    for (int64_t j = i % 2; j < kSide; j += 2) {
      Box tile = rows(i, i + 1, j + 1);
      tile.lo[1] = j;
      a.write(1, tile);
      ASSERT_LE(a.storedBoxes(), InitializationAnalysis::kMaxBoxesPerBuffer);
    }
  Box written = rows(0, 1, 2);  // a tile the loop wrote, [0:1, 1:2]
  written.lo[1] = 1;
  for (const Box& region : {rows(0, kSide, kSide), written}) {
    Coverage c = a.coverage(1, region);
    EXPECT_FALSE(c.proved()) << region.toString();
    EXPECT_FALSE(c.unwritten.has_value()) << region.toString();
    EXPECT_THAT(c.unproven, HasSubstr("more than 1024 separate pieces"));
  }
  a.read(1, rows(0, 1, kSide), AccessSite{OpKind::Copy, SourceLoc{9, 3}}, 0);
  EXPECT_TRUE(a.reads().empty());
  ASSERT_EQ(a.unprovenReads().size(), 1u);
  EXPECT_EQ(a.unprovenReads()[0].reader.loc, (SourceLoc{9, 3}));
  EXPECT_EQ(a.unprovenReads()[0].allocation.name, "y");
  a.write(1, rows(0, kSide, kSide));
  EXPECT_TRUE(a.coverage(1, rows(0, kSide, kSide)).proved());
}

// A read that the written boxes cut into more pieces than the bound is not
// proved either: below the box bound, 1000 one-element tiles scattered in a
// 4-d buffer cut the whole of it into more than 4096 pieces.
TEST(InitializationAnalysis, AReadCutIntoTooManyPiecesIsNotProved) {
  constexpr int64_t kRank = 4, kSide = 1000;
  Box whole;
  whole.rank = kRank;
  for (size_t d = 0; d < kRank; ++d) whole.hi[d] = kSide;
  InitializationAnalysis a;
  a.declareBuffer(1, named("y"), whole, false);
  uint64_t state = 12345;  // a fixed linear congruential sequence: the same tiles everywhere
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % (kSide - 2)) + 1;
  };
  for (int t = 0; t < 1000; ++t) {
    Box tile;
    tile.rank = kRank;
    for (size_t d = 0; d < kRank; ++d) {
      tile.lo[d] = next();
      tile.hi[d] = tile.lo[d] + 1;
    }
    a.write(1, tile);
  }
  ASSERT_LE(a.storedBoxes(), InitializationAnalysis::kMaxBoxesPerBuffer);
  Coverage c = a.coverage(1, whole);
  EXPECT_FALSE(c.proved());
  EXPECT_THAT(c.unproven, HasSubstr("more than 4096 pieces"));
  // A smaller read stays exact: the first slab's gap is found.
  Box slab = whole;
  slab.hi[0] = 1;
  Coverage small = a.coverage(1, slab);
  ASSERT_TRUE(small.unwritten.has_value());
  EXPECT_TRUE(small.unproven.empty());
}

TEST(Box, SubtractLeavesTheDisjointRest) {
  Box a = rows(0, 8), b;
  b.rank = 2;
  b.lo = {2, 2};
  b.hi = {4, 6};
  std::vector<Box> rest;
  subtract(a, b, rest);
  int64_t elements = 0;
  for (const Box& r : rest) {
    EXPECT_FALSE(overlaps(r, b));
    EXPECT_TRUE(a.contains(r));
    elements += (r.hi[0] - r.lo[0]) * (r.hi[1] - r.lo[1]);
    for (const Box& other : rest) {
      if (&other != &r) {
        EXPECT_FALSE(overlaps(r, other));
      }
    }
  }
  EXPECT_EQ(elements, 64 - 8);
  rest.clear();
  subtract(b, a, rest);
  EXPECT_TRUE(rest.empty());
}

TEST(Box, UnionOnlyWhenItIsOneBox) {
  EXPECT_EQ(unionBox(rows(0, 4), rows(4, 8)), rows(0, 8));
  EXPECT_EQ(unionBox(rows(4, 8), rows(0, 6)), rows(0, 8));
  EXPECT_FALSE(unionBox(rows(0, 4), rows(5, 8)).has_value());     // a gap
  EXPECT_FALSE(unionBox(rows(0, 4), rows(4, 8, 4)).has_value());  // widths differ
  EXPECT_EQ(unionBox(rows(0, 8), rows(2, 4, 4)), rows(0, 8));     // containment
}

}  // namespace
}  // namespace hostir
