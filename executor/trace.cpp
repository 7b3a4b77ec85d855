#include "executor/trace.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>

namespace hostir {

void TraceRecorder::start(Clock::time_point origin) {
  std::lock_guard lock(mutex_);
  slices_.clear();
  origin_ = origin;
  recording_ = true;
}

void TraceRecorder::stop() { recording_ = false; }

double TraceRecorder::microsSinceOrigin(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void TraceRecorder::add(TraceSlice slice) {
  std::lock_guard lock(mutex_);
  slices_.push_back(std::move(slice));
}

std::vector<TraceSlice> TraceRecorder::slices() const {
  std::lock_guard lock(mutex_);
  return slices_;
}

namespace {

using nlohmann::json;

// Chrome trace thread ids: the host first, then the main stream, then the pool.
int threadId(int track) { return track + 2; }

std::string trackName(int track) {
  if (track == kHostTrack) return "host";
  if (track == kMainStreamTrack) return "main stream";
  return "stream " + std::to_string(track);
}

json sliceToJson(const TraceSlice& s) {
  return json{{"track", s.track}, {"name", s.name},     {"cat", s.category},       {"loc", s.loc},
              {"ts", s.startMicros}, {"dur", s.durationMicros}, {"bytes", s.bytes}, {"flops", s.flops}};
}

TraceSlice sliceFromJson(const json& j) {
  TraceSlice s;
  s.track = j.at("track").get<int>();
  s.name = j.at("name").get<std::string>();
  s.category = j.at("cat").get<std::string>();
  s.loc = j.at("loc").get<std::string>();
  s.startMicros = j.at("ts").get<double>();
  s.durationMicros = j.at("dur").get<double>();
  s.bytes = j.at("bytes").get<int64_t>();
  s.flops = j.at("flops").get<double>();
  return s;
}

}  // namespace

std::string chromeTraceJson(const std::vector<std::vector<TraceSlice>>& perRank, const std::string& file) {
  json events = json::array();
  for (size_t rank = 0; rank < perRank.size(); ++rank) {
    const int pid = static_cast<int>(rank);
    events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_name"}, {"args", {{"name", "rank " + std::to_string(rank)}}}});
    events.push_back({{"ph", "M"}, {"pid", pid}, {"name", "process_sort_index"}, {"args", {{"sort_index", pid}}}});
    std::map<int, bool> tracks;
    for (const TraceSlice& s : perRank[rank]) tracks[s.track] = true;
    for (const auto& [track, used] : tracks) {
      int tid = threadId(track);
      events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_name"}, {"args", {{"name", trackName(track)}}}});
      events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", "thread_sort_index"}, {"args", {{"sort_index", tid}}}});
    }
    for (const TraceSlice& s : perRank[rank]) {
      json args = json::object();
      if (!s.loc.empty()) args["loc"] = file + ":" + s.loc;
      if (s.bytes) args["bytes"] = s.bytes;
      if (s.flops) args["flops"] = s.flops;
      events.push_back({{"ph", "X"}, {"pid", pid}, {"tid", threadId(s.track)}, {"name", s.name}, {"cat", s.category},
                        {"ts", s.startMicros}, {"dur", s.durationMicros}, {"args", args}});
    }
  }
  return json{{"displayTimeUnit", "ms"}, {"traceEvents", events}}.dump(1) + "\n";
}

std::vector<std::vector<TraceSlice>> gatherTraces(Communicator& comm, const std::vector<TraceSlice>& mine) {
  json array = json::array();
  for (const TraceSlice& s : mine) array.push_back(sliceToJson(s));
  std::string text = array.dump();
  // Lengths first, then every rank's text padded to the longest, moved as
  // 8-byte words (the communicators move bytes; f64 is just their width here).
  const size_t world = static_cast<size_t>(comm.size());
  std::vector<double> lengths(world);
  double myLength = static_cast<double>(text.size());
  comm.allgather(&myLength, lengths.data(), 1, DType::F64);
  size_t longest = static_cast<size_t>(*std::max_element(lengths.begin(), lengths.end()));
  size_t words = (longest + 7) / 8;
  std::vector<double> send(words, 0.0), recv(words * world, 0.0);
  std::memcpy(send.data(), text.data(), text.size());
  comm.allgather(send.data(), recv.data(), words, DType::F64);
  std::vector<std::vector<TraceSlice>> all;
  if (comm.rank() != 0) return all;
  for (size_t r = 0; r < world; ++r) {
    std::string part(reinterpret_cast<const char*>(recv.data() + r * words), static_cast<size_t>(lengths[r]));
    std::vector<TraceSlice> slices;
    for (const json& j : json::parse(part)) slices.push_back(sliceFromJson(j));
    all.push_back(std::move(slices));
  }
  return all;
}

}  // namespace hostir
