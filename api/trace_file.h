// The Chrome trace file of a traced run (`hostir run --trace FILE.json`,
// the API's RunOptions::tracePath): rank 0 assembles the team's file from
// every rank's recording (runtime/trace.h), chunk by chunk, so that no rank
// holds more than one chunk of another's events.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "ir/diagnostic.h"
#include "runtime/trace.h"

namespace hostir {

// Collective: every rank passes its stopped recorder. Rank 0 writes the
// team's Chrome trace to `path` (rank r's events as process r): its own
// events, then each other rank's, received in chunks of `chunkBytes` by
// broadcasts from that rank, so no rank holds more than one chunk. Rank 0
// returns what it wrote or why it could not (a file that could not be
// written whole is removed); the others an empty summary or their own
// recorder's error.
Result<TraceSummary> writeTeamTrace(Communicator& comm, const TraceRecorder& mine, const std::string& path,
                                    size_t chunkBytes = size_t{1} << 20);

// Writes the Chrome trace of recordings this process holds (rank r's events
// as process r, as each recorder's settings say): `hostir simulate --trace`.
Result<TraceSummary> writeTraceFile(const std::vector<const TraceRecorder*>& ranks, const std::string& path);

// A RunRequest::writeTrace that writes the team's trace to `path`.
std::function<Result<TraceSummary>(Communicator&, const TraceRecorder&)> teamTraceWriter(std::string path);

}  // namespace hostir
