// Reading a written `--trace` back, and the check of a traced row-parallel
// run that every backend must pass: one linear and one allreduce per chunk
// on the stream assign-streams put it on, with the op table's FLOPs and
// bytes and the statement's position, slices that never overlap on a
// stream, all after the shared time origin.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"

namespace hostir::reftest {

// A "ph":"X" event of a written trace, as the recorder saw it.
struct Slice {
  int rank = 0;
  int track = 0;
  std::string name, category, loc;
  double startMicros = 0, durationMicros = 0;
  int64_t bytes = 0;
  double flops = 0;
};

nlohmann::json parseTrace(const std::string& path);
std::vector<std::vector<Slice>> slicesPerRank(const nlohmann::json& trace, size_t world);
// The slices called `name` on the host track (track == kHostTrack) or on the streams.
std::vector<Slice> named(const std::vector<Slice>& slices, const std::string& name, int track);

struct RowParallelShape {
  int64_t M = 64, K = 32, N = 16, S = 4;
};

// examples/row_parallel_linear.hir after assign-streams, traced to `path`
// on `backend` (the last of `repeat` runs, after one warmup).
Result<RunResult> tracedRowParallel(const RowParallelShape& shape, BackendKind backend, int64_t world, int64_t streams,
                                    int repeat, const std::string& path);

// Traces it at the default shape and checks the timeline (gtest expectations).
void expectRowParallelTimeline(BackendKind backend, int64_t world, int64_t streams, const std::string& path);

}  // namespace hostir::reftest
