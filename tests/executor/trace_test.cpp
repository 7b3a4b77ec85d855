// --trace: the timeline of the last run. Checked against what the program
// must have issued (counts, tracks, sizes and FLOPs computed here from the
// shapes), and for the invariants a stream guarantees (its slices never
// overlap), on in-process teams and through the CLI; and for what keeps a
// long run's trace within bounds: events go to disk as they come, the file
// is assembled in chunks, and --trace-limit truncates it visibly.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "api/trace_file.h"
#include "comm/in_process_communicator.h"
#include "harness.h"
#include "runtime/trace.h"
#include "sanitizers.h"
#include "test_util.h"
#include "trace_checks.h"

namespace hostir::reftest {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A directory of its own per test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            fmt::format("hostir_trace_{}_{}_{}", ::getpid(), test->test_suite_name(), test->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

TEST(Trace, EveryRankRecordsEveryChunksLinearAndAllreduceOnItsStream) {
  ScratchDir dir;
  expectRowParallelTimeline(BackendKind::Cpu, /*world=*/2, /*streams=*/2, dir.file("t.json"));
}

TEST(Trace, IsEmptyWithoutTheFlag) {
  Program program = loadExample("row_parallel_linear");
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 2);
  auto result = runWithin(request, 2);
  ASSERT_TRUE(result && *result);
  EXPECT_FALSE(result->value().trace.has_value());
}

// Each rank of an in-process team adds `slices[rank]` to its recorder and
// takes part in writing the team's trace.
Result<TraceSummary> writeRecorded(const std::vector<std::vector<TraceSlice>>& slices, const std::string& path,
                                   size_t chunkBytes, uint64_t limitBytes = kDefaultTraceLimitBytes) {
  const int world = static_cast<int>(slices.size());
  InProcessTeam team(world);
  std::vector<std::optional<Result<TraceSummary>>> results(slices.size());
  auto rankBody = [&](int rank) {
    auto comm = team.communicator(rank);
    TraceRecorder recorder;
    recorder.start(TraceRecorder::Clock::now(), TraceSettings{rank, world, "p.hir", limitBytes});
    for (const TraceSlice& s : slices[static_cast<size_t>(rank)]) recorder.add(s);
    recorder.stop();
    results[static_cast<size_t>(rank)] = writeTeamTrace(*comm, recorder, path, chunkBytes);
  };
  std::vector<std::thread> threads;
  for (int rank = 1; rank < world; ++rank) threads.emplace_back(rankBody, rank);
  rankBody(0);
  for (auto& t : threads) t.join();
  for (int rank = 1; rank < world; ++rank) {
    const auto& other = *results[static_cast<size_t>(rank)];
    EXPECT_TRUE(other) << other.error().message;
  }
  return *results[0];
}

TEST(Trace, ChromeFormatHasAProcessPerRankAndAThreadPerTrack) {
  ScratchDir dir;
  std::vector<std::vector<TraceSlice>> perRank(2);
  perRank[0].push_back(TraceSlice{0, "linear", "compute", "3:4", 10, 5, 100, 2000});
  perRank[0].push_back(TraceSlice{kHostTrack, "linear", "host", "3:4", 9, 0.5, 0, 0});
  perRank[1].push_back(TraceSlice{kMainStreamTrack, "allreduce", "communication", "", 12, 7, 64, 0});
  // Chunks of 16 bytes: every event crosses several.
  auto summary = writeRecorded(perRank, dir.file("t.json"), 16);
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_FALSE(summary->truncated);
  auto trace = parseTrace(dir.file("t.json"));
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
  EXPECT_EQ(slices[2].at("pid"), 1);
  EXPECT_FALSE(slices[2].at("args").contains("loc"));
  EXPECT_EQ(slices[2].at("args").at("bytes"), 64);
  EXPECT_EQ(trace.at("otherData").at("truncated"), false);
}

TEST(Trace, ASourceNameWithQuotesAndControlCharactersStaysValidJson) {
  ScratchDir dir;
  const std::string source = "dir \"q\"\\a\tb.hir";
  InProcessTeam team(1);
  auto comm = team.communicator(0);
  TraceRecorder recorder;
  recorder.start(TraceRecorder::Clock::now(), TraceSettings{0, 1, source, kDefaultTraceLimitBytes});
  recorder.add(TraceSlice{0, "copy", "memory", "2:9", 1, 2, 16, 0});
  recorder.stop();
  auto summary = writeTeamTrace(*comm, recorder, dir.file("t.json"));
  ASSERT_TRUE(summary) << summary.error().message;
  auto slices = slicesPerRank(parseTrace(dir.file("t.json")), 1);
  ASSERT_EQ(slices[0].size(), 1u);
  EXPECT_EQ(slices[0][0].loc, source + ":2:9");
}

TEST(Trace, EveryRanksEventsArriveWholeThroughChunks) {
  ScratchDir dir;
  const int world = 3, perRankSlices = 2000;
  std::vector<std::vector<TraceSlice>> perRank(world);
  for (int rank = 0; rank < world; ++rank)
    for (int i = 0; i < perRankSlices; ++i)
      perRank[rank].push_back(TraceSlice{i % 3 - 1, "add", "compute", "7:3", double(i), 0.25, rank * 1000 + i, 0});
  auto summary = writeRecorded(perRank, dir.file("t.json"), 1000);  // not a multiple of an event
  ASSERT_TRUE(summary) << summary.error().message;
  auto slices = slicesPerRank(parseTrace(dir.file("t.json")), world);
  for (int rank = 0; rank < world; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_EQ(slices[rank].size(), static_cast<size_t>(perRankSlices));
    for (int i = 0; i < perRankSlices; ++i) {
      EXPECT_EQ(slices[rank][i].bytes, rank * 1000 + i);
      EXPECT_EQ(slices[rank][i].track, i % 3 - 1);
      EXPECT_EQ(slices[rank][i].loc, "p.hir:7:3");
    }
  }
}

// The resident memory of this process, from the kernel's accounting.
uint64_t residentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

TEST(Trace, ARecordingKeepsItsEventsOnDiskNotInMemory) {
  // 600k events are about 80 MB of trace; held in memory they would show.
  TraceRecorder recorder;
  recorder.start(TraceRecorder::Clock::now(), TraceSettings{0, 1, "a_long_program_name.hir", uint64_t{1} << 40});
  const uint64_t before = residentBytes();
  for (int i = 0; i < 600000; ++i)
    recorder.add(TraceSlice{i % 4, "allreduce", "communication", "12:34", i * 1.5, 1.25, 4096, 0});
  recorder.stop();
  const uint64_t after = residentBytes();
  ASSERT_FALSE(recorder.error()) << recorder.error()->message;
  EXPECT_GT(recorder.recordedBytes(), uint64_t{60} << 20);
  // AddressSanitizer quarantines freed memory, so resident memory says nothing there.
  if (!hostir::testing::kAddressSanitizer) {
    EXPECT_LT(after, before + (uint64_t{16} << 20)) << "resident memory grew from " << before << " to " << after;
  }
  EXPECT_FALSE(recorder.truncated());
}

Program loopProgram() { return parseOrThrow(testing::testProgramText("executor/programs/trace_loop.hir"), "loop.hir"); }

TEST(Trace, TheLimitEndsTheTraceVisiblyAndCountsWhatIsLeftOut) {
  ScratchDir dir;
  const int64_t world = 2, n = 20000;
  const uint64_t limit = 256 << 10;
  Program program = loopProgram();
  RunRequest request = makeRequest(program, bindAll(program, {{"N", n}}), 3, 2);
  request.writeTrace = teamTraceWriter(dir.file("t.json"));
  request.traceLimitBytes = limit;
  auto result = runWithin(request, world);
  ASSERT_TRUE(result && *result) << (result ? result->error().message : "timed out");
  const auto& written = result->value().trace;
  ASSERT_TRUE(written && *written) << written->error().message;
  const TraceSummary& summary = written->value();
  EXPECT_TRUE(summary.truncated);
  EXPECT_LE(fs::file_size(dir.file("t.json")), limit);
  EXPECT_GT(fs::file_size(dir.file("t.json")), limit * 3 / 4);
  EXPECT_EQ(summary.bytes, fs::file_size(dir.file("t.json")));

  auto trace = parseTrace(dir.file("t.json"));  // still valid JSON
  EXPECT_EQ(trace.at("otherData").at("truncated"), true);
  EXPECT_EQ(trace.at("otherData").at("dropped_operations"), summary.droppedOperations);
  std::set<int> marked;
  for (const auto& e : trace.at("traceEvents"))
    if (e.at("ph") == "i" && e.at("name") == "trace truncated") marked.insert(e.at("pid").get<int>());
  EXPECT_EQ(marked, (std::set<int>{0, 1}));  // each rank reached its half of the limit

  // Every operation a rank issued is either in the trace or counted out:
  // the rank that left out the most accounts for the count.
  const uint64_t issued = static_cast<uint64_t>(n) + 1;  // the adds and the zero fill
  uint64_t fewestRecorded = issued;
  for (const auto& slices : slicesPerRank(trace, world)) {
    uint64_t recorded = 0;
    for (const Slice& s : slices) recorded += s.category == "host";
    EXPECT_LT(recorded, issued);
    fewestRecorded = std::min(fewestRecorded, recorded);
  }
  EXPECT_GT(summary.droppedOperations, 0u);
  EXPECT_EQ(fewestRecorded + summary.droppedOperations, issued);
}

TEST(Trace, AnUnwritablePathIsAnErrorThatNamesIt) {
  Program program = loadExample("row_parallel_linear");
  RunRequest request = makeRequest(program, bindAll(program, {}), 1, 2);
  request.writeTrace = teamTraceWriter("/nonexistent-dir/t.json");
  auto result = runWithin(request, 2);
  ASSERT_TRUE(result && *result);
  const auto& written = result->value().trace;
  ASSERT_TRUE(written.has_value());
  ASSERT_FALSE(*written);
  EXPECT_THAT(written->error().message, HasSubstr("cannot write the trace to '/nonexistent-dir/t.json'"));
}

TEST(Trace, CliWritesATraceThatParses) {
  ScratchDir dir;
  std::string path = dir.file("t.json");
  std::string command = std::string(HOSTIR_BINARY) + " run " + examplePath("row_parallel_linear") +
                        " --ranks 2 --passes assign-streams --repeat 2 --trace " + path + " > " + dir.file("out") +
                        " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << readText(dir.file("out"));
  auto trace = parseTrace(path);
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
  EXPECT_THAT(readText(dir.file("out")), ::testing::Not(HasSubstr("warning")));
}

TEST(Trace, CliWarnsOnceWhenTheTraceReachesItsLimit) {
  ScratchDir dir;
  {
    std::ofstream program(dir.file("loop.hir"));
    program << testing::testProgramText("executor/programs/trace_loop.hir");
  }
  std::string path = dir.file("t.json");
  std::string command = std::string(HOSTIR_BINARY) + " run " + dir.file("loop.hir") +
                        " --ranks 2 --trace-limit 1 --trace " + path + " > " + dir.file("out") + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << readText(dir.file("out"));
  std::string out = readText(dir.file("out"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "warning: the trace reached --trace-limit 1 MiB; the last [0-9]+ operations are not in it\n"));
  size_t warnings = 0;
  for (size_t at = out.find("warning:"); at != std::string::npos; at = out.find("warning:", at + 1)) ++warnings;
  EXPECT_EQ(warnings, 1u) << out;
  EXPECT_LE(fs::file_size(path), uint64_t{1} << 20);
  auto trace = parseTrace(path);
  EXPECT_EQ(trace.at("otherData").at("truncated"), true);
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
