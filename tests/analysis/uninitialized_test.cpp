// Uninitialized reads: a read of an element that nothing has written, and an
// output not fully written when the program ends. Each kind of read (kernel
// input, bias, communication input, in-place allreduce, broadcast on its
// root, partial writes, views, a chunked loop that misses a chunk) is
// expected with its statement, tensor, region and rank, and nothing else;
// fully written programs, every example and every golden program pass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/initialization_analysis.h"
#include "analysis/program_check.h"
#include "program_check_util.h"
#include "test_util.h"

namespace hostir {
namespace {

using ::testing::HasSubstr;

struct ExpectedRead {
  uint32_t line;
  std::string buffer;
  std::string region;
  int64_t rank;
  friend auto operator<=>(const ExpectedRead&, const ExpectedRead&) = default;
};

struct ExpectedOutput {
  std::string output;
  std::string region;
  friend auto operator<=>(const ExpectedOutput&, const ExpectedOutput&) = default;
};

struct UninitCase {
  const char* name;
  const char* text;  // line 1 is the `program` line
  int64_t world;
  std::vector<ExpectedRead> reads;
  std::vector<ExpectedOutput> outputs;
};

const std::vector<UninitCase>& uninitCases() {
  static const std::vector<UninitCase> kCases = {
      {"KernelInput",
       R"hir(program kernel_input(M = 64, K = 32, N = 128) {
  input  w : f32[N, K]
  output y : f32[M, N]
  a = allocate(f32[M, K])
  y = allocate(f32[M, N])
  linear(a, w, out=y)
}
)hir",
       1,
       {{6, "a", "[0:64, 0:32]", 0}},
       {}},

      {"Bias",
       R"hir(program bias(M = 8, K = 4, N = 16) {
  input  x : f32[M, K]
  input  w : f32[N, K]
  output y : f32[M, N]
  b = allocate(f32[N])
  y = linear(x, w, b)
}
)hir",
       1,
       {{6, "b", "[0:16]", 0}},
       {}},

      {"SecondOperandOfAdd",
       R"hir(program add_operand(M = 8, N = 8) {
  input  x : f32[M, N]
  output z : f32[M, N]
  t = allocate(f32[M, N])
  z = add(x, t)
}
)hir",
       1,
       {{5, "t", "[0:8, 0:8]", 0}},
       {}},

      {"CommunicationInput",
       R"hir(program comm_input(N = 64) {
  input  x : f32[N]
  output o : f32[N]
  t = allocate(f32[N])
  o = allocate(f32[N])
  c = allreduce(t, out=o, op=sum)
  wait(c)
}
)hir",
       2,
       {{6, "t", "[0:64]", 0}},
       {}},

      // sendrecv reads its src: sending what nothing wrote is a read of it.
      {"SendRecvOfAnUnwrittenTensor",
       R"hir(program ring_unwritten(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  t = allocate(f32[N])
  y = allocate(f32[N])
  sendrecv(t, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
}
)hir",
       2,
       {{6, "t", "[0:64]", 0}},
       {}},

      {"InPlaceAllreduce",
       R"hir(program in_place(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  c = allreduce(y, op=sum)
  wait(c)
}
)hir",
       2,
       {{5, "y", "[0:64]", 0}},
       {}},

      // Only the root reads what it broadcasts; the program never names
      // `rank`, so one issue stands for every rank and the root is named.
      {"BroadcastOnItsRoot",
       R"hir(program broadcast_root(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  c = broadcast(y, root=1)
  wait(c)
}
)hir",
       2,
       {{5, "y", "[0:64]", 1}},
       {}},

      {"WrittenOnRankZeroOnlyThenReducedEverywhere",
       R"hir(program one_writer(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  for i in range(1 - min(rank, 1)) {
    copy(x, out=y)
  }
  c = allreduce(y, op=sum)
  wait(c)
}
)hir",
       3,
       {{8, "y", "[0:64]", 1}},
       {}},

      {"PartialWrite",
       R"hir(program partial(M = 64, N = 128, S = 4) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S - 1) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
  z = add(y, x)
}
)hir",
       1,
       {{10, "y", "[48:64, 0:128]", 0}},
       {}},

      {"AViewOfColumns",
       R"hir(program column_view(M = 8, N = 4) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  z = allocate(f32[M, N], zero=true)
  xl = shard_by_stream(x, axis=1, index=0, chunks=2)
  yl = shard_by_stream(y, axis=1, index=0, chunks=2)
  copy(xl, out=yl)
  yr = shard_by_stream(y, axis=1, index=1, chunks=2)
  zr = shard_by_stream(z, axis=1, index=1, chunks=2)
  copy(yr, out=zr)
}
)hir",
       1,
       {{11, "y", "[0:8, 2:4]", 0}},
       {}},

      {"DiagonalTilesLeaveTheOtherTwo",
       R"hir(program diagonal(M = 8, N = 8) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  top = shard_by_stream(y, axis=0, index=0, chunks=2)
  bottom = shard_by_stream(y, axis=0, index=1, chunks=2)
  xt = shard_by_stream(x, axis=0, index=0, chunks=2)
  xb = shard_by_stream(x, axis=0, index=1, chunks=2)
  tl = shard_by_stream(top, axis=1, index=0, chunks=2)
  br = shard_by_stream(bottom, axis=1, index=1, chunks=2)
  xtl = shard_by_stream(xt, axis=1, index=0, chunks=2)
  xbr = shard_by_stream(xb, axis=1, index=1, chunks=2)
  copy(xtl, out=tl)
  copy(xbr, out=br)
  z = add(y, x)
}
)hir",
       1,
       {{15, "y", "[4:8, 0:4]", 0}},
       {}},

      {"AllgatherOutputReadBeforeTheAllgather",
       R"hir(program gather_early(N = 8) {
  input  x : f32[N]
  output z : f32[N * world]
  o = allocate(f32[N * world])
  z = copy(o)
  c = allgather(x, out=o, axis=0)
  wait(c)
}
)hir",
       2,
       {{5, "o", "[0:16]", 0}},
       {}},

      {"ALoopRepeatingTheReadReportsItOnce",
       R"hir(program repeated(N = 8, S = 10) {
  input  x : f32[N]
  output z : f32[N]
  t = allocate(f32[N])
  z = allocate(f32[N], zero=true)
  for i in range(S) {
    add(t, z, out=z)
  }
}
)hir",
       1,
       {{7, "t", "[0:8]", 0}},
       {}},

      {"OutputNeverWritten",
       R"hir(program never_written(M = 64, N = 128) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
}
)hir",
       2,
       {},
       {{"y", "[0:64, 0:128]"}}},

      {"OutputChunkedLoopMissesTheLastChunk",
       R"hir(program misses_last(M = 64, N = 128, S = 4) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S - 1) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
}
)hir",
       2,
       {},
       {{"y", "[48:64, 0:128]"}}},

      {"OutputIsAViewPartlyWritten",
       R"hir(program view_output(M = 8, N = 8) {
  input  x : f32[M, N]
  output y : f32[4, N]
  big = allocate(f32[M, N])
  y = shard_by_stream(big, axis=0, index=1, chunks=2)
  half = shard_by_stream(y, axis=1, index=0, chunks=2)
  xh = shard_by_stream(x, axis=0, index=0, chunks=2)
  xq = shard_by_stream(xh, axis=1, index=0, chunks=2)
  copy(xq, out=half)
}
)hir",
       1,
       {},
       {{"y", "[4:8, 4:8]"}}},
  };
  return kCases;
}

void PrintTo(const UninitCase& c, std::ostream* os) { *os << c.name; }

class UninitializedReads : public ::testing::TestWithParam<UninitCase> {};

TEST_P(UninitializedReads, ReportsExactlyTheExpectedReadsAndOutputs) {
  const UninitCase& c = GetParam();
  ProgramCheck check = testing::checkText(c.text, c.world);
  std::string text = formatProgramCheck(check, "u.hir", c.text);
  SCOPED_TRACE(text);
  EXPECT_FALSE(check.ok());
  EXPECT_TRUE(check.races.empty());
  EXPECT_FALSE(check.communicationMismatch.has_value());

  std::set<ExpectedRead> reads;
  for (const UninitializedRead& r : check.uninitializedReads) {
    EXPECT_FALSE(r.reader.write);
    reads.insert({r.reader.loc.line, r.unwritten.allocation.name, r.unwritten.region.toString(), r.rank});
  }
  EXPECT_EQ(check.uninitializedReads.size(), reads.size());
  EXPECT_EQ(reads, std::set<ExpectedRead>(c.reads.begin(), c.reads.end()));

  std::set<ExpectedOutput> outputs;
  for (const UnwrittenOutputReport& r : check.unwrittenOutputs) {
    outputs.insert({r.output, r.unwritten.region.toString()});
    EXPECT_TRUE(r.declaredAt.valid());
  }
  EXPECT_EQ(outputs, std::set<ExpectedOutput>(c.outputs.begin(), c.outputs.end()));

  // The text positions every finding and quotes the region.
  for (const ExpectedRead& r : c.reads) {
    EXPECT_THAT(text, HasSubstr(fmt::format("u.hir:{}:", r.line)));
    EXPECT_THAT(text,
                HasSubstr(fmt::format("reads '{}'{} before anything writes it (rank {})", r.buffer, r.region, r.rank)));
  }
  for (const ExpectedOutput& o : c.outputs)
    EXPECT_THAT(text, HasSubstr(fmt::format("output '{}' is not fully written when the program ends", o.output)));
}

INSTANTIATE_TEST_SUITE_P(Table, UninitializedReads, ::testing::ValuesIn(uninitCases()),
                         [](const ::testing::TestParamInfo<UninitCase>& info) { return info.param.name; });

TEST(UninitializedReport, NamesTheReaderItsStreamTheRegionAndTheAllocation) {
  constexpr const char* kText = R"hir(program p(M = 64, K = 128, N = 32) {
  input  w : f32[N, K]
  output z : f32[M, N]
  y = allocate(f32[M, K])
  z = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  linear(y, w, out=z)
  set_current_stream(main)
  synchronize(stream(0))
}
)hir";
  ProgramCheck check = testing::checkText(kText, 1);
  EXPECT_EQ(formatProgramCheck(check, "p.hir", kText),
            "p.hir:9:3: error: linear on stream(0) reads 'y'[0:64, 0:128] before anything writes it (rank 0)\n"
            "  linear(y, w, out=z)\n"
            "  ^\n"
            "p.hir:4:7: note: 'y' is allocated here, uninitialized (allocate without zero=true)\n"
            "  y = allocate(f32[M, K])\n"
            "      ^\n");
  EXPECT_EQ(summarizeFindings(check), "1 uninitialized read");
}

TEST(UninitializedReport, AnUnwrittenOutputIsPositionedAtItsDeclaration) {
  auto found = std::find_if(uninitCases().begin(), uninitCases().end(), [](const UninitCase& c) {
    return std::string(c.name) == "OutputChunkedLoopMissesTheLastChunk";
  });
  ASSERT_NE(found, uninitCases().end());
  const UninitCase& c = *found;
  ProgramCheck check = testing::checkText(c.text, 1);
  EXPECT_EQ(formatProgramCheck(check, "p.hir", c.text),
            "p.hir:3:10: error: output 'y' is not fully written when the program ends: nothing writes "
            "'y'[48:64, 0:128] (rank 0)\n"
            "  output y : f32[M, N]\n"
            "         ^\n"
            "p.hir:4:7: note: 'y' is allocated here, uninitialized (allocate without zero=true)\n"
            "  y = allocate(f32[M, N])\n"
            "      ^\n");
  EXPECT_EQ(summarizeFindings(check), "1 unwritten output");
}

// ---------------------------------------------------------------------------
// Fully written programs.

struct WrittenCase {
  const char* name;
  const char* text;
  int64_t world;
};

const std::vector<WrittenCase>& writtenCases() {
  static const std::vector<WrittenCase> kCases = {
      {"ZeroedThenRead", R"hir(program zeroed(N = 8) {
  input  x : f32[N]
  output z : f32[N]
  t = allocate(f32[N], zero=true)
  z = add(t, x)
}
)hir",
       1},
      {"ChunksInReverseOrder", R"hir(program reverse(M = 64, N = 8, S = 8) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S) {
    xi = shard_by_stream(x, axis=0, index=S - 1 - i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=S - 1 - i, chunks=S)
    copy(xi, out=yi)
  }
  z = add(y, x)
}
)hir",
       1},
      {"EvenChunksThenOddChunks", R"hir(program even_odd(M = 64, N = 8, H = 8) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(H) {
    yi = shard_by_stream(y, axis=0, index=2 * i, chunks=2 * H)
    xi = shard_by_stream(x, axis=0, index=2 * i, chunks=2 * H)
    copy(xi, out=yi)
  }
  for i in range(H) {
    yi2 = shard_by_stream(y, axis=0, index=2 * i + 1, chunks=2 * H)
    xi2 = shard_by_stream(x, axis=0, index=2 * i + 1, chunks=2 * H)
    copy(xi2, out=yi2)
  }
  z = add(y, x)
}
)hir",
       1},
      {"StridedColumnChunks", R"hir(program columns(M = 8, N = 12, S = 3) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S) {
    xi = shard_by_stream(x, axis=1, index=i, chunks=S)
    yi = shard_by_stream(y, axis=1, index=i, chunks=S)
    copy(xi, out=yi)
  }
  c = allreduce(y, op=sum)
  wait(c)
}
)hir",
       2},
      {"TilesInColumnMajorOrder", R"hir(program tiles(M = 8, N = 8, S = 2, T = 4) {
  input  x : f32[M, N]
  output z : f32[M, N]
  y = allocate(f32[M, N])
  for j in range(T) {
    for i in range(S) {
      yr = shard_by_stream(y, axis=0, index=i, chunks=S)
      xr = shard_by_stream(x, axis=0, index=i, chunks=S)
      yt = shard_by_stream(yr, axis=1, index=j, chunks=T)
      xt = shard_by_stream(xr, axis=1, index=j, chunks=T)
      copy(xt, out=yt)
    }
  }
  z = add(y, x)
}
)hir",
       1},
      {"TheResultOfAnOperation", R"hir(program result(N = 8) {
  input  x : f32[N]
  output z : f32[N]
  t = add(x, x)
  z = add(t, t)
}
)hir",
       1},
      {"ReduceScatterOutputReadAfterwards", R"hir(program scattered(N = 8) {
  input  x : f32[N * world]
  output z : f32[N]
  o = allocate(f32[N])
  c = reduce_scatter(x, out=o, axis=0, op=sum)
  wait(c)
  z = copy(o)
}
)hir",
       2},
      {"WrittenOnAnotherStreamThenJoined", R"hir(program joined(N = 8) {
  input  x : f32[N]
  output z : f32[N]
  y = allocate(f32[N])
  main = get_current_stream()
  set_current_stream(stream(1))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(main)
  synchronize(stream(1))
  z = add(y, x)
}
)hir",
       1},
      {"OutputWrittenByAllgather", R"hir(program gathered(N = 8) {
  input  x : f32[N]
  output y : f32[N * world]
  y = allocate(f32[N * world])
  c = allgather(x, out=y, axis=0)
  wait(c)
}
)hir",
       4},
      // sendrecv writes all of its out (here strided column views), whatever it sends.
      {"SendRecvWritesItsWholeOut", R"hir(program ring_views(N = 8, S = 2) {
  input  x : f32[N, N]
  output y : f32[N, N]
  y = allocate(f32[N, N])
  for i in range(S) {
    xi = shard_by_stream(x, axis=1, index=i, chunks=S)
    yi = shard_by_stream(y, axis=1, index=i, chunks=S)
    sendrecv(xi, out=yi, to=(rank + 1) % world, from=(rank + world - 1) % world)
  }
  z = copy(y)
}
)hir",
       3},
      {"BroadcastWritesEveryNonRoot", R"hir(program root_only(N = 64) {
  input  x : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  for i in range(1 - min(rank, 1)) {
    copy(x, out=y)
  }
  c = broadcast(y, root=0)
  wait(c)
  z = allocate(f32[N])
  add(y, x, out=z)
}
)hir",
       3},
  };
  return kCases;
}

void PrintTo(const WrittenCase& c, std::ostream* os) { *os << c.name; }

class FullyWritten : public ::testing::TestWithParam<WrittenCase> {};

TEST_P(FullyWritten, PassesTheCheck) {
  const WrittenCase& c = GetParam();
  ProgramCheck check = testing::checkText(c.text, c.world);
  EXPECT_TRUE(check.ok()) << formatProgramCheck(check, c.name, c.text);
}

INSTANTIATE_TEST_SUITE_P(Table, FullyWritten, ::testing::ValuesIn(writtenCases()),
                         [](const ::testing::TestParamInfo<WrittenCase>& info) { return info.param.name; });

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

// The reproducer: an output written in 1025 separate pieces, half of it
// never, used to pass `check`. Now it is "could not prove", at the output's
// declaration; 1000 pieces stay exact and name the unwritten row.
TEST(UninitializedReport, AnOutputPastTheLimitIsNotProvedWritten) {
  constexpr const char* kText = R"hir(program pieces(P = 1025) {
  input  x : f32[1, 1]
  output y : f32[2, 2 * P]
  y = allocate(f32[2, 2 * P])
  top = shard_by_stream(y, axis=0, index=0, chunks=2)
  for i in range(P) {
    t = shard_by_stream(top, axis=1, index=2 * i, chunks=2 * P)
    copy(x, out=t)
  }
}
)hir";
  ProgramCheck check = testing::checkText(kText, 1);
  EXPECT_FALSE(check.ok());
  EXPECT_EQ(formatProgramCheck(check, "p.hir", kText),
            "p.hir:3:10: error: could not prove that output 'y' is fully written when the program ends: its writes "
            "form more than 1024 separate pieces, the check's limit (rank 0)\n"
            "  output y : f32[2, 2 * P]\n"
            "         ^\n");
  EXPECT_EQ(summarizeFindings(check), "1 unproven output");
  ProgramCheck below = testing::checkText(kText, 1, 4, {{"P", 1000}});
  ASSERT_EQ(below.unwrittenOutputs.size(), 1u);
  EXPECT_TRUE(below.unprovenOutputs.empty());
  EXPECT_EQ(below.unwrittenOutputs[0].unwritten.region.toString(), "[1:2, 0:2000]");
}

// A read of a buffer past the limit is reported as not proved, with its
// statement and the allocation.
TEST(UninitializedReport, AReadPastTheLimitIsNotProvedInitialized) {
  constexpr const char* kText = R"hir(program pieces(P = 1025) {
  input  x : f32[1, 1]
  output z : f32[2, 2 * P]
  y = allocate(f32[2, 2 * P])
  top = shard_by_stream(y, axis=0, index=0, chunks=2)
  for i in range(P) {
    t = shard_by_stream(top, axis=1, index=2 * i, chunks=2 * P)
    copy(x, out=t)
  }
  z = copy(y)
}
)hir";
  ProgramCheck check = testing::checkText(kText, 1);
  ASSERT_EQ(check.unprovenReads.size(), 1u);
  EXPECT_THAT(formatProgramCheck(check, "p.hir", kText),
              HasSubstr("p.hir:10:7: error: could not prove that copy on the main stream reads only written elements "
                        "of 'y': its writes form more than 1024 separate pieces, the check's limit (rank 0)"));
  EXPECT_EQ(summarizeFindings(check), "1 unproven read");
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
