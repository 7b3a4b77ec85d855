#include "model/machine_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <utility>

#include "hostir/limits.h"
#include "ir/bounded_file.h"
#include "ir/collectives.h"
#include "model/point_times.h"

namespace hostir {

namespace shipped {
// Generated from profiles/*.json by model/embed_profiles.cmake.
std::vector<std::pair<std::string_view, std::string_view>> profileTexts();
}  // namespace shipped

namespace {

// Ordered, so that the writer keeps the documented key order.
using Json = nlohmann::ordered_json;

constexpr std::string_view kFormat = "hostir-machine-profile";
// The version the writer writes. Version 1 files (without spreads, issue
// costs by operation or contention) still read, and mean what they meant.
// Version 2 files (without `nodes`) read as a machine whose nodes are unknown.
constexpr int64_t kVersion = 3;
constexpr int64_t kOldestVersion = 1;

// Thrown inside the reader only; parseMachineProfile turns it into a Diagnostic.
struct ProfileError {
  std::string message;
};

[[noreturn]] void reject(const std::string& path, std::string_view what) {
  throw ProfileError{path.empty() ? std::string(what) : fmt::format("{}: {}", path, what)};
}

// A key path shows each key's start, never all of a long one.
std::string child(const std::string& path, std::string_view key) {
  constexpr size_t kShownKeyBytes = 80;
  const std::string shownKey = key.size() > kShownKeyBytes
                                   ? fmt::format("{}... ({} bytes)", key.substr(0, kShownKeyBytes), key.size())
                                   : std::string(key);
  return path.empty() ? shownKey : fmt::format("{}.{}", path, shownKey);
}

std::string element(const std::string& path, size_t index) { return fmt::format("{}[{}]", path, index); }

std::string joined(std::initializer_list<std::string_view> names) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

// A value as an error quotes it: its start, never all of a large one.
std::string shown(const Json& value) {
  constexpr size_t kShownBytes = 80;
  std::string text = value.dump();
  if (text.size() > kShownBytes) text = text.substr(0, kShownBytes) + fmt::format("... ({} bytes)", text.size());
  return text;
}

// What the parser sees as it goes, so that a profile nested too deeply or
// giving a key twice is refused while parsing, naming the key path. The
// parser keeps a copy; copies share their state, so that where the parser
// stopped (a number out of range) can be named afterwards.
class ParseGuard {
 public:
  bool operator()(int /*depth*/, nlohmann::detail::parse_event_t event, Json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    std::vector<Frame>& frames = *frames_;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        if (frames.size() >= static_cast<size_t>(kMaxProfileDepth))
          throw ProfileError{fmt::format("{}: nested more than {} levels deep", path("the profile"), kMaxProfileDepth)};
        frames.push_back(Frame{event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& frame = frames.back();
        frame.key = parsed.get<std::string>();
        if (!frame.keys.insert(frame.key).second)
          throw ProfileError{
              fmt::format("{}: the key is given twice (each key once: a later one would hide the "
                          "first)",
                          path("the profile"))};
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames.pop_back();
        counted();
        break;
      case Event::value: counted(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object = true;
    std::set<std::string> keys;  // an object's keys so far
    std::string key;             // an object's current key
    size_t index = 0;            // an array's current element
  };

  // A value ended: an array moves on to its next element.
  void counted() {
    if (!frames_->empty() && !frames_->back().object) ++frames_->back().index;
  }

 public:
  // The key path of the value being parsed ("communication[2].ranks").
  std::string path(std::string_view atTheTop) const {
    std::string out;
    for (const Frame& frame : *frames_) out = frame.object ? child(out, frame.key) : element(out, frame.index);
    return out.empty() ? std::string(atTheTop) : out;
  }

 private:
  std::shared_ptr<std::vector<Frame>> frames_ = std::make_shared<std::vector<Frame>>();
};

// An object's keys must be among `allowed` (plus "source", which documents
// where the object's numbers come from): a misspelt key must not pass as
// absent. `newer`: keys that only version 2 knows, errors in a version 1 file.
void requireKeys(const Json& object, const std::string& path, std::initializer_list<std::string_view> allowed,
                 std::initializer_list<std::string_view> required, std::initializer_list<std::string_view> newer = {},
                 int64_t version = 2) {
  if (!object.is_object()) reject(path.empty() ? "the profile" : path, "expected an object, got " + shown(object));
  const bool readsNewer = version >= 2;
  for (const auto& [key, value] : object.items()) {
    if (key == "source") {
      if (!value.is_string()) reject(child(path, key), "expected a string, got " + shown(value));
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    if (std::find(newer.begin(), newer.end(), key) != newer.end()) {
      if (readsNewer) continue;
      reject(child(path, key), "a version 2 key in a version 1 profile (write \"version\": 2)");
    }
    std::string expected = joined(allowed);
    if (readsNewer)
      for (std::string_view name : newer) expected += ", " + std::string(name);
    reject(child(path, key), fmt::format("unknown key (expected one of {})", expected));
  }
  for (std::string_view key : required)
    if (!object.contains(key)) reject(path, fmt::format("missing key '{}'", key));
}

std::string readString(const Json& object, const std::string& path, std::string_view key) {
  const Json& value = object.at(std::string(key));
  if (!value.is_string()) reject(child(path, key), "expected a string, got " + shown(value));
  return value.get<std::string>();
}

double readNumber(const Json& value, const std::string& path) {
  if (!value.is_number()) reject(path, "expected a number, got " + shown(value));
  double number = value.get<double>();
  if (!std::isfinite(number)) reject(path, "expected a finite number, got " + shown(value));
  return number;
}

// The sane range of one kind of figure: no machine lies outside it, and
// inside it every predicted time stays finite and meaningful (a rate of
// 1e-308 TFLOPS or an overhead of 1e308 us would make times infinite).
struct Range {
  double lo, hi;
  std::string_view unit;
};
constexpr Range kTflops{1e-6, 1e6, "TFLOPS"};
constexpr Range kGbps{1e-6, 1e6, "GB/s"};
constexpr Range kOverheadMicros{0, 1e7, "us"};  // up to 10 s
constexpr Range kMeasuredMicros{1e-6, 1e9, "us"};
constexpr Range kComputeUnits{1e-6, 1e6, "units"};
constexpr Range kShareOfUnits{0, 1e6, "units"};
// A relative spread (the interquartile range over the median): beyond 10
// a figure says nothing.
constexpr Range kSpread{0, 10, "(relative)"};
constexpr Range kRanksPerNode{1, 1 << 20, "ranks"};
// A contention rate: the share of its rate alone that work keeps beside
// other work. Below 1/1000 no measurement could tell it from a stall.
constexpr Range kContentionRate{1e-3, 1, "(of the rate alone)"};
// How many times as long a strided copy takes as a contiguous one.
constexpr Range kSlowdown{1e-3, 1e3, "(times a contiguous copy)"};

double readInRange(const Json& value, const std::string& path, const Range& range) {
  double number = readNumber(value, path);
  if (number < range.lo || number > range.hi)
    reject(path,
           fmt::format("expected a number from {:g} to {:g} {}, got {}", range.lo, range.hi, range.unit, shown(value)));
  return number;
}

int64_t readPositiveInteger(const Json& value, const std::string& path) {
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<uint64_t>() > INT64_MAX))
    reject(path, "expected a positive integer, got " + shown(value));
  int64_t number = value.get<int64_t>();
  if (number <= 0) reject(path, "expected a positive integer, got " + shown(value));
  return number;
}

const Json& readArray(const Json& object, const std::string& path, std::string_view key) {
  const Json& value = object.at(std::string(key));
  if (!value.is_array()) reject(child(path, key), "expected an array, got " + shown(value));
  return value;
}

// A grid or curve axis: positive integers in strictly ascending order.
std::vector<int64_t> readAxis(const Json& object, const std::string& path, std::string_view key) {
  std::string axisPath = child(path, key);
  const Json& values = readArray(object, path, key);
  if (values.empty()) reject(axisPath, "expected at least one value");
  std::vector<int64_t> axis;
  for (size_t i = 0; i < values.size(); ++i) {
    int64_t value = readPositiveInteger(values[i], element(axisPath, i));
    if (!axis.empty() && value <= axis.back())
      reject(element(axisPath, i),
             fmt::format("{} does not exceed the value before it, {} (the values must ascend)", value, axis.back()));
    axis.push_back(value);
  }
  return axis;
}

std::vector<double> readRates(const Json& object, const std::string& path, std::string_view key, const Range& range) {
  std::string ratesPath = child(path, key);
  const Json& values = readArray(object, path, key);
  std::vector<double> rates;
  for (size_t i = 0; i < values.size(); ++i) rates.push_back(readInRange(values[i], element(ratesPath, i), range));
  return rates;
}

std::string_view admissionName(Admission admission) {
  return admission == Admission::Concurrent ? "concurrent" : "issue-order";
}

// A communication entry's kind is a collective's name (ir/collectives.h).
std::string_view commKindName(OpKind kind) {
  std::optional<CollectiveKind> collective = collectiveOf(kind);
  return collective ? collectiveName(*collective) : "?";
}

constexpr std::pair<CommAlgorithm, std::string_view> kAlgorithms[] = {
    {CommAlgorithm::Ring, "ring"},
    {CommAlgorithm::Tree, "tree"},
    {CommAlgorithm::Flat, "flat"},
};

std::string_view algorithmName(CommAlgorithm algorithm) {
  for (const auto& [value, name] : kAlgorithms)
    if (value == algorithm) return name;
  return "?";
}

// An optional array parallel to `count` values: one relative spread each.
std::vector<double> readSpreads(const Json& object, const std::string& path, std::string_view key, size_t count,
                                std::string_view per) {
  if (!object.contains(key)) return {};
  std::vector<double> spreads = readRates(object, path, key, kSpread);
  if (spreads.size() != count)
    reject(child(path, key), fmt::format("expected {} values (one per {} value), got {}", count, per, spreads.size()));
  return spreads;
}

void readRank(const Json& rank, MachineProfile& profile) {
  const std::string path = "rank";
  requireKeys(rank, path, {"admission", "compute_units", "gemm_units", "elementwise_units", "communication_units"},
              {"admission", "compute_units", "gemm_units", "elementwise_units", "communication_units"});
  std::string admission = readString(rank, path, "admission");
  if (admission == "issue-order")
    profile.admission = Admission::IssueOrder;
  else if (admission == "concurrent")
    profile.admission = Admission::Concurrent;
  else
    reject(child(path, "admission"),
           fmt::format("unknown admission '{}' (expected issue-order or concurrent)", admission));
  profile.computeUnits = readInRange(rank["compute_units"], child(path, "compute_units"), kComputeUnits);
  profile.gemmUnits = readInRange(rank["gemm_units"], child(path, "gemm_units"), kShareOfUnits);
  profile.elementwiseUnits = readInRange(rank["elementwise_units"], child(path, "elementwise_units"), kShareOfUnits);
  profile.communicationUnits =
      readInRange(rank["communication_units"], child(path, "communication_units"), kComputeUnits);
  for (auto [key, units] : {std::pair<std::string_view, double>{"gemm_units", profile.gemmUnits},
                            {"elementwise_units", profile.elementwiseUnits},
                            {"communication_units", profile.communicationUnits}})
    if (units > profile.computeUnits)
      reject(child(path, key), fmt::format("{} exceeds compute_units, {}", units, profile.computeUnits));
}

// `nodes` (version 3): the ranks a node holds, and one rank's network share.
void readNodes(const Json& nodes, MachineProfile& profile) {
  const std::string path = "nodes";
  requireKeys(nodes, path, {"ranks_per_node", "nic_busbw_gbps"}, {"ranks_per_node"});
  const double ranks = readInRange(nodes["ranks_per_node"], child(path, "ranks_per_node"), kRanksPerNode);
  if (ranks != std::floor(ranks))
    reject(child(path, "ranks_per_node"), fmt::format("expected a whole number of ranks, got {}", ranks));
  profile.ranksPerNode = static_cast<int64_t>(ranks);
  if (nodes.contains("nic_busbw_gbps"))
    profile.nicBusGbps = readInRange(nodes["nic_busbw_gbps"], child(path, "nic_busbw_gbps"), kGbps);
}

void readGemm(const Json& gemm, MachineProfile& profile, int64_t version) {
  const std::string path = "gemm";
  if (!gemm.is_object()) reject(path, "expected an object, got " + shown(gemm));
  for (const auto& [name, rates] : gemm.items()) {
    if (name == "source") {
      if (!rates.is_string()) reject(child(path, name), "expected a string, got " + shown(rates));
      continue;
    }
    std::string gridPath = child(path, name);
    std::optional<DType> dtype = parseDType(name);
    if (!dtype || !isFloating(*dtype)) reject(gridPath, "unknown dtype (expected one of f32, f16, bf16, f64)");
    requireKeys(rates, gridPath, {"peak_tflops", "m", "n", "k", "tflops"}, {"m", "n", "k", "tflops"}, {"spread"},
                version);
    GemmGrid grid;
    grid.m = readAxis(rates, gridPath, "m");
    grid.n = readAxis(rates, gridPath, "n");
    grid.k = readAxis(rates, gridPath, "k");
    grid.tflops = readRates(rates, gridPath, "tflops", kTflops);
    size_t expected = grid.m.size() * grid.n.size() * grid.k.size();
    if (grid.tflops.size() != expected)
      reject(child(gridPath, "tflops"), fmt::format("expected {} values (m x n x k = {} x {} x {}), got {}", expected,
                                                    grid.m.size(), grid.n.size(), grid.k.size(), grid.tflops.size()));
    grid.spread = readSpreads(rates, gridPath, "spread", grid.tflops.size(), "tflops");
    if (rates.contains("peak_tflops"))
      profile.peakTflops[*dtype] = readInRange(rates["peak_tflops"], child(gridPath, "peak_tflops"), kTflops);
    profile.gemm[*dtype] = std::move(grid);
  }
}

// A bandwidth curve's bytes, gbps and optional spread (the caller checks its keys).
void readBandwidthCurve(const Json& object, const std::string& path, MemoryCurve& curve) {
  curve.bytes = readAxis(object, path, "bytes");
  curve.gbps = readRates(object, path, "gbps", kGbps);
  if (curve.gbps.size() != curve.bytes.size())
    reject(child(path, "gbps"),
           fmt::format("expected {} values (one per bytes value), got {}", curve.bytes.size(), curve.gbps.size()));
  curve.spread = readSpreads(object, path, "spread", curve.gbps.size(), "gbps");
}

void readMemory(const Json& memory, MachineProfile& profile, int64_t version) {
  const std::string path = "memory";
  requireKeys(memory, path, {"bytes", "gbps"}, {"bytes", "gbps"}, {"spread", "strided"}, version);
  readBandwidthCurve(memory, path, profile.memory);
  if (!memory.contains("strided")) return;
  const Json& strided = memory["strided"];
  const std::string stridedPath = child(path, "strided");
  requireKeys(strided, stridedPath, {"run_bytes", "slowdown", "spread"}, {"run_bytes", "slowdown"});
  profile.memory.stridedRunBytes = readAxis(strided, stridedPath, "run_bytes");
  profile.memory.stridedSlowdown = readRates(strided, stridedPath, "slowdown", kSlowdown);
  if (profile.memory.stridedSlowdown.size() != profile.memory.stridedRunBytes.size())
    reject(child(stridedPath, "slowdown"),
           fmt::format("expected {} values (one per run_bytes value), got {}", profile.memory.stridedRunBytes.size(),
                       profile.memory.stridedSlowdown.size()));
  profile.memory.stridedSpread =
      readSpreads(strided, stridedPath, "spread", profile.memory.stridedSlowdown.size(), "slowdown");
}

CommunicationCost readCommunicationCost(const Json& entry, const std::string& path, int64_t version) {
  requireKeys(entry, path, {"kind", "ranks", "algorithm", "latency_us", "busbw_gbps", "bytes", "us"},
              {"kind", "ranks", "algorithm", "latency_us", "busbw_gbps"}, {"spread", "measured_spread"}, version);
  CommunicationCost cost;
  std::string kind = readString(entry, path, "kind");
  std::optional<CollectiveKind> known = collectiveByName(kind);
  if (!known) {
    std::string expected;
    for (const CollectiveInfo& c : allCollectives())
      expected += fmt::format("{}{}", expected.empty() ? "" : ", ", c.name);
    reject(child(path, "kind"), fmt::format("unknown kind '{}' (expected one of {})", kind, expected));
  }
  cost.kind = collectiveInfo(*known).op;
  cost.ranks = readPositiveInteger(entry["ranks"], child(path, "ranks"));
  // A team of one communicates nothing, and its zero steps could not scale a latency.
  if (cost.ranks < 2) reject(child(path, "ranks"), fmt::format("expected at least 2 ranks, got {}", cost.ranks));
  if (cost.ranks > kMaxRanks)
    reject(child(path, "ranks"), fmt::format("expected at most {} ranks (the largest team hostir runs or simulates), "
                                             "got {}",
                                             kMaxRanks, cost.ranks));
  std::string algorithm = readString(entry, path, "algorithm");
  auto knownAlgorithm = std::find_if(std::begin(kAlgorithms), std::end(kAlgorithms),
                                     [&](const auto& a) { return a.second == algorithm; });
  if (knownAlgorithm == std::end(kAlgorithms))
    reject(child(path, "algorithm"),
           fmt::format("unknown algorithm '{}' (expected one of ring, tree, flat)", algorithm));
  cost.algorithm = knownAlgorithm->first;
  cost.latencyMicros = readInRange(entry["latency_us"], child(path, "latency_us"), kOverheadMicros);
  cost.busGbps = readInRange(entry["busbw_gbps"], child(path, "busbw_gbps"), kGbps);
  if (entry.contains("bytes") != entry.contains("us"))
    reject(child(path, entry.contains("bytes") ? "us" : "bytes"), "missing: 'bytes' and 'us' come together");
  if (entry.contains("bytes")) {
    cost.measuredBytes = readAxis(entry, path, "bytes");
    cost.measuredMicros = readRates(entry, path, "us", kMeasuredMicros);
    if (cost.measuredMicros.size() != cost.measuredBytes.size())
      reject(child(path, "us"), fmt::format("expected {} values (one per bytes value), got {}",
                                            cost.measuredBytes.size(), cost.measuredMicros.size()));
    cost.measuredSpread = readSpreads(entry, path, "measured_spread", cost.measuredMicros.size(), "us");
  } else if (entry.contains("measured_spread")) {
    reject(child(path, "measured_spread"), "a spread of measured times needs the times ('bytes' and 'us')");
  }
  if (entry.contains("spread")) cost.spread = readInRange(entry["spread"], child(path, "spread"), kSpread);
  return cost;
}

void readCommunication(const Json& entries, MachineProfile& profile, int64_t version) {
  const std::string path = "communication";
  if (!entries.is_array()) reject(path, "expected an array, got " + shown(entries));
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string entryPath = element(path, i);
    CommunicationCost cost = readCommunicationCost(entries[i], entryPath, version);
    for (size_t j = 0; j < profile.communication.size(); ++j) {
      const CommunicationCost& other = profile.communication[j];
      if (other.kind == cost.kind && other.ranks == cost.ranks && other.algorithm == cost.algorithm)
        reject(entryPath,
               fmt::format("a second entry for {} on {} ranks with {} (the first is {})", commKindName(cost.kind),
                           cost.ranks, algorithmName(cost.algorithm), element(path, j)));
    }
    profile.communication.push_back(cost);
  }
}

void readOverheads(const Json& overheads, MachineProfile& profile, int64_t version) {
  const std::string path = "overheads_us";
  requireKeys(overheads, path, {"issue", "launch", "sync", "wakeup"}, {"issue", "launch", "sync", "wakeup"},
              {"spread", "issue_by_op"}, version);
  profile.overheads.issueMicros = readInRange(overheads["issue"], child(path, "issue"), kOverheadMicros);
  profile.overheads.launchMicros = readInRange(overheads["launch"], child(path, "launch"), kOverheadMicros);
  profile.overheads.syncMicros = readInRange(overheads["sync"], child(path, "sync"), kOverheadMicros);
  profile.overheads.wakeupMicros = readInRange(overheads["wakeup"], child(path, "wakeup"), kOverheadMicros);
  if (overheads.contains("spread")) {
    const std::string spreadPath = child(path, "spread");
    const Json& spread = overheads["spread"];
    requireKeys(spread, spreadPath, {"issue", "launch", "sync", "wakeup"}, {});
    Overheads& o = profile.overheads;
    for (auto [key, field] : {std::pair<std::string_view, double*>{"issue", &o.issueSpread},
                              {"launch", &o.launchSpread},
                              {"sync", &o.syncSpread},
                              {"wakeup", &o.wakeupSpread}})
      if (spread.contains(key)) *field = readInRange(spread[std::string(key)], child(spreadPath, key), kSpread);
  }
  if (overheads.contains("issue_by_op")) {
    const std::string byOpPath = child(path, "issue_by_op");
    const Json& byOp = overheads["issue_by_op"];
    if (!byOp.is_object()) reject(byOpPath, "expected an object, got " + shown(byOp));
    for (const auto& [name, micros] : byOp.items()) {
      if (name == "source") {
        if (!micros.is_string()) reject(child(byOpPath, name), "expected a string, got " + shown(micros));
        continue;
      }
      std::optional<OpKind> kind = opKindByName(name);
      if (!kind)
        reject(child(byOpPath, name), "unknown operation (expected an operation's name: linear, allreduce, ...)");
      profile.overheads.issueMicrosByOp[*kind] = readInRange(micros, child(byOpPath, name), kOverheadMicros);
    }
  }
}

void readAttention(const Json& attention, const std::string& path, KernelRates& kernels) {
  if (!attention.is_object()) reject(path, "expected an object, got " + shown(attention));
  for (const auto& [name, rates] : attention.items()) {
    if (name == "source") {
      if (!rates.is_string()) reject(child(path, name), "expected a string, got " + shown(rates));
      continue;
    }
    const std::string gridPath = child(path, name);
    std::optional<DType> dtype = parseDType(name);
    if (!dtype || !isFloating(*dtype)) reject(gridPath, "unknown dtype (expected one of f32, f16, bf16, f64)");
    requireKeys(rates, gridPath, {"t", "d", "tflops", "spread"}, {"t", "d", "tflops"});
    AttentionGrid grid;
    grid.t = readAxis(rates, gridPath, "t");
    grid.d = readAxis(rates, gridPath, "d");
    grid.tflops = readRates(rates, gridPath, "tflops", kTflops);
    const size_t expected = grid.t.size() * grid.d.size();
    if (grid.tflops.size() != expected)
      reject(child(gridPath, "tflops"), fmt::format("expected {} values (t x d = {} x {}), got {}", expected,
                                                    grid.t.size(), grid.d.size(), grid.tflops.size()));
    grid.spread = readSpreads(rates, gridPath, "spread", grid.tflops.size(), "tflops");
    kernels.attention[*dtype] = std::move(grid);
  }
}

// `kernels` (version 2): the measured rates of elementwise kernels, row
// reductions and attention, each optional.
void readKernels(const Json& kernels, MachineProfile& profile) {
  const std::string path = "kernels";
  requireKeys(kernels, path, {"elementwise", "row_reduction", "attention"}, {});
  for (auto [key, curve] : {std::pair<std::string_view, MemoryCurve*>{"elementwise", &profile.kernels.elementwise},
                            {"row_reduction", &profile.kernels.rowReduction}}) {
    if (!kernels.contains(key)) continue;
    const std::string curvePath = child(path, key);
    const Json& object = kernels[std::string(key)];
    requireKeys(object, curvePath, {"bytes", "gbps", "spread"}, {"bytes", "gbps"});
    readBandwidthCurve(object, curvePath, *curve);
  }
  if (kernels.contains("attention")) readAttention(kernels["attention"], child(path, "attention"), profile.kernels);
}

constexpr std::pair<WorkClass, std::string_view> kWorkClasses[] = {
    {WorkClass::Gemm, "gemm"},
    {WorkClass::Memory, "memory"},
    {WorkClass::Elementwise, "elementwise"},
    {WorkClass::Communication, "communication"},
    {WorkClass::CopyEngineCommunication, "copy_engine_communication"},
};

WorkClass readWorkClass(const Json& entry, const std::string& path, std::string_view key) {
  std::string name = readString(entry, path, key);
  for (const auto& [value, known] : kWorkClasses)
    if (known == name) return value;
  reject(child(path, key),
         fmt::format(
             "unknown class '{}' (expected one of gemm, memory, elementwise, communication, copy_engine_communication)",
             name));
}

void readContention(const Json& entries, MachineProfile& profile) {
  const std::string path = "contention";
  if (!entries.is_array()) reject(path, "expected an array, got " + shown(entries));
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string entryPath = element(path, i);
    const Json& entry = entries[i];
    requireKeys(entry, entryPath, {"slowed", "beside", "rate", "spread"}, {"slowed", "beside", "rate"});
    Contention c;
    c.slowed = readWorkClass(entry, entryPath, "slowed");
    c.beside = readWorkClass(entry, entryPath, "beside");
    if (c.slowed == c.beside)
      reject(child(entryPath, "beside"),
             fmt::format("{} beside {}: work of one class shares the units (rank.*_units), it has no contention entry",
                         workClassName(c.slowed), workClassName(c.beside)));
    c.rate = readInRange(entry["rate"], child(entryPath, "rate"), kContentionRate);
    if (entry.contains("spread")) c.spread = readInRange(entry["spread"], child(entryPath, "spread"), kSpread);
    for (size_t j = 0; j < profile.contention.size(); ++j)
      if (profile.contention[j].slowed == c.slowed && profile.contention[j].beside == c.beside)
        reject(entryPath, fmt::format("a second entry for {} beside {} (the first is {})", workClassName(c.slowed),
                                      workClassName(c.beside), element(path, j)));
    profile.contention.push_back(c);
  }
}

MachineProfile readProfile(const Json& root) {
  if (!root.is_object()) reject("the profile", "expected an object, got " + shown(root));
  // The format and version first: another format's keys are not misspellings.
  if (root.contains("format") && (!root["format"].is_string() || root["format"].get<std::string>() != kFormat))
    reject("format",
           fmt::format("expected \"{}\", got {} (is this a hostir machine profile?)", kFormat, shown(root["format"])));
  const bool knownVersion = root.contains("version") && root["version"].is_number_integer() &&
                            root["version"].get<int64_t>() >= kOldestVersion &&
                            root["version"].get<int64_t>() <= kVersion;
  if (root.contains("version") && !knownVersion)
    reject("version", fmt::format("expected {} to {}, got {} (this hostir reads versions {} to {})", kOldestVersion,
                                  kVersion, shown(root["version"]), kOldestVersion, kVersion));
  const int64_t version = knownVersion ? root["version"].get<int64_t>() : kVersion;
  if (root.contains("nodes") && version < 3)
    reject("nodes", fmt::format("a version 3 key in a version {} profile (write \"version\": 3)", version));
  requireKeys(root, "",
              {"format", "version", "name", "description", "sources", "rank", "gemm", "memory", "communication",
               "overheads_us"},
              {"format", "version", "name", "rank", "gemm", "memory", "communication", "overheads_us"},
              {"kernels", "contention", "nodes"}, version);
  MachineProfile profile;
  profile.name = readString(root, "", "name");
  if (root.contains("description")) profile.description = readString(root, "", "description");
  if (root.contains("sources")) {
    const Json& sources = root["sources"];
    if (!sources.is_object()) reject("sources", "expected an object of strings, got " + shown(sources));
    for (const auto& [key, text] : sources.items())
      if (!text.is_string()) reject(child("sources", key), "expected a string, got " + shown(text));
  }
  readRank(root["rank"], profile);
  readGemm(root["gemm"], profile, version);
  readMemory(root["memory"], profile, version);
  if (root.contains("kernels")) readKernels(root["kernels"], profile);
  readCommunication(root["communication"], profile, version);
  if (root.contains("nodes")) readNodes(root["nodes"], profile);
  readOverheads(root["overheads_us"], profile, version);
  if (root.contains("contention")) readContention(root["contention"], profile);
  // Measured times fall with size only by noise (a calibrated CPU's small
  // copies, a shared GPU's launch-bound GEMMs): priced as read, a larger
  // operation would come out faster than a smaller one, and the passes
  // that compare predictions would pick by noise.
  makeTimesNonDecreasing(profile);
  return profile;
}

// 1-based line and column of the character at `offset` (nlohmann counts the
// bytes it has read, so the offending byte is the last one read).
SourceLoc locationAt(std::string_view text, size_t bytesRead) {
  size_t offset = std::min(bytesRead > 0 ? bytesRead - 1 : 0, text.size());
  size_t lineStart = 0;
  uint32_t line = 1;
  for (size_t i = 0; i < offset; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return SourceLoc{line, static_cast<uint32_t>(offset - lineStart + 1)};
}

// nlohmann's message without its "[json.exception.KIND.ID] " tag and, for
// parse errors, the "parse error at line L, column C: " that the
// diagnostic's position replaces.
std::string jsonErrorMessage(std::string_view what) {
  if (what.starts_with("[json.exception.")) {
    size_t tagEnd = what.find("] ");
    if (tagEnd != std::string_view::npos) what.remove_prefix(tagEnd + 2);
  }
  if (what.starts_with("parse error")) {
    size_t colon = what.find(": ");
    if (colon != std::string_view::npos) what.remove_prefix(colon + 2);
  }
  // The parser quotes the offending token whole ("number overflow parsing
  // '111...'"): its start says enough.
  constexpr size_t kShownBytes = 160;
  if (what.size() > kShownBytes) return fmt::format("{}... ({} bytes)", what.substr(0, kShownBytes), what.size());
  return std::string(what);
}

Json axisJson(const std::vector<int64_t>& axis) { return Json(axis); }

}  // namespace

Result<MachineProfile> parseMachineProfile(std::string_view jsonText, std::string_view fileName) {
  (void)fileName;  // the caller renders the diagnostic with it (renderDiagnostic)
  Json root;
  ParseGuard guard;
  try {
    root = Json::parse(jsonText.begin(), jsonText.end(), guard);
  } catch (const ProfileError& error) {
    return Diagnostic{{}, error.message};
  } catch (const Json::parse_error& error) {
    return Diagnostic{locationAt(jsonText, error.byte), jsonErrorMessage(error.what())};
  } catch (const Json::exception& error) {  // a number out of range: no position, but its key path
    return Diagnostic{{}, fmt::format("{}: {}", guard.path("the profile"), jsonErrorMessage(error.what()))};
  }
  try {
    return readProfile(root);
  } catch (const ProfileError& error) {
    return Diagnostic{{}, error.message};
  }
}

namespace {

// A spread as the reader accepts it: beyond kSpread's bound a figure says
// nothing more (a calibration forced on a busy machine can measure one), so
// it is written as the bound rather than as a file the reader refuses.
double writtenSpread(double spread) {
  return std::isfinite(spread) ? std::clamp(spread, kSpread.lo, kSpread.hi) : kSpread.hi;
}

Json spreadsJson(const std::vector<double>& spreads) {
  Json json = Json::array();
  for (double spread : spreads) json.push_back(writtenSpread(spread));
  return json;
}

Json memoryJson(const MemoryCurve& memory) {
  Json json;
  json["bytes"] = axisJson(memory.bytes);
  json["gbps"] = memory.gbps;
  if (!memory.spread.empty()) json["spread"] = spreadsJson(memory.spread);
  if (!memory.stridedRunBytes.empty()) {
    Json& strided = json["strided"];
    strided["run_bytes"] = axisJson(memory.stridedRunBytes);
    strided["slowdown"] = memory.stridedSlowdown;
    if (!memory.stridedSpread.empty()) strided["spread"] = spreadsJson(memory.stridedSpread);
  }
  return json;
}

// `kernels`, or null when nothing in it was measured.
Json kernelsJson(const KernelRates& kernels) {
  Json json = Json::object();
  if (!kernels.elementwise.bytes.empty()) json["elementwise"] = memoryJson(kernels.elementwise);
  if (!kernels.rowReduction.bytes.empty()) json["row_reduction"] = memoryJson(kernels.rowReduction);
  if (!kernels.attention.empty()) {
    Json attention = Json::object();
    for (const auto& [dtype, grid] : kernels.attention) {
      Json rates;
      rates["t"] = axisJson(grid.t);
      rates["d"] = axisJson(grid.d);
      rates["tflops"] = grid.tflops;
      if (!grid.spread.empty()) rates["spread"] = spreadsJson(grid.spread);
      attention[std::string(dtypeName(dtype))] = std::move(rates);
    }
    json["attention"] = std::move(attention);
  }
  return json.empty() ? Json() : json;
}

// The writer's `overheads_us`.
Json overheadsJson(const Overheads& o) {
  Json overheads;
  overheads["issue"] = o.issueMicros;
  overheads["launch"] = o.launchMicros;
  overheads["sync"] = o.syncMicros;
  overheads["wakeup"] = o.wakeupMicros;
  if (o.issueSpread != 0 || o.launchSpread != 0 || o.syncSpread != 0 || o.wakeupSpread != 0)
    overheads["spread"] = Json{{"issue", writtenSpread(o.issueSpread)},
                               {"launch", writtenSpread(o.launchSpread)},
                               {"sync", writtenSpread(o.syncSpread)},
                               {"wakeup", writtenSpread(o.wakeupSpread)}};
  if (!o.issueMicrosByOp.empty()) {
    Json byOp = Json::object();
    for (const auto& [kind, micros] : o.issueMicrosByOp) byOp[std::string(signatureOf(kind).name)] = micros;
    overheads["issue_by_op"] = std::move(byOp);
  }
  return overheads;
}

}  // namespace

std::string machineProfileJson(const MachineProfile& profile) {
  Json root;
  root["format"] = kFormat;
  root["version"] = kVersion;
  root["name"] = profile.name;
  root["description"] = profile.description;
  Json& rank = root["rank"];
  rank["admission"] = admissionName(profile.admission);
  rank["compute_units"] = profile.computeUnits;
  rank["gemm_units"] = profile.gemmUnits;
  rank["elementwise_units"] = profile.elementwiseUnits;
  rank["communication_units"] = profile.communicationUnits;
  // The format keeps a peak inside its dtype's grid: a peak without a grid
  // bounds no GEMM, so it is not written.
  Json gemm = Json::object();
  for (const auto& [dtype, grid] : profile.gemm) {
    Json rates;
    if (auto peak = profile.peakTflops.find(dtype); peak != profile.peakTflops.end())
      rates["peak_tflops"] = peak->second;
    rates["m"] = axisJson(grid.m);
    rates["n"] = axisJson(grid.n);
    rates["k"] = axisJson(grid.k);
    rates["tflops"] = grid.tflops;
    if (!grid.spread.empty()) rates["spread"] = spreadsJson(grid.spread);
    gemm[std::string(dtypeName(dtype))] = std::move(rates);
  }
  root["gemm"] = std::move(gemm);
  root["memory"] = memoryJson(profile.memory);
  if (Json kernels = kernelsJson(profile.kernels); !kernels.is_null()) root["kernels"] = std::move(kernels);
  Json communication = Json::array();
  for (const CommunicationCost& cost : profile.communication) {
    Json entry;
    entry["kind"] = commKindName(cost.kind);
    entry["ranks"] = cost.ranks;
    entry["algorithm"] = algorithmName(cost.algorithm);
    entry["latency_us"] = cost.latencyMicros;
    entry["busbw_gbps"] = cost.busGbps;
    if (!cost.measuredBytes.empty()) {
      entry["bytes"] = cost.measuredBytes;
      entry["us"] = cost.measuredMicros;
      if (!cost.measuredSpread.empty()) entry["measured_spread"] = spreadsJson(cost.measuredSpread);
    }
    if (cost.spread != 0) entry["spread"] = writtenSpread(cost.spread);
    communication.push_back(std::move(entry));
  }
  root["communication"] = std::move(communication);
  if (profile.ranksPerNode > 0) {
    Json& nodes = root["nodes"];
    nodes["ranks_per_node"] = profile.ranksPerNode;
    if (profile.nicBusGbps > 0) nodes["nic_busbw_gbps"] = profile.nicBusGbps;
  }
  root["overheads_us"] = overheadsJson(profile.overheads);
  if (!profile.contention.empty()) {
    Json contention = Json::array();
    for (const Contention& c : profile.contention) {
      Json entry;
      entry["slowed"] = workClassName(c.slowed);
      entry["beside"] = workClassName(c.beside);
      entry["rate"] = c.rate;
      if (c.spread != 0) entry["spread"] = writtenSpread(c.spread);
      contention.push_back(std::move(entry));
    }
    root["contention"] = std::move(contention);
  }
  // Invalid UTF-8 (a host name, say) is replaced rather than thrown.
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string_view workClassName(WorkClass workClass) {
  for (const auto& [value, name] : kWorkClasses)
    if (value == workClass) return name;
  return "?";
}

WorkClass communicationClassOf(CommunicationCarrier carrier) {
  return carrier == CommunicationCarrier::CopyEngines ? WorkClass::CopyEngineCommunication : WorkClass::Communication;
}

double assumedContentionRate(WorkClass slowed, WorkClass beside) {
  if (slowed == beside) return 1;
  // The copy engines move bytes without SMs: a compute-bound GEMM neither
  // slows them nor is slowed by them (docs/machine-profiles.md).
  const bool copyEngines = slowed == WorkClass::CopyEngineCommunication || beside == WorkClass::CopyEngineCommunication;
  if (copyEngines && (slowed == WorkClass::Gemm || beside == WorkClass::Gemm)) return 1;
  // Every other pair shares the device (the SMs, or the memory bandwidth both
  // need): each keeps half. Nothing runs beside other work for free unless measured.
  return 0.5;
}

double contentionRate(const MachineProfile& profile, WorkClass slowed, WorkClass beside) {
  if (slowed == beside || profile.contention.empty()) return 1;
  for (const Contention& c : profile.contention)
    if (c.slowed == slowed && c.beside == beside) return c.rate;
  return assumedContentionRate(slowed, beside);
}

namespace {

// A figure moved to an edge of its spread, kept in its range (a time
// grows with the slow edge, a rate shrinks).
double atEdge(double value, double spread, SpreadEdge edge, bool isTime, const Range& range) {
  if (spread <= 0) return value;
  const bool slower = edge == SpreadEdge::Slow;
  const double moved = (slower == isTime) ? value * (1 + spread) : value / (1 + spread);
  return std::clamp(moved, range.lo, range.hi);
}

double spreadAt(const std::vector<double>& spreads, size_t i) { return i < spreads.size() ? spreads[i] : 0; }

}  // namespace

bool hasSpread(const MachineProfile& profile) {
  auto any = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double s) { return s > 0; });
  };
  for (const auto& [dtype, grid] : profile.gemm)
    if (any(grid.spread)) return true;
  if (any(profile.memory.spread) || any(profile.memory.stridedSpread)) return true;
  if (any(profile.kernels.elementwise.spread) || any(profile.kernels.rowReduction.spread)) return true;
  for (const auto& [dtype, grid] : profile.kernels.attention)
    if (any(grid.spread)) return true;
  for (const CommunicationCost& cost : profile.communication)
    if (cost.spread > 0 || any(cost.measuredSpread)) return true;
  const Overheads& o = profile.overheads;
  if (o.issueSpread > 0 || o.launchSpread > 0 || o.syncSpread > 0 || o.wakeupSpread > 0) return true;
  for (const Contention& c : profile.contention)
    if (c.spread > 0) return true;
  return false;
}

MachineProfile atSpreadEdge(const MachineProfile& profile, SpreadEdge edge) {
  MachineProfile p = profile;
  for (auto& [dtype, grid] : p.gemm)
    for (size_t i = 0; i < grid.tflops.size(); ++i)
      grid.tflops[i] = atEdge(grid.tflops[i], spreadAt(grid.spread, i), edge, false, kTflops);
  for (size_t i = 0; i < p.memory.gbps.size(); ++i)
    p.memory.gbps[i] = atEdge(p.memory.gbps[i], spreadAt(p.memory.spread, i), edge, false, kGbps);
  for (MemoryCurve* curve : {&p.kernels.elementwise, &p.kernels.rowReduction})
    for (size_t i = 0; i < curve->gbps.size(); ++i)
      curve->gbps[i] = atEdge(curve->gbps[i], spreadAt(curve->spread, i), edge, false, kGbps);
  for (auto& [dtype, grid] : p.kernels.attention)
    for (size_t i = 0; i < grid.tflops.size(); ++i)
      grid.tflops[i] = atEdge(grid.tflops[i], spreadAt(grid.spread, i), edge, false, kTflops);
  for (size_t i = 0; i < p.memory.stridedSlowdown.size(); ++i)
    p.memory.stridedSlowdown[i] =
        atEdge(p.memory.stridedSlowdown[i], spreadAt(p.memory.stridedSpread, i), edge, true, kSlowdown);
  for (CommunicationCost& cost : p.communication) {
    cost.latencyMicros = atEdge(cost.latencyMicros, cost.spread, edge, true, kOverheadMicros);
    cost.busGbps = atEdge(cost.busGbps, cost.spread, edge, false, kGbps);
    for (size_t i = 0; i < cost.measuredMicros.size(); ++i)
      cost.measuredMicros[i] =
          atEdge(cost.measuredMicros[i], spreadAt(cost.measuredSpread, i), edge, true, kMeasuredMicros);
  }
  Overheads& o = p.overheads;
  o.issueMicros = atEdge(o.issueMicros, o.issueSpread, edge, true, kOverheadMicros);
  for (auto& [kind, micros] : o.issueMicrosByOp) micros = atEdge(micros, o.issueSpread, edge, true, kOverheadMicros);
  o.launchMicros = atEdge(o.launchMicros, o.launchSpread, edge, true, kOverheadMicros);
  o.syncMicros = atEdge(o.syncMicros, o.syncSpread, edge, true, kOverheadMicros);
  o.wakeupMicros = atEdge(o.wakeupMicros, o.wakeupSpread, edge, true, kOverheadMicros);
  for (Contention& c : p.contention) c.rate = atEdge(c.rate, c.spread, edge, false, kContentionRate);
  // Each point moves by its own spread, which can reorder neighbouring times.
  makeTimesNonDecreasing(p);
  return p;
}

std::vector<std::string> shippedMachineProfiles() {
  std::vector<std::string> names;
  for (const auto& [name, text] : shipped::profileTexts()) names.emplace_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Result<MachineProfile> loadMachineProfile(std::string_view nameOrPath) {
  for (const auto& [name, text] : shipped::profileTexts())
    if (name == nameOrPath) return parseMachineProfile(text, fmt::format("profiles/{}.json", name));
  bool isPath = nameOrPath.find('/') != std::string_view::npos || nameOrPath.ends_with(".json");
  if (!isPath) {
    std::string known;
    for (const std::string& name : shippedMachineProfiles()) known += (known.empty() ? "" : ", ") + name;
    return Diagnostic{{}, fmt::format("unknown machine '{}': expected a profile file or one of {}", nameOrPath, known)};
  }
  std::string path(nameOrPath);
  Result<std::string> text = readBoundedFile(path, kMaxProfileFileBytes, "profile");
  if (!text) return text.error();  // the caller names the file
  return parseMachineProfile(*text, path);
}

}  // namespace hostir
