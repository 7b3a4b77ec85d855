#include "trace_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "api/trace_file.h"
#include "test_util.h"

namespace hostir::reftest {

namespace fs = std::filesystem;

nlohmann::json parseTrace(const std::string& path) { return nlohmann::json::parse(readText(path)); }

std::vector<std::vector<Slice>> slicesPerRank(const nlohmann::json& trace, size_t world) {
  std::vector<std::vector<Slice>> perRank(world);
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    Slice s;
    s.rank = e.at("pid").get<int>();
    s.track = e.at("tid").get<int>() - 2;
    s.name = e.at("name").get<std::string>();
    s.category = e.at("cat").get<std::string>();
    s.startMicros = e.at("ts").get<double>();
    s.durationMicros = e.at("dur").get<double>();
    const auto& args = e.at("args");
    s.loc = args.value("loc", "");
    s.bytes = args.value("bytes", int64_t{0});
    s.flops = args.value("flops", 0.0);
    perRank.at(static_cast<size_t>(s.rank)).push_back(s);
  }
  return perRank;
}

namespace {

// examples/row_parallel_linear.hir after assign-streams, as `hostir opt` prints it.
std::string rowParallelOnStreams() { return testing::testProgramText("executor/programs/row_parallel_on_streams.hir"); }

}  // namespace

Result<RunResult> tracedRowParallel(const RowParallelShape& shape, BackendKind backend, int64_t world, int64_t streams,
                                    int repeat, const std::string& path) {
  Program program = parseOrThrow(rowParallelOnStreams(), "rp.hir");
  Params params = bindAll(program, {{"M", shape.M}, {"K", shape.K}, {"N", shape.N}, {"S", shape.S}});
  RunRequest request = makeRequest(program, params, 7, streams);
  request.backend.kind = backend;
  request.writeTrace = teamTraceWriter(path);
  request.traceSourceName = "rp.hir";
  request.warmup = 1;
  request.repeat = repeat;
  auto result = runWithin(request, world);
  if (!result) throw std::runtime_error("the traced run did not finish");
  return *result;
}

std::vector<Slice> named(const std::vector<Slice>& slices, const std::string& name, int track) {
  std::vector<Slice> out;
  for (const Slice& s : slices)
    if (s.name == name && (track == kHostTrack ? s.track == kHostTrack : s.track != kHostTrack)) out.push_back(s);
  return out;
}

void expectRowParallelTimeline(BackendKind backend, int64_t world, int64_t streams, const std::string& path) {
  const RowParallelShape shape;
  auto result = tracedRowParallel(shape, backend, world, streams, 3, path);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->trace.has_value());
  ASSERT_TRUE(*result->trace) << result->trace->error().message;
  EXPECT_FALSE(result->trace->value().truncated);
  EXPECT_EQ(result->trace->value().bytes, fs::file_size(path));
  auto perRank = slicesPerRank(parseTrace(path), world);
  const double rows = static_cast<double>(shape.M / shape.S), localK = static_cast<double>(shape.K / world);
  for (size_t rank = 0; rank < perRank.size(); ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& slices = perRank[rank];
    // Only the last run is traced: one linear and one allreduce per chunk.
    auto linears = named(slices, "linear", /*track=*/0);
    auto allreduces = named(slices, "allreduce", 0);
    ASSERT_EQ(linears.size(), static_cast<size_t>(shape.S));
    ASSERT_EQ(allreduces.size(), static_cast<size_t>(shape.S));
    EXPECT_EQ(named(slices, "linear", kHostTrack).size(), static_cast<size_t>(shape.S));
    std::map<int, int> linearsPerTrack;
    for (const Slice& s : linears) {
      EXPECT_EQ(s.category, "compute");
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * rows * static_cast<double>(shape.N) * localK);
      EXPECT_EQ(s.bytes, static_cast<int64_t>((rows * localK + shape.N * localK + rows * shape.N) * 4));
      EXPECT_EQ(s.loc, "rp.hir:13:5");  // the linear of row_parallel_on_streams.hir
      ++linearsPerTrack[s.track];
    }
    // assign-streams: chunk i on stream(i mod streams).
    for (int track = 0; track < streams; ++track) EXPECT_EQ(linearsPerTrack[track], shape.S / streams);
    for (const Slice& s : allreduces) {
      EXPECT_EQ(s.category, "communication");
      EXPECT_EQ(s.bytes, static_cast<int64_t>(rows * shape.N * 4));
    }
    // A stream runs its work in order: its slices never overlap, and every
    // slice lies after the shared origin.
    std::map<int, std::vector<Slice>> byTrack;
    for (const Slice& s : slices) {
      EXPECT_GE(s.startMicros, 0.0);
      EXPECT_GE(s.durationMicros, 0.0);
      if (s.track != kHostTrack) byTrack[s.track].push_back(s);
    }
    for (auto& [track, list] : byTrack) {
      std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.startMicros < b.startMicros; });
      // Times are written to the nanosecond: allow for the rounding.
      for (size_t i = 1; i < list.size(); ++i)
        EXPECT_LE(list[i - 1].startMicros + list[i - 1].durationMicros, list[i].startMicros + 2e-3)
            << "track " << track;
    }
  }
}

}  // namespace hostir::reftest
