// Programs through the public API: parsing from text and files, errors with
// their positions, passes, check and simulate.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "error_of.h"
#include "hostir/hostir.h"
#include "test_files.h"

namespace {

using hostir::api::Error;
using hostir::api::ErrorKind;
using hostir::api::Program;
using hostir::api::testing::errorOf;

const std::string kExamples = std::string(HOSTIR_SOURCE_DIR) + "/examples/";

TEST(ApiProgram, ParsesTextAndFilesAlike) {
  Program fromFile = Program::fromFile(kExamples + "row_parallel_linear.hir");
  std::ifstream in(kExamples + "row_parallel_linear.hir");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Program fromText = Program::parse(text);
  EXPECT_EQ(fromFile, fromText);
  EXPECT_EQ(Program::parse(kExamples + "row_parallel_linear.hir"), fromFile);
  EXPECT_EQ(fromFile.name(), "row_parallel_linear");
  EXPECT_EQ(fromFile.sourceName(), kExamples + "row_parallel_linear.hir");
  EXPECT_EQ(fromText.sourceName(), "<string>");
  EXPECT_EQ(fromFile.sourceText(), text);
  EXPECT_EQ(fromText.sourceText(), text);
  EXPECT_EQ(Program::fromText(fromFile.print()), fromFile);
  EXPECT_EQ(fromFile.defaultParams(), (hostir::api::Params{{"K", 512}, {"M", 256}, {"N", 128}, {"S", 4}}));
}

TEST(ApiProgram, TensorsAreBoundToParams) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  auto tensors = p.tensors({{"M", 8}, {"K", 6}}, 2);
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "x");
  EXPECT_TRUE(tensors[0].input);
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(tensors[0].shardAxis, 1);
  EXPECT_EQ(tensors[2].name, "y");
  EXPECT_FALSE(tensors[2].input);
  EXPECT_EQ(tensors[2].shape, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(tensors[2].dtype, hostir::api::DType::F32);
}

TEST(ApiProgram, SyntaxErrorCarriesItsPosition) {
  Error e = errorOf([] { Program::fromText("program p() {\n  x = allocate(f32[4]\n}\n", "bad.hir"); });
  EXPECT_EQ(e.kind(), ErrorKind::Program);
  EXPECT_EQ(e.file(), "bad.hir");
  EXPECT_EQ(e.line(), 3);
  EXPECT_GT(e.column(), 0);
  EXPECT_NE(std::string(e.what()).find("bad.hir:3:"), std::string::npos) << e.what();
}

TEST(ApiProgram, UnknownNameIsAProgramErrorAtItsUse) {
  Error e = errorOf([] { Program::fromText("program p() {\n  wait(h)\n}\n"); });
  EXPECT_EQ(e.kind(), ErrorKind::Program);
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 8);
  EXPECT_NE(e.message().find("'h'"), std::string::npos) << e.message();
}

TEST(ApiProgram, MissingFileHasNoPosition) {
  Error e = errorOf([] { Program::fromFile("/nonexistent/p.hir"); });
  EXPECT_EQ(e.kind(), ErrorKind::Program);
  EXPECT_EQ(e.line(), 0);
  EXPECT_NE(std::string(e.what()).find("/nonexistent/p.hir"), std::string::npos);
}

TEST(ApiProgram, UnknownParameterAndBadCountsAreRefused) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  // A value for a parameter the program lacks is the caller's mistake.
  EXPECT_EQ(errorOf([&] { hostir::api::check(p, {{{"Q", 1}}}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] { hostir::api::check(p, {{}, 0}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] { hostir::api::check(p, {{}, 1, 0}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(p, {"no-such-pass"}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(p, {"overlap"}); }).kind(), ErrorKind::Usage);
}

TEST(ApiProgram, CheckReportsARaceWithBothPositions) {
  const std::string racy = hostir::testing::testProgramText("api/programs/racy_sync_after_the_race.hir");
  Program p = Program::fromText(racy, "racy.hir");
  Error e = errorOf([&] { hostir::api::check(p); });
  EXPECT_EQ(e.kind(), ErrorKind::Check);
  std::string text = e.what();
  EXPECT_NE(text.find("race"), std::string::npos) << text;
  EXPECT_NE(text.find("racy.hir:7:"), std::string::npos) << text;
  EXPECT_NE(text.find("racy.hir:9:"), std::string::npos) << text;
  hostir::api::check(Program::fromFile(kExamples + "row_parallel_linear.hir"), {{}, 2});

  // Proved for another team: every finding carries the note that says so.
  std::string claimed = racy;
  claimed.replace(claimed.find("racy() {"), 8, "racy() proved_for(world = 2, streams = 4) {");
  Error other = errorOf([&] { hostir::api::check(Program::fromText(claimed, "racy.hir")); });
  ASSERT_FALSE(other.findings().empty()) << other.what();
  for (const hostir::api::Finding& finding : other.findings()) {
    bool noted = false;
    for (const hostir::api::FindingNote& note : finding.notes)
      noted = noted || note.message.find("proved for 2 ranks and 4 worker streams") != std::string::npos;
    EXPECT_TRUE(noted) << finding.message;
  }
}

TEST(ApiProgram, AssignStreamsRewritesAndKeepsTheSource) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  Program rewritten = hostir::api::applyPasses(p, {"assign-streams"}, {{}, 2});
  EXPECT_FALSE(rewritten == p);
  EXPECT_NE(rewritten.print().find("stream(i)"), std::string::npos) << rewritten.print();
  EXPECT_EQ(rewritten.sourceName(), p.sourceName());
  EXPECT_EQ(rewritten.sourceText(), p.sourceText());  // its positions point into it
  hostir::api::check(rewritten, {{}, 2});
  std::vector<std::string> remarks;
  hostir::api::applyPasses(p, {"assign-streams"}, {{}, 2}, &remarks);
  EXPECT_FALSE(remarks.empty());
}

TEST(ApiProgram, SimulateGivesTheFiguresOfTheCommandLine) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  // Large enough that the model predicts a gain from the chunked overlap (at
  // the default sizes, per-chunk latency outweighs it).
  const hostir::api::Params big = {{"M", 8192}, {"K", 8192}, {"N", 8192}};
  hostir::api::Prediction serial = hostir::api::simulate(p, "h100-nvlink", {big, 2});
  EXPECT_GT(serial.medianMs, 0);
  EXPECT_GT(serial.computeMs, 0);
  EXPECT_GT(serial.commMs, 0);
  EXPECT_NEAR(serial.exposedCommMs, serial.medianMs - serial.computeMs, 1e-9);
  hostir::api::Prediction overlapped = hostir::api::simulate(p, "h100-nvlink", {big, 2, 4, {"assign-streams"}});
  EXPECT_LT(overlapped.medianMs, serial.medianMs);
  EXPECT_LT(overlapped.exposedCommMs, serial.exposedCommMs);
  EXPECT_EQ(errorOf([&] { hostir::api::simulate(p, "no-such-machine"); }).kind(), ErrorKind::Program);
}

}  // namespace

namespace {

// Misuses of the C++ API are Error kind Usage, never a crash or a silent
// reading of something else.
TEST(ApiMisuse, ANullProgramIsRefusedWhereItIsMade) {
  EXPECT_EQ(errorOf([] { Program p(nullptr); }).kind(), ErrorKind::Usage);
}

// A moved-from Program is still the program: moving shares it.
TEST(ApiMisuse, AMovedFromProgramIsStillTheProgram) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  const std::string text = p.print();
  Program q = std::move(p);
  Program r = Program::fromText("program other() {\n}\n");
  r = std::move(q);
  EXPECT_EQ(p.name(), "row_parallel_linear");  // NOLINT(bugprone-use-after-move): the point of the test
  EXPECT_EQ(p.print(), text);                  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(q.print(), text);                  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(p == r);                         // NOLINT(bugprone-use-after-move)
}

// Shapes whose counts are negative or past int64 are usage errors, not a
// zero-byte array, a wrapped count or a standard-library exception.
TEST(ApiMisuse, HostShapesThatCannotBeCountedAreRefused) {
  using hostir::api::DType;
  using hostir::api::HostArray;
  using hostir::api::HostBuffer;
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(errorOf([&] { HostArray::zeros(DType::F32, {4, -1}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] { HostArray::zeros(DType::F32, {big, big}); }).kind(), ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] {
              (void)HostBuffer{DType::F64, {int64_t{1} << 32, int64_t{1} << 32}}.elements();
            }).kind(),
            ErrorKind::Usage);
  EXPECT_EQ(errorOf([&] {
              (void)HostBuffer{DType::F64, {int64_t{1} << 31, int64_t{1} << 31}}.bytes();
            }).kind(),
            ErrorKind::Usage);
  EXPECT_EQ((HostBuffer{DType::F64, {big, big, 0}}.bytes()), 0);
  EXPECT_EQ(HostArray::zeros(DType::BF16, {3, 5}).data.size(), 30u);
}

TEST(ApiMisuse, ADTypeOutsideTheEnumIsRefused) {
  const auto notADType = static_cast<hostir::api::DType>(77);
  EXPECT_EQ(errorOf([&] { hostir::api::elementBytes(notADType); }).kind(), ErrorKind::Usage);
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  hostir::api::RunOptions options;
  options.params = {{"M", 4}, {"K", 4}, {"N", 4}, {"S", 2}};
  std::vector<float> x(16);
  Error e = errorOf([&] { hostir::api::run(p, {{"x", {notADType, {4, 4}, x.data()}}}, {}, options); });
  EXPECT_EQ(e.kind(), ErrorKind::Usage);
  EXPECT_NE(e.message().find("77 is not a DType"), std::string::npos) << e.message();
}

TEST(ApiMisuse, AMinimumGainOutsideZeroToOneAndAnEmptyPassAreRefused) {
  Program p = Program::fromFile(kExamples + "row_parallel_linear.hir");
  for (double gain : {-1.0, 2.0, std::nan(""), double(INFINITY)}) {
    SCOPED_TRACE(gain);
    hostir::api::PassOptions passes;
    passes.minimumGain = gain;
    EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(p, {"assign-streams"}, passes); }).kind(), ErrorKind::Usage);
    hostir::api::SimulateOptions simulate;
    simulate.minimumGain = gain;
    EXPECT_EQ(errorOf([&] { hostir::api::simulate(p, "h100-nvlink", simulate); }).kind(), ErrorKind::Usage);
    hostir::api::RunOptions run;
    run.minimumGain = gain;
    EXPECT_EQ(errorOf([&] { hostir::api::run(p, {}, {}, run); }).kind(), ErrorKind::Usage);
  }
  EXPECT_EQ(errorOf([&] { hostir::api::applyPasses(p, {""}); }).kind(), ErrorKind::Usage);
}

}  // namespace

namespace {

// Top-level loops, each over S chunks of its own tensors (independent
// iterations) unless listed in `accumulating` (every iteration adds into
// the whole output: not independent).
std::string loops(int count, const std::vector<int>& accumulating) {
  std::string text = "program many(M = 16, S = 4) {\n";
  for (int i = 0; i < count; ++i) text += fmt::format("  input x{0} : f32[M, M]\n  output y{0} : f32[M, M]\n", i);
  for (int i = 0; i < count; ++i) {
    bool racy = std::find(accumulating.begin(), accumulating.end(), i) != accumulating.end();
    text += fmt::format("  y{} = allocate(f32[M, M], zero=true)\n  for j in range(S) {{\n", i);
    text += racy ? fmt::format("    add(x{0}, y{0}, out=y{0})\n", i)
                 : fmt::format(
                       "    xj = shard_by_stream(x{0}, axis=0, index=j, chunks=S)\n"
                       "    yj = shard_by_stream(y{0}, axis=0, index=j, chunks=S)\n"
                       "    copy(xj, out=yj)\n",
                       i);
    text += "  }\n";
  }
  return text + "}\n";
}

size_t count(const std::vector<std::string>& remarks, const std::string& what) {
  return static_cast<size_t>(std::count_if(remarks.begin(), remarks.end(),
                                           [&](const std::string& r) { return r.find(what) != std::string::npos; }));
}

// assign-streams proves many loops at once when it can, and loop by loop
// when one of them is not independent: the same rewrites and remarks.
TEST(ApiAssignStreams, ManyLoopsAreRewrittenAloneOrTogetherAlike) {
  std::vector<std::string> together;
  Program all = hostir::api::applyPasses(Program::fromText(loops(6, {})), {"assign-streams"}, {}, &together);
  EXPECT_EQ(count(together, "runs on stream("), 6u);
  hostir::api::check(all);

  std::vector<std::string> alone;
  Program mixed = hostir::api::applyPasses(Program::fromText(loops(6, {2, 4})), {"assign-streams"}, {}, &alone);
  EXPECT_EQ(count(alone, "runs on stream("), 4u);
  EXPECT_EQ(count(alone, "its iterations are not independent"), 2u);
  hostir::api::check(mixed);
}

}  // namespace
