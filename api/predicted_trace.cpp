#include "api/predicted_trace.h"

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "api/trace_file.h"

namespace hostir {
namespace {

// The categories `hostir run --trace` gives the same work.
const char* categoryOf(WorkItem::Kind kind) {
  switch (kind) {
    case WorkItem::Kind::Compute: return "compute";
    case WorkItem::Kind::Memory: return "memory";
    case WorkItem::Kind::Communication: return "communication";
    case WorkItem::Kind::Wait: break;
  }
  return "sync";
}

int trackOf(const WorkItem& item) { return item.stream == 0 ? kMainStreamTrack : item.stream - 1; }

// Shorter waits are not drawn (as in run's traces: a wait for a core under 5 µs is not shown).
constexpr double kShownWaitMicros = 5;

void recordRank(TraceRecorder& recorder, const RankWork& work, const RankTimeline& timeline,
                const MachineProfile& profile) {
  const double issueMicros = profile.overheads.issueMicros;
  const bool byOp = !profile.overheads.issueMicrosByOp.empty() && timeline.issueEnd.size() >= work.issued.size();
  for (size_t s = 0; s < work.issued.size(); ++s) {
    const IssuedStatement& statement = work.issued[s];
    // Statements whose operation has its own issue cost take the simulator's times.
    const double begin = byOp ? (s == 0 ? 0 : timeline.issueEnd[s - 1] * 1e6) : s * issueMicros;
    const double duration = byOp ? timeline.issueEnd[s] * 1e6 - begin : issueMicros;
    if (!(duration > 0)) continue;
    const std::string loc =
        statement.loc.valid() ? fmt::format("{}:{}", statement.loc.line, statement.loc.col) : std::string();
    recorder.add(TraceSlice{kHostTrack, signatureOf(statement.op).name, "host", loc, begin, duration, 0, 0});
  }
  for (size_t i = 0; i < work.items.size(); ++i) {
    const WorkItem& item = work.items[i];
    const ItemTiming& t = timeline.items[i];
    const std::string loc = item.loc.valid() ? fmt::format("{}:{}", item.loc.line, item.loc.col) : std::string();
    const std::string_view name = signatureOf(item.op).name;
    const double ready = t.ready * 1e6, start = t.start * 1e6, end = t.end * 1e6;
    if (item.kind != WorkItem::Kind::Wait && start - ready > kShownWaitMicros) {
      const char* why =
          item.kind == WorkItem::Kind::Communication ? "wait for its turn and the peers" : "wait for a core";
      recorder.add(TraceSlice{trackOf(item), why, "sync", loc, ready, start - ready, 0, 0});
    }
    recorder.add(
        TraceSlice{trackOf(item), name, categoryOf(item.kind), loc, start, end - start, item.bytes, item.flops});
  }
}

}  // namespace

Result<TraceSummary> writePredictedTrace(const Simulation& simulation, const std::string& path,
                                         const std::string& sourceName, const MachineProfile& profile) {
  std::vector<std::unique_ptr<TraceRecorder>> recorders;
  std::vector<const TraceRecorder*> ranks;
  const int simulated = static_cast<int>(simulation.work.size());
  for (int rank = 0; rank < simulated; ++rank) {
    auto& recorder = recorders.emplace_back(std::make_unique<TraceRecorder>());
    recorder->start(TraceRecorder::Clock::now(), TraceSettings{rank, simulated, sourceName, kDefaultTraceLimitBytes});
    recordRank(*recorder, simulation.work[static_cast<size_t>(rank)],
               simulation.timeline.ranks[static_cast<size_t>(rank)], profile);
    recorder->stop();
    ranks.push_back(recorder.get());
  }
  return writeTraceFile(ranks, path);
}

}  // namespace hostir
