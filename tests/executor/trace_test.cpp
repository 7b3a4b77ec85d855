// --trace: the timeline of the last run. Checked against what the program
// must have issued (counts, tracks, sizes and FLOPs computed here from the
// shapes), and for the invariants a stream guarantees (its slices never
// overlap), on in-process teams and through the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "executor/trace.h"
#include "harness.h"

namespace hostir::reftest {
namespace {

using ::testing::HasSubstr;

struct RowParallelShape {
  int64_t M = 64, K = 32, N = 16, S = 4;
};

Result<RunResult> tracedRowParallel(const RowParallelShape& shape, int64_t world, int64_t streams, int repeat) {
  Program program = assignStreams(loadExample("row_parallel_linear"));
  Params params = bindAll(program, {{"M", shape.M}, {"K", shape.K}, {"N", shape.N}, {"S", shape.S}});
  RunRequest request = makeRequest(program, params, 7, streams);
  request.trace = true;
  request.warmup = 1;
  request.repeat = repeat;
  auto result = runWithin(request, world);
  if (!result) throw std::runtime_error("the traced run did not finish");
  return *result;
}

std::vector<TraceSlice> named(const std::vector<TraceSlice>& slices, const std::string& name, int track) {
  std::vector<TraceSlice> out;
  for (const TraceSlice& s : slices)
    if (s.name == name && (track == kHostTrack ? s.track == kHostTrack : s.track != kHostTrack)) out.push_back(s);
  return out;
}

TEST(Trace, EveryRankRecordsEveryChunksLinearAndAllreduceOnItsStream) {
  const RowParallelShape shape;
  const int64_t world = 2, streams = 2;
  auto result = tracedRowParallel(shape, world, streams, 3);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->trace.size(), static_cast<size_t>(world));
  const double rows = static_cast<double>(shape.M / shape.S), localK = static_cast<double>(shape.K / world);
  for (size_t rank = 0; rank < result->trace.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& slices = result->trace[rank];
    // Only the last run is traced: one linear and one allreduce per chunk.
    auto linears = named(slices, "linear", /*track=*/0);
    auto allreduces = named(slices, "allreduce", 0);
    ASSERT_EQ(linears.size(), static_cast<size_t>(shape.S));
    ASSERT_EQ(allreduces.size(), static_cast<size_t>(shape.S));
    EXPECT_EQ(named(slices, "linear", kHostTrack).size(), static_cast<size_t>(shape.S));
    std::map<int, int> linearsPerTrack;
    for (const TraceSlice& s : linears) {
      EXPECT_EQ(s.category, "compute");
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * rows * static_cast<double>(shape.N) * localK);
      EXPECT_EQ(s.bytes, static_cast<int64_t>((rows * localK + shape.N * localK + rows * shape.N) * 4));
      EXPECT_EQ(s.loc, "11:5");
      ++linearsPerTrack[s.track];
    }
    // assign-streams: chunk i on stream(i mod streams).
    for (int track = 0; track < streams; ++track) EXPECT_EQ(linearsPerTrack[track], shape.S / streams);
    for (const TraceSlice& s : allreduces) {
      EXPECT_EQ(s.category, "communication");
      EXPECT_EQ(s.bytes, static_cast<int64_t>(rows * shape.N * 4));
    }
    // A stream runs its work in order: its slices never overlap, and every
    // slice lies after the shared origin.
    std::map<int, std::vector<TraceSlice>> byTrack;
    for (const TraceSlice& s : slices) {
      EXPECT_GE(s.startMicros, 0.0);
      EXPECT_GE(s.durationMicros, 0.0);
      if (s.track != kHostTrack) byTrack[s.track].push_back(s);
    }
    for (auto& [track, list] : byTrack) {
      std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.startMicros < b.startMicros; });
      for (size_t i = 1; i < list.size(); ++i)
        EXPECT_LE(list[i - 1].startMicros + list[i - 1].durationMicros, list[i].startMicros + 1e-3)
            << "track " << track;
    }
  }
}

TEST(Trace, IsEmptyWithoutTheFlag) {
  Program program = loadExample("row_parallel_linear");
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 2);
  auto result = runWithin(request, 2);
  ASSERT_TRUE(result && *result);
  EXPECT_TRUE(result->value().trace.empty());
}

TEST(Trace, ChromeFormatHasAProcessPerRankAndAThreadPerTrack) {
  std::vector<std::vector<TraceSlice>> perRank(2);
  perRank[0].push_back(TraceSlice{0, "linear", "compute", "3:4", 10, 5, 100, 2000});
  perRank[0].push_back(TraceSlice{kHostTrack, "linear", "host", "3:4", 9, 0.5, 0, 0});
  perRank[1].push_back(TraceSlice{kMainStreamTrack, "allreduce", "communication", "", 12, 7, 64, 0});
  auto trace = nlohmann::json::parse(chromeTraceJson(perRank, "p.hir"));
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, std::string> processes;
  std::vector<nlohmann::json> slices;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") processes[e.at("pid")] = e.at("args").at("name");
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      threads[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    if (e.at("ph") == "X") slices.push_back(e);
  }
  EXPECT_EQ(processes, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  EXPECT_EQ(threads, (std::map<std::pair<int, int>, std::string>{
                         {{0, 0}, "host"}, {{0, 2}, "stream 0"}, {{1, 1}, "main stream"}}));
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].at("args").at("loc"), "p.hir:3:4");
  EXPECT_EQ(slices[0].at("args").at("flops"), 2000);
  EXPECT_EQ(slices[0].at("dur"), 5);
  EXPECT_FALSE(slices[2].at("args").contains("loc"));
  EXPECT_EQ(slices[2].at("args").at("bytes"), 64);
}

TEST(Trace, CliWritesATraceThatParses) {
  auto dir = std::filesystem::temp_directory_path() / ("hostir_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "t.json").string();
  std::string command = std::string(HOSTIR_BINARY) + " run " + examplePath("row_parallel_linear") +
                        " --ranks 2 --passes assign-streams --repeat 2 --trace " + path + " > " +
                        (dir / "out").string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << readText((dir / "out").string());
  auto trace = nlohmann::json::parse(readText(path));
  int linears = 0;
  std::set<int> ranks;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "X" && e.at("name") == "linear" && e.at("cat") == "compute") {
      ++linears;
      ranks.insert(e.at("pid").get<int>());
      EXPECT_THAT(e.at("args").at("loc").get<std::string>(), HasSubstr("row_parallel_linear.hir:11:5"));
    }
  EXPECT_EQ(linears, 2 * 4);  // S = 4 chunks on each of 2 ranks
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  std::filesystem::remove_all(dir);
}

TEST(Trace, CliRejectsAnUnwritablePath) {
  std::string command = std::string(HOSTIR_BINARY) + " run " + examplePath("row_parallel_linear") +
                        " --ranks 2 --trace /nonexistent-dir/t.json >/dev/null 2>&1";
  int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

}  // namespace
}  // namespace hostir::reftest
