#include "model/machine_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hostir/limits.h"

namespace hostir {
namespace {

// A small valid profile: every section, a "source" and "sources" that the
// reader must accept and ignore.
constexpr const char* kProfile = R"({
  "format": "hostir-machine-profile",
  "version": 1,
  "name": "test",
  "description": "a made-up machine",
  "sources": {"everything": "made up for the test"},
  "rank": {"admission": "concurrent", "compute_units": 8, "gemm_units": 0, "elementwise_units": 4, "communication_units": 2},
  "gemm": {
    "source": "made up",
    "bf16": {"peak_tflops": 100, "m": [64, 256, 1024], "n": [64, 256], "k": [64, 256],
             "tflops": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "source": "made up"},
    "f32": {"m": [128], "n": [128], "k": [128], "tflops": [0.5]}
  },
  "memory": {"bytes": [1024, 1048576], "gbps": [10, 100]},
  "communication": [
    {"kind": "allreduce", "ranks": 2, "algorithm": "ring", "latency_us": 10, "busbw_gbps": 100, "source": "made up"},
    {"kind": "allgather", "ranks": 4, "algorithm": "tree", "latency_us": 20, "busbw_gbps": 50}
  ],
  "overheads_us": {"issue": 1, "launch": 2, "sync": 3, "wakeup": 4}
})";

// kProfile with `from` replaced by `to` (which must occur exactly once).
std::string edited(std::string_view from, std::string_view to) {
  std::string text = kProfile;
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The first line of the error, as the tool prints it for file p.json.
std::string errorOf(const std::string& text) {
  auto profile = parseMachineProfile(text, "p.json");
  if (profile.ok()) return "(no error)";
  std::string rendered = renderDiagnostic(profile.error(), "p.json", text);
  return rendered.substr(0, rendered.find('\n'));
}

void expectSameProfile(const MachineProfile& a, const MachineProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.admission, b.admission);
  EXPECT_EQ(a.computeUnits, b.computeUnits);
  EXPECT_EQ(a.gemmUnits, b.gemmUnits);
  EXPECT_EQ(a.elementwiseUnits, b.elementwiseUnits);
  EXPECT_EQ(a.communicationUnits, b.communicationUnits);
  EXPECT_EQ(a.peakTflops, b.peakTflops);
  ASSERT_EQ(a.gemm.size(), b.gemm.size());
  for (const auto& [dtype, grid] : a.gemm) {
    ASSERT_TRUE(b.gemm.contains(dtype)) << dtypeName(dtype);
    const GemmGrid& other = b.gemm.at(dtype);
    EXPECT_EQ(grid.m, other.m);
    EXPECT_EQ(grid.n, other.n);
    EXPECT_EQ(grid.k, other.k);
    EXPECT_EQ(grid.tflops, other.tflops);
    EXPECT_EQ(grid.spread, other.spread);
  }
  EXPECT_EQ(a.memory.bytes, b.memory.bytes);
  EXPECT_EQ(a.memory.gbps, b.memory.gbps);
  EXPECT_EQ(a.memory.spread, b.memory.spread);
  EXPECT_EQ(a.memory.stridedRunBytes, b.memory.stridedRunBytes);
  EXPECT_EQ(a.memory.stridedSlowdown, b.memory.stridedSlowdown);
  EXPECT_EQ(a.memory.stridedSpread, b.memory.stridedSpread);
  for (auto [curve, other] : {std::pair{&a.kernels.elementwise, &b.kernels.elementwise},
                              std::pair{&a.kernels.rowReduction, &b.kernels.rowReduction}}) {
    EXPECT_EQ(curve->bytes, other->bytes);
    EXPECT_EQ(curve->gbps, other->gbps);
    EXPECT_EQ(curve->spread, other->spread);
  }
  ASSERT_EQ(a.kernels.attention.size(), b.kernels.attention.size());
  for (const auto& [dtype, grid] : a.kernels.attention) {
    ASSERT_TRUE(b.kernels.attention.contains(dtype)) << dtypeName(dtype);
    const AttentionGrid& other = b.kernels.attention.at(dtype);
    EXPECT_EQ(grid.t, other.t);
    EXPECT_EQ(grid.d, other.d);
    EXPECT_EQ(grid.tflops, other.tflops);
    EXPECT_EQ(grid.spread, other.spread);
  }
  ASSERT_EQ(a.communication.size(), b.communication.size());
  for (size_t i = 0; i < a.communication.size(); ++i) {
    EXPECT_EQ(a.communication[i].kind, b.communication[i].kind) << i;
    EXPECT_EQ(a.communication[i].ranks, b.communication[i].ranks) << i;
    EXPECT_EQ(a.communication[i].algorithm, b.communication[i].algorithm) << i;
    EXPECT_EQ(a.communication[i].latencyMicros, b.communication[i].latencyMicros) << i;
    EXPECT_EQ(a.communication[i].busGbps, b.communication[i].busGbps) << i;
    EXPECT_EQ(a.communication[i].measuredBytes, b.communication[i].measuredBytes) << i;
    EXPECT_EQ(a.communication[i].measuredMicros, b.communication[i].measuredMicros) << i;
    EXPECT_EQ(a.communication[i].measuredSpread, b.communication[i].measuredSpread) << i;
    EXPECT_EQ(a.communication[i].spread, b.communication[i].spread) << i;
  }
  EXPECT_EQ(a.overheads.issueMicros, b.overheads.issueMicros);
  EXPECT_EQ(a.overheads.launchMicros, b.overheads.launchMicros);
  EXPECT_EQ(a.overheads.syncMicros, b.overheads.syncMicros);
  EXPECT_EQ(a.overheads.wakeupMicros, b.overheads.wakeupMicros);
  EXPECT_EQ(a.overheads.issueMicrosByOp, b.overheads.issueMicrosByOp);
  EXPECT_EQ(a.overheads.issueSpread, b.overheads.issueSpread);
  EXPECT_EQ(a.overheads.launchSpread, b.overheads.launchSpread);
  EXPECT_EQ(a.overheads.syncSpread, b.overheads.syncSpread);
  EXPECT_EQ(a.overheads.wakeupSpread, b.overheads.wakeupSpread);
  ASSERT_EQ(a.contention.size(), b.contention.size());
  for (size_t i = 0; i < a.contention.size(); ++i) {
    EXPECT_EQ(a.contention[i].slowed, b.contention[i].slowed) << i;
    EXPECT_EQ(a.contention[i].beside, b.contention[i].beside) << i;
    EXPECT_EQ(a.contention[i].rate, b.contention[i].rate) << i;
    EXPECT_EQ(a.contention[i].spread, b.contention[i].spread) << i;
  }
}

TEST(MachineProfileTest, ReadsEveryField) {
  auto parsed = parseMachineProfile(kProfile, "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json");
  const MachineProfile& p = *parsed;
  EXPECT_EQ(p.name, "test");
  EXPECT_EQ(p.description, "a made-up machine");
  EXPECT_EQ(p.admission, Admission::Concurrent);
  EXPECT_EQ(p.computeUnits, 8);
  EXPECT_EQ(p.gemmUnits, 0);
  EXPECT_EQ(p.elementwiseUnits, 4);
  EXPECT_EQ(p.communicationUnits, 2);
  EXPECT_EQ(p.peakTflops, (std::map<DType, double>{{DType::BF16, 100}}));  // f32 has no peak: no bound
  ASSERT_TRUE(p.gemm.contains(DType::BF16));
  EXPECT_EQ(p.gemm.at(DType::BF16).m, (std::vector<int64_t>{64, 256, 1024}));
  EXPECT_EQ(p.gemm.at(DType::BF16).tflops.size(), 12u);
  EXPECT_EQ(p.gemm.at(DType::F32).tflops, std::vector<double>{0.5});
  EXPECT_EQ(p.memory.bytes, (std::vector<int64_t>{1024, 1048576}));
  ASSERT_EQ(p.communication.size(), 2u);
  EXPECT_EQ(p.communication[1].kind, OpKind::Allgather);
  EXPECT_EQ(p.communication[1].ranks, 4);
  EXPECT_EQ(p.communication[1].algorithm, CommAlgorithm::Tree);
  EXPECT_EQ(p.communication[1].latencyMicros, 20);
  EXPECT_EQ(p.communication[1].busGbps, 50);
  EXPECT_EQ(p.overheads.wakeupMicros, 4);
}

TEST(MachineProfileTest, RoundTripsThroughItsJson) {
  auto parsed = parseMachineProfile(kProfile, "p.json");
  ASSERT_TRUE(parsed.ok());
  std::string json = machineProfileJson(*parsed);
  auto reparsed = parseMachineProfile(json, "written.json");
  ASSERT_TRUE(reparsed.ok()) << renderDiagnostic(reparsed.error(), "written.json", json);
  expectSameProfile(*parsed, *reparsed);
  EXPECT_EQ(machineProfileJson(*reparsed), json);
}

TEST(MachineProfileTest, RoundTripsAFilledStructExactly) {
  // What calibrate writes: measured doubles with every digit, a CPU rank.
  MachineProfile p;
  p.name = "calibrated on host \"x\"";
  p.description = "line one\nline two";
  p.admission = Admission::IssueOrder;
  p.computeUnits = 16;
  p.gemmUnits = 1;
  p.elementwiseUnits = 1;
  p.communicationUnits = 1;
  p.peakTflops[DType::F32] = 1.0 / 3.0;
  // Times that grow with the size, as the reader keeps them (point_times.h).
  p.gemm[DType::F32] = GemmGrid{{1, 7}, {3}, {5, 9, 4096}, {0.1, 0.15, 0.30000000000000004, 0.5, 2.5e-3, 1e-5}};
  p.gemm[DType::F64] = GemmGrid{{8}, {8}, {8}, {0.012345678901234567}};
  p.memory = MemoryCurve{{4096, 1 << 20, int64_t{1} << 40}, {12.3456789, 45.6, 7.000000000000001}};
  p.communication = {{OpKind::Allreduce, 2, CommAlgorithm::Ring, 0, 1.5, {1024, 65536}, {3.25, 17.5}},
                     {OpKind::ReduceScatter, 3, CommAlgorithm::Flat, 12.25, 0.1, {}, {}},
                     {OpKind::Broadcast, 1024, CommAlgorithm::Tree, 1e3, 3e2, {}, {}}};
  p.overheads = Overheads{0.123, 4.56, 0, 7.0000001};
  std::string json = machineProfileJson(p);
  auto parsed = parseMachineProfile(json, "calibrated.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "calibrated.json", json);
  expectSameProfile(p, *parsed);
}

TEST(MachineProfileTest, WritesTheDocumentedKeyOrder) {
  auto parsed = parseMachineProfile(kProfile, "p.json");
  ASSERT_TRUE(parsed.ok());
  std::string json = machineProfileJson(*parsed);
  size_t last = 0;
  for (const char* key : {"\"format\"",
                          "\"version\"",
                          "\"name\"",
                          "\"description\"",
                          "\"rank\"",
                          "\"admission\"",
                          "\"compute_units\"",
                          "\"gemm_units\"",
                          "\"elementwise_units\"",
                          "\"communication_units\"",
                          "\"gemm\"",
                          "\"bf16\"",
                          "\"peak_tflops\"",
                          "\"tflops\"",
                          "\"memory\"",
                          "\"bytes\"",
                          "\"gbps\"",
                          "\"communication\"",
                          "\"kind\"",
                          "\"ranks\"",
                          "\"algorithm\"",
                          "\"latency_us\"",
                          "\"busbw_gbps\"",
                          "\"overheads_us\"",
                          "\"issue\"",
                          "\"launch\"",
                          "\"sync\"",
                          "\"wakeup\""}) {
    size_t at = json.find(key, last);
    ASSERT_NE(at, std::string::npos) << key << " missing or out of order in\n" << json;
    last = at;
  }
  EXPECT_EQ(json.rfind("{\n  \"format\": \"hostir-machine-profile\",\n  \"version\": 3,\n", 0), 0u) << json;
}

// `nodes` (version 3): read, written after the communication entries, and
// refused in an older profile or as a fraction of a rank.
TEST(MachineProfileTest, ReadsAndWritesTheNodes) {
  // kProfile at `version` with `nodes` before its overheads.
  const auto withNodes = [](int version, const std::string& nodes) {
    std::string text = edited("\"overheads_us\"", "\"nodes\": " + nodes + ", \"overheads_us\"");
    return text.replace(text.find("\"version\": 1"), 12, "\"version\": " + std::to_string(version));
  };
  auto parsed = parseMachineProfile(withNodes(3, R"({"ranks_per_node": 8, "nic_busbw_gbps": 46.0})"), "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json");
  EXPECT_EQ(parsed->ranksPerNode, 8);
  EXPECT_EQ(parsed->nicBusGbps, 46.0);
  const std::string json = machineProfileJson(*parsed);
  EXPECT_LT(json.find("\"communication\""), json.find("\"nodes\"")) << json;
  EXPECT_LT(json.find("\"ranks_per_node\": 8"), json.find("\"overheads_us\"")) << json;
  auto again = parseMachineProfile(json, "q.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->ranksPerNode, 8);
  EXPECT_EQ(again->nicBusGbps, 46.0);
  EXPECT_EQ(errorOf(withNodes(2, R"({"ranks_per_node": 8})")),
            "p.json: error: nodes: a version 3 key in a version 2 profile (write \"version\": 3)");
  EXPECT_EQ(errorOf(withNodes(3, R"({"ranks_per_node": 2.5})")),
            "p.json: error: nodes.ranks_per_node: expected a whole number of ranks, got 2.5");
  for (const std::string name : {"h100-nvlink", "h200-nvlink"}) {
    auto shipped = loadMachineProfile(name);
    ASSERT_TRUE(shipped.ok());
    EXPECT_EQ(shipped->ranksPerNode, 8) << name;
    EXPECT_EQ(shipped->nicBusGbps, 46.0) << name;
  }
}

TEST(MachineProfileTest, ShipsTheGpuProfiles) {
  EXPECT_EQ(shippedMachineProfiles(),
            (std::vector<std::string>{"h100-nvlink", "h100-shared", "h200-nvlink", "h200-shared"}));
  for (const std::string& name : shippedMachineProfiles()) {
    auto profile = loadMachineProfile(name);
    ASSERT_TRUE(profile.ok()) << name << ": " << renderDiagnostic(profile.error(), name);
    EXPECT_EQ(profile->name, name);
    EXPECT_EQ(profile->admission, Admission::Concurrent);
    auto reparsed = parseMachineProfile(machineProfileJson(*profile), name + ".json");
    ASSERT_TRUE(reparsed.ok());
    expectSameProfile(*profile, *reparsed);
    for (DType dtype : {DType::BF16, DType::F16, DType::F32, DType::F64}) {
      EXPECT_TRUE(profile->gemm.contains(dtype)) << name << " " << dtypeName(dtype);
      EXPECT_TRUE(profile->peakTflops.contains(dtype)) << name << " " << dtypeName(dtype);
    }
  }
}

// Two ranks on one H100 through the copy-engine communicator: half the
// device each, and every communication of a 2-rank team priced.
TEST(MachineProfileTest, TheSharedH100IsHalfADevicePerRank) {
  auto shared = loadMachineProfile("h100-shared");
  auto whole = loadMachineProfile("h100-nvlink");
  ASSERT_TRUE(shared.ok() && whole.ok());
  EXPECT_EQ(shared->computeUnits * 2, whole->computeUnits);
  EXPECT_DOUBLE_EQ(shared->peakTflops.at(DType::F32) * 2, whole->peakTflops.at(DType::F32));
  for (OpKind kind :
       {OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter, OpKind::Broadcast, OpKind::SendRecv}) {
    bool found = false;
    for (const CommunicationCost& cost : shared->communication) found |= cost.kind == kind && cost.ranks == 2;
    EXPECT_TRUE(found) << static_cast<int>(kind);
  }
}

TEST(MachineProfileTest, TheNvlinkProfilesPriceEveryTeamOnRings) {
  for (const std::string name : {"h100-nvlink", "h200-nvlink"}) {
    auto profile = loadMachineProfile(name);
    ASSERT_TRUE(profile.ok()) << name << ": " << renderDiagnostic(profile.error(), name);
    EXPECT_EQ(profile->computeUnits, 132);
    for (OpKind kind : {OpKind::Allreduce, OpKind::Allgather, OpKind::ReduceScatter, OpKind::Broadcast})
      for (int64_t ranks : {2, 4, 8, 16, 64, 1024}) {
        bool found = false;
        for (const CommunicationCost& cost : profile->communication)
          found |= cost.kind == kind && cost.ranks == ranks && cost.algorithm == CommAlgorithm::Ring;
        EXPECT_TRUE(found) << name << ": no ring entry for " << static_cast<int>(kind) << " on " << ranks;
      }
  }
}

TEST(MachineProfileTest, LoadsAProfileFileByPath) {
  std::string path = std::string(HOSTIR_SOURCE_DIR) + "/profiles/h100-nvlink.json";
  auto fromFile = loadMachineProfile(path);
  ASSERT_TRUE(fromFile.ok()) << renderDiagnostic(fromFile.error(), path);
  auto shipped = loadMachineProfile("h100-nvlink");
  ASSERT_TRUE(shipped.ok());
  expectSameProfile(*fromFile, *shipped);

  // A name ending in .json is a path even without a slash.
  std::string local = testing::TempDir() + "/machine_profile_test_local.json";
  { std::ofstream(local) << kProfile; }
  auto fromTemp = loadMachineProfile(local);
  EXPECT_TRUE(fromTemp.ok());
  std::remove(local.c_str());
}

TEST(MachineProfileTest, ReportsAMissingFile) {
  auto profile = loadMachineProfile("no/such/p.json");
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().message, "cannot open the profile: No such file or directory");
  auto bare = loadMachineProfile("missing.json");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.error().message, "cannot open the profile: No such file or directory");
}

TEST(MachineProfileTest, UnknownNamesListTheShippedProfiles) {
  auto profile = loadMachineProfile("a100");
  ASSERT_FALSE(profile.ok());
  EXPECT_EQ(profile.error().message,
            "unknown machine 'a100': expected a profile file or one of h100-nvlink, h100-shared, h200-nvlink, "
            "h200-shared");
}

TEST(MachineProfileTest, MalformedJsonNamesTheLineAndColumn) {
  std::string text = edited("\"name\": \"test\"", "\"name\": test");
  EXPECT_EQ(errorOf(text),
            "p.json:4:12: error: syntax error while parsing value - invalid literal; last read: '\"name\": te'");
  EXPECT_EQ(errorOf(edited("\"wakeup\": 4}", "\"wakeup\": 4")),
            "p.json:20:2: error: syntax error while parsing object - unexpected end of input; expected '}'");
  EXPECT_EQ(errorOf(""),
            "p.json:1:1: error: syntax error while parsing value - unexpected end of input; expected '[', '{', or a "
            "literal");
}

TEST(MachineProfileTest, RejectsAnotherFormatOrVersion) {
  EXPECT_EQ(errorOf(edited("\"hostir-machine-profile\"", "\"chrome-trace\"")),
            "p.json: error: format: expected \"hostir-machine-profile\", got \"chrome-trace\" (is this a hostir "
            "machine profile?)");
  EXPECT_EQ(errorOf(edited("\"version\": 1", "\"version\": 4")),
            "p.json: error: version: expected 1 to 3, got 4 (this hostir reads versions 1 to 3)");
  EXPECT_EQ(errorOf("[1, 2]"), "p.json: error: the profile: expected an object, got [1,2]");
}

TEST(MachineProfileTest, RejectsUnknownKeys) {
  EXPECT_EQ(errorOf(edited("\"compute_units\"", "\"compute_unit\"")),
            "p.json: error: rank.compute_unit: unknown key (expected one of admission, compute_units, gemm_units, "
            "elementwise_units, communication_units)");
  EXPECT_EQ(errorOf(edited("\"overheads_us\"", "\"overheads\"")),
            "p.json: error: overheads: unknown key (expected one of format, version, name, description, sources, "
            "rank, gemm, memory, communication, overheads_us)");
  EXPECT_EQ(errorOf(edited("\"latency_us\": 20", "\"latency\": 20")),
            "p.json: error: communication[1].latency: unknown key (expected one of kind, ranks, algorithm, "
            "latency_us, busbw_gbps, bytes, us)");
  EXPECT_EQ(errorOf(edited("11, 12], \"source\": \"made up\"", "11, 12], \"source\": 3")),
            "p.json: error: gemm.bf16.source: expected a string, got 3");
  EXPECT_EQ(errorOf(edited("\"made up for the test\"", "1")),
            "p.json: error: sources.everything: expected a string, got 1");
}

TEST(MachineProfileTest, RejectsMissingKeys) {
  EXPECT_EQ(errorOf(edited(", \"wakeup\": 4", "")), "p.json: error: overheads_us: missing key 'wakeup'");
  EXPECT_EQ(errorOf(edited("\"admission\": \"concurrent\", ", "")), "p.json: error: rank: missing key 'admission'");
  EXPECT_EQ(errorOf(edited("\"name\": \"test\",", "")), "p.json: error: missing key 'name'");
  EXPECT_EQ(errorOf(edited(", \"busbw_gbps\": 50", "")), "p.json: error: communication[1]: missing key 'busbw_gbps'");
}

TEST(MachineProfileTest, RejectsAWrongNumberOfRates) {
  EXPECT_EQ(errorOf(edited("9, 10, 11, 12]", "9, 10, 11]")),
            "p.json: error: gemm.bf16.tflops: expected 12 values (m x n x k = 3 x 2 x 2), got 11");
  EXPECT_EQ(errorOf(edited("\"gbps\": [10, 100]", "\"gbps\": [10]")),
            "p.json: error: memory.gbps: expected 2 values (one per bytes value), got 1");
  EXPECT_EQ(errorOf(edited("\"memory\": {\"bytes\": [1024, 1048576], \"gbps\": [10, 100]}",
                           "\"memory\": {\"bytes\": [], \"gbps\": []}")),
            "p.json: error: memory.bytes: expected at least one value");
}

TEST(MachineProfileTest, RejectsAxesThatDoNotAscend) {
  EXPECT_EQ(errorOf(edited("[64, 256, 1024]", "[64, 1024, 256]")),
            "p.json: error: gemm.bf16.m[2]: 256 does not exceed the value before it, 1024 (the values must ascend)");
  EXPECT_EQ(errorOf(edited("\"n\": [64, 256]", "\"n\": [64, 64]")),
            "p.json: error: gemm.bf16.n[1]: 64 does not exceed the value before it, 64 (the values must ascend)");
  EXPECT_EQ(errorOf(edited("\"k\": [64, 256]", "\"k\": [0, 256]")),
            "p.json: error: gemm.bf16.k[0]: expected a positive integer, got 0");
  EXPECT_EQ(errorOf(edited("[1024, 1048576]", "[1024.5, 1048576]")),
            "p.json: error: memory.bytes[0]: expected a positive integer, got 1024.5");
}

// Every figure must lie in a range some machine could have: beyond it the
// simulator's times would be infinite or lose every digit (an overhead of
// 1e308 us, a rate of 1e-308 TFLOPS).
TEST(MachineProfileTest, RejectsFiguresOutsideTheirSaneRanges) {
  EXPECT_EQ(errorOf(edited("[1, 2, 3,", "[-1, 2, 3,")),
            "p.json: error: gemm.bf16.tflops[0]: expected a number from 1e-06 to 1e+06 TFLOPS, got -1");
  EXPECT_EQ(errorOf(edited("[1, 2, 3,", "[1e-308, 2, 3,")),
            "p.json: error: gemm.bf16.tflops[0]: expected a number from 1e-06 to 1e+06 TFLOPS, got 1e-308");
  EXPECT_EQ(errorOf(edited("\"peak_tflops\": 100", "\"peak_tflops\": 1e300")),
            "p.json: error: gemm.bf16.peak_tflops: expected a number from 1e-06 to 1e+06 TFLOPS, got 1e+300");
  EXPECT_EQ(errorOf(edited("\"gbps\": [10, 100]", "\"gbps\": [10, 0]")),
            "p.json: error: memory.gbps[1]: expected a number from 1e-06 to 1e+06 GB/s, got 0");
  EXPECT_EQ(errorOf(edited("\"busbw_gbps\": 100", "\"busbw_gbps\": \"fast\"")),
            "p.json: error: communication[0].busbw_gbps: expected a number, got \"fast\"");
  EXPECT_EQ(errorOf(edited("\"busbw_gbps\": 100", "\"busbw_gbps\": 1e-300")),
            "p.json: error: communication[0].busbw_gbps: expected a number from 1e-06 to 1e+06 GB/s, got 1e-300");
  EXPECT_EQ(errorOf(edited("\"peak_tflops\": 100", "\"peak_tflops\": 1e999")),
            "p.json: error: gemm.bf16.peak_tflops: number overflow parsing '1e999'");
  EXPECT_EQ(errorOf(edited("\"gbps\": [10, 100]", "\"gbps\": [10, 1e999]")),
            "p.json: error: memory.gbps[1]: number overflow parsing '1e999'");
  EXPECT_EQ(errorOf(edited("\"latency_us\": 10", "\"latency_us\": -1")),
            "p.json: error: communication[0].latency_us: expected a number from 0 to 1e+07 us, got -1");
  EXPECT_EQ(errorOf(edited("\"sync\": 3", "\"sync\": -0.5")),
            "p.json: error: overheads_us.sync: expected a number from 0 to 1e+07 us, got -0.5");
  EXPECT_EQ(errorOf(edited("\"sync\": 3", "\"sync\": 1e308")),
            "p.json: error: overheads_us.sync: expected a number from 0 to 1e+07 us, got 1e+308");
}

TEST(MachineProfileTest, RejectsBadUnits) {
  EXPECT_EQ(errorOf(edited("\"compute_units\": 8", "\"compute_units\": 0")),
            "p.json: error: rank.compute_units: expected a number from 1e-06 to 1e+06 units, got 0");
  EXPECT_EQ(errorOf(edited("\"communication_units\": 2", "\"communication_units\": 0")),
            "p.json: error: rank.communication_units: expected a number from 1e-06 to 1e+06 units, got 0");
  EXPECT_EQ(errorOf(edited("\"elementwise_units\": 4", "\"elementwise_units\": 9")),
            "p.json: error: rank.elementwise_units: 9 exceeds compute_units, 8");
  EXPECT_EQ(errorOf(edited("\"concurrent\"", "\"fifo\"")),
            "p.json: error: rank.admission: unknown admission 'fifo' (expected issue-order or concurrent)");
}

TEST(MachineProfileTest, RejectsUnknownNames) {
  EXPECT_EQ(errorOf(edited("\"bf16\": {", "\"fp8\": {")),
            "p.json: error: gemm.fp8: unknown dtype (expected one of f32, f16, bf16, f64)");
  EXPECT_EQ(errorOf(edited("\"allgather\"", "\"alltoall\"")),
            "p.json: error: communication[1].kind: unknown kind 'alltoall' (expected one of allreduce, allgather, "
            "reduce_scatter, all_to_all, broadcast, sendrecv)");
  EXPECT_EQ(errorOf(edited("\"tree\"", "\"butterfly\"")),
            "p.json: error: communication[1].algorithm: unknown algorithm 'butterfly' (expected one of ring, tree, "
            "flat)");
  EXPECT_EQ(errorOf(edited("\"ranks\": 2", "\"ranks\": 1")),
            "p.json: error: communication[0].ranks: expected at least 2 ranks, got 1");
}

TEST(MachineProfileTest, RejectsDuplicateCommunicationEntries) {
  std::string text = edited("\"ranks\": 4, \"algorithm\": \"tree\", \"latency_us\": 20, \"busbw_gbps\": 50}",
                            "\"ranks\": 4, \"algorithm\": \"tree\", \"latency_us\": 20, \"busbw_gbps\": 50},\n"
                            "    {\"kind\": \"allreduce\", \"ranks\": 4, \"algorithm\": \"tree\", \"latency_us\": 1, "
                            "\"busbw_gbps\": 1},\n"
                            "    {\"kind\": \"allgather\", \"ranks\": 4, \"algorithm\": \"tree\", \"latency_us\": 1, "
                            "\"busbw_gbps\": 1}");
  EXPECT_EQ(errorOf(text),
            "p.json: error: communication[3]: a second entry for allgather on 4 ranks with tree (the first is "
            "communication[1])");
}

// Hostile profiles: each refused with the file and the key path, never a
// crash, an unbounded read or a silent choice.
TEST(MachineProfileTest, AKeyGivenTwiceIsRefusedWithItsPath) {
  std::string top = edited("\"overheads_us\":", "\"communication\": [],\n  \"overheads_us\":");
  EXPECT_EQ(errorOf(top),
            "p.json: error: communication: the key is given twice (each key once: a later one would "
            "hide the first)");
  std::string nested = edited("\"latency_us\": 20,", "\"latency_us\": 20, \"latency_us\": 21,");
  EXPECT_EQ(errorOf(nested),
            "p.json: error: communication[1].latency_us: the key is given twice (each key once: a "
            "later one would hide the first)");
}

TEST(MachineProfileTest, AnErrorShowsOnlyTheStartOfALongKey) {
  const std::string key(1'000'000, 'k');
  std::string text = edited("\"overheads_us\":", "\"" + key + "\": 1,\n  \"overheads_us\":");
  EXPECT_EQ(errorOf(text), "p.json: error: " + std::string(80, 'k') +
                               "... (1000000 bytes): unknown key (expected one of " +
                               errorOf(edited("\"overheads_us\":", "\"k\": 1,\n  \"overheads_us\":"))
                                   .substr(std::string("p.json: error: k: unknown key (expected one of ").size()));
}

TEST(MachineProfileTest, NestingDeeperThanTheLimitIsRefused) {
  for (int depth : {kMaxProfileDepth + 1, 50'000}) {
    SCOPED_TRACE(depth);
    std::string deep = std::string(depth, '[') + std::string(depth, ']');
    std::string text = edited("\"sources\": {\"everything\": \"made up for the test\"}", "\"sources\": " + deep);
    std::string path;  // the root object, then the arrays that fit
    for (int level = 1; level < kMaxProfileDepth; ++level) path += "[0]";
    EXPECT_EQ(errorOf(text),
              fmt::format("p.json: error: sources{}: nested more than {} levels deep", path, kMaxProfileDepth));
  }
}

TEST(MachineProfileTest, AQuotedValueIsShownByItsStart) {
  std::string many = "[1";
  for (int i = 0; i < 10'000; ++i) many += ",1";
  many += "]";
  std::string value = errorOf(edited("\"compute_units\": 8", "\"compute_units\": " + many));
  EXPECT_LT(value.size(), 300u) << value;
  EXPECT_NE(value.find("... (20003 bytes)"), std::string::npos) << value;
  // A token the JSON parser itself quotes (a number too long for a double).
  std::string token = errorOf(edited("\"compute_units\": 8", "\"compute_units\": " + std::string(20'000, '1')));
  EXPECT_LT(token.size(), 300u) << token;
  EXPECT_NE(token.find("number overflow"), std::string::npos) << token;
}

TEST(MachineProfileTest, TeamsLargerThanAnyRunAreRefused) {
  std::string text = edited("\"ranks\": 4,", "\"ranks\": 9223372036854775807,");
  EXPECT_EQ(errorOf(text), fmt::format("p.json: error: communication[1].ranks: expected at most {} ranks (the "
                                       "largest team hostir runs or simulates), got 9223372036854775807",
                                       kMaxRanks));
}

TEST(MachineProfileTest, ADeviceOrAnOversizedFileIsReadOnlyToItsLimit) {
  auto zeros = loadMachineProfile("/dev/zero");
  ASSERT_FALSE(zeros.ok());
  EXPECT_EQ(zeros.error().message, fmt::format("the profile is longer than {} MiB; hostir reads profile "
                                               "files of at most {} MiB",
                                               kMaxProfileFileBytes >> 20, kMaxProfileFileBytes >> 20));
}

TEST(MachineProfileTest, MeasuredMessageSizesComeWithTheirTimes) {
  std::string text = kProfile;
  const std::string entry = "\"busbw_gbps\": 50";
  ASSERT_NE(text.find(entry), std::string::npos);
  text.replace(text.find(entry), entry.size(), entry + ", \"bytes\": [1024, 4096]");
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("'bytes' and 'us' come together"), std::string::npos) << parsed.error().message;
}

// kProfile as version 2, with every key version 2 adds.
constexpr const char* kVersion2Keys[][2] = {
    {"\"version\": 1", "\"version\": 2"},
    {"\"tflops\": [0.5]}", "\"tflops\": [0.5], \"spread\": [0.03]}"},
    {"\"gbps\": [10, 100]}", "\"gbps\": [10, 100], \"spread\": [0.1, 0.02]}"},
    {"\"latency_us\": 10, \"busbw_gbps\": 100,",
     "\"latency_us\": 10, \"busbw_gbps\": 100, \"bytes\": [1024, 4096], \"us\": [11, 14], "
     "\"measured_spread\": [0.05, 0.01], \"spread\": 0.05,"},
    {"\"wakeup\": 4}",
     "\"wakeup\": 4, \"spread\": {\"issue\": 0.2, \"sync\": 0.5},\n"
     "                   \"issue_by_op\": {\"linear\": 30, \"allreduce\": 100, \"source\": \"made up\"}},\n"
     "  \"contention\": [\n"
     "    {\"slowed\": \"communication\", \"beside\": \"gemm\", \"rate\": 0.25, \"spread\": 0.2, \"source\": \"made "
     "up\"},\n"
     "    {\"slowed\": \"gemm\", \"beside\": \"communication\", \"rate\": 0.9}\n"
     "  ]"},
};

std::string version2(std::string text = kProfile) {
  for (const auto& [from, to] : kVersion2Keys) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, std::string_view(from).size(), to);
  }
  return text;
}

std::string errorOfVersion2(std::string_view from, std::string_view to) {
  std::string text = version2();
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return errorOf(text);
}

TEST(MachineProfileTest, ReadsTheVersion2Keys) {
  const std::string text = version2();
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json", text);
  const MachineProfile& p = *parsed;
  EXPECT_EQ(p.gemm.at(DType::F32).spread, std::vector<double>{0.03});
  EXPECT_TRUE(p.gemm.at(DType::BF16).spread.empty());
  EXPECT_EQ(p.memory.spread, (std::vector<double>{0.1, 0.02}));
  EXPECT_EQ(p.communication[0].measuredSpread, (std::vector<double>{0.05, 0.01}));
  EXPECT_EQ(p.communication[0].spread, 0.05);
  EXPECT_EQ(p.communication[1].spread, 0);
  EXPECT_EQ(p.overheads.issueSpread, 0.2);
  EXPECT_EQ(p.overheads.launchSpread, 0);
  EXPECT_EQ(p.overheads.syncSpread, 0.5);
  EXPECT_EQ(p.overheads.issueMicrosByOp, (std::map<OpKind, double>{{OpKind::Linear, 30}, {OpKind::Allreduce, 100}}));
  ASSERT_EQ(p.contention.size(), 2u);
  EXPECT_EQ(p.contention[0].slowed, WorkClass::Communication);
  EXPECT_EQ(p.contention[0].beside, WorkClass::Gemm);
  EXPECT_EQ(p.contention[0].rate, 0.25);
  EXPECT_EQ(p.contention[0].spread, 0.2);
  EXPECT_EQ(p.contention[1].spread, 0);
  EXPECT_EQ(contentionRate(p, WorkClass::Communication, WorkClass::Gemm), 0.25);
  EXPECT_EQ(contentionRate(p, WorkClass::Gemm, WorkClass::Communication), 0.9);
  // A pair the table leaves out shares the device; a class beside itself shares units, not this.
  EXPECT_EQ(contentionRate(p, WorkClass::Memory, WorkClass::Gemm), 0.5);
  EXPECT_EQ(contentionRate(p, WorkClass::Gemm, WorkClass::Gemm), 1);
}

TEST(MachineProfileTest, AVersion1ProfileHasNoContentionNorSpreads) {
  auto parsed = parseMachineProfile(kProfile, "p.json");
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->contention.empty());
  EXPECT_TRUE(parsed->overheads.issueMicrosByOp.empty());
  EXPECT_FALSE(hasSpread(*parsed));
  for (WorkClass slowed : {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise, WorkClass::Communication})
    for (WorkClass beside : {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise, WorkClass::Communication})
      EXPECT_EQ(contentionRate(*parsed, slowed, beside), 1);
}

// The assumed pair table (docs/machine-profiles.md, "Assumed contention"),
// written out here as the docs state it: rows slowed, columns beside, in
// WorkClass order (gemm, memory, elementwise, communication on the SMs,
// communication on the copy engines).
constexpr WorkClass kAllClasses[] = {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise,
                                     WorkClass::Communication, WorkClass::CopyEngineCommunication};
constexpr double kAssumedTable[5][5] = {
    {1, 0.5, 0.5, 0.5, 1},    // gemm
    {0.5, 1, 0.5, 0.5, 0.5},  // memory
    {0.5, 0.5, 1, 0.5, 0.5},  // elementwise
    {0.5, 0.5, 0.5, 1, 0.5},  // communication (SMs)
    {1, 0.5, 0.5, 0.5, 1},    // communication (copy engines)
};

TEST(MachineProfileTest, EveryPairTheTableLeavesOutHasItsStatedAssumption) {
  // A table with one unrelated entry: every other pair takes the assumed figure.
  MachineProfile p;
  p.admission = Admission::Concurrent;
  p.contention = {{WorkClass::Memory, WorkClass::Elementwise, 0.7, 0}};
  for (size_t s = 0; s < 5; ++s)
    for (size_t b = 0; b < 5; ++b) {
      const WorkClass slowed = kAllClasses[s], beside = kAllClasses[b];
      EXPECT_EQ(assumedContentionRate(slowed, beside), kAssumedTable[s][b])
          << workClassName(slowed) << " beside " << workClassName(beside);
      const double expected =
          slowed == WorkClass::Memory && beside == WorkClass::Elementwise ? 0.7 : kAssumedTable[s][b];
      EXPECT_EQ(contentionRate(p, slowed, beside), expected)
          << workClassName(slowed) << " beside " << workClassName(beside);
    }
}

TEST(MachineProfileTest, MeasuredCopyEngineEntriesOverrideTheAssumption) {
  std::string text = version2();
  const std::string from = R"({"slowed": "communication", "beside": "gemm")";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), R"({"slowed": "copy_engine_communication", "beside": "gemm")");
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json", text);
  // Measured on a shared GPU, say: the copy engines beside GEMMs keep 0.25, not the assumed 1.
  EXPECT_EQ(contentionRate(*parsed, WorkClass::CopyEngineCommunication, WorkClass::Gemm), 0.25);
  EXPECT_EQ(contentionRate(*parsed, WorkClass::Gemm, WorkClass::CopyEngineCommunication), 1);
  EXPECT_EQ(contentionRate(*parsed, WorkClass::CopyEngineCommunication, WorkClass::Memory), 0.5);
  // And the class's name round-trips through the JSON.
  const std::string json = machineProfileJson(*parsed);
  EXPECT_NE(json.find("\"slowed\": \"copy_engine_communication\""), std::string::npos) << json;
}

TEST(MachineProfileTest, ShippedProfilesParseAndKeepTheirMeasuredPairs) {
  for (const std::string& name : shippedMachineProfiles()) {
    auto profile = loadMachineProfile(name);
    ASSERT_TRUE(profile.ok()) << name;
    // Their tables hold every pair of the SM classes.
    for (WorkClass slowed : {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise, WorkClass::Communication})
      for (WorkClass beside : {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise, WorkClass::Communication}) {
        if (slowed == beside) continue;
        const bool listed = std::any_of(profile->contention.begin(), profile->contention.end(),
                                        [&](const Contention& c) { return c.slowed == slowed && c.beside == beside; });
        EXPECT_TRUE(listed) << name << ": " << workClassName(slowed) << " beside " << workClassName(beside);
      }
    // The shared-GPU profiles measured their collectives on the copy engines
    // and list the same figures for that class; the others assume them.
    const bool onCopyEngines = name.find("shared") != std::string::npos;
    for (WorkClass other : {WorkClass::Gemm, WorkClass::Memory, WorkClass::Elementwise}) {
      EXPECT_EQ(contentionRate(*profile, WorkClass::CopyEngineCommunication, other),
                onCopyEngines ? contentionRate(*profile, WorkClass::Communication, other)
                              : assumedContentionRate(WorkClass::CopyEngineCommunication, other))
          << name;
      EXPECT_EQ(contentionRate(*profile, other, WorkClass::CopyEngineCommunication),
                onCopyEngines ? contentionRate(*profile, other, WorkClass::Communication)
                              : assumedContentionRate(other, WorkClass::CopyEngineCommunication))
          << name;
    }
  }
}

TEST(MachineProfileTest, Version2RoundTripsThroughItsJson) {
  const std::string text = version2();
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_TRUE(parsed.ok());
  std::string json = machineProfileJson(*parsed);
  auto reparsed = parseMachineProfile(json, "written.json");
  ASSERT_TRUE(reparsed.ok()) << renderDiagnostic(reparsed.error(), "written.json", json);
  expectSameProfile(*parsed, *reparsed);
  EXPECT_EQ(machineProfileJson(*reparsed), json);
  for (const char* key : {"\"issue_by_op\"", "\"linear\": 30", "\"contention\"", "\"slowed\": \"communication\"",
                          "\"measured_spread\"", "\"spread\": 0.05"})
    EXPECT_NE(json.find(key), std::string::npos) << key << " missing in\n" << json;
}

// A calibration forced on a busy machine can measure a spread beyond what
// the format holds: the writer writes the format's bound, so the file it
// wrote always reads back.
TEST(MachineProfileTest, WritesSpreadsBeyondTheFormatsBoundAsTheBound) {
  auto parsed = parseMachineProfile(version2(), "p.json");
  ASSERT_TRUE(parsed.ok());
  MachineProfile p = *parsed;
  p.gemm.at(DType::F32).spread = {16.4};
  p.memory.spread = {0.1, 1e9};
  p.communication[0].measuredSpread = {16.4, 0.01};
  p.communication[0].spread = 16.4;
  p.overheads.syncSpread = std::numeric_limits<double>::infinity();
  p.contention[0].spread = 11;
  std::string json = machineProfileJson(p);
  auto reparsed = parseMachineProfile(json, "written.json");
  ASSERT_TRUE(reparsed.ok()) << renderDiagnostic(reparsed.error(), "written.json", json);
  EXPECT_EQ(reparsed->gemm.at(DType::F32).spread, std::vector<double>{10});
  EXPECT_EQ(reparsed->memory.spread, (std::vector<double>{0.1, 10}));
  EXPECT_EQ(reparsed->communication[0].measuredSpread, (std::vector<double>{10, 0.01}));
  EXPECT_EQ(reparsed->communication[0].spread, 10);
  EXPECT_EQ(reparsed->overheads.syncSpread, 10);
  EXPECT_EQ(reparsed->contention[0].spread, 10);
}

TEST(MachineProfileTest, RoundTripsAFilledVersion2StructExactly) {
  MachineProfile p;
  p.name = "calibrated";
  p.admission = Admission::Concurrent;
  p.computeUnits = 132;
  p.gemmUnits = 0;
  p.elementwiseUnits = 0;
  p.communicationUnits = 1;
  p.gemm[DType::F32] = GemmGrid{{1024, 8192}, {8192}, {32}, {10.5, 12.25}, {0.011, 1.0 / 3.0}};
  p.memory = MemoryCurve{{4096, 1 << 20}, {12.5, 700.25}, {0.2, 0.0123456789}};
  p.communication = {
      {OpKind::Allreduce, 2, CommAlgorithm::Flat, 25, 370, {1024, 65536}, {30.5, 40.25}, {0.1, 0.3}, 0.3},
      {OpKind::SendRecv, 2, CommAlgorithm::Flat, 25, 400, {}, {}, {}, 0.07}};
  p.overheads = Overheads{4.5, 5, 2, 1, {{OpKind::Linear, 40.5}, {OpKind::Allreduce, 120}}, 0.25, 0, 0.125, 10};
  p.contention = {{WorkClass::Communication, WorkClass::Gemm, 0.2, 0.35},
                  {WorkClass::Gemm, WorkClass::Communication, 0.925, 0},
                  {WorkClass::Memory, WorkClass::Elementwise, 1, 0}};
  std::string json = machineProfileJson(p);
  auto parsed = parseMachineProfile(json, "calibrated.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "calibrated.json", json);
  expectSameProfile(p, *parsed);
  EXPECT_TRUE(hasSpread(p));
}

TEST(MachineProfileTest, AVersion1ProfileRejectsTheVersion2Keys) {
  EXPECT_EQ(errorOf(edited("\"tflops\": [0.5]}", "\"tflops\": [0.5], \"spread\": [0]}")),
            "p.json: error: gemm.f32.spread: a version 2 key in a version 1 profile (write \"version\": 2)");
  EXPECT_EQ(errorOf(edited("\"wakeup\": 4}", "\"wakeup\": 4}, \"contention\": []")),
            "p.json: error: contention: a version 2 key in a version 1 profile (write \"version\": 2)");
  EXPECT_EQ(errorOf(edited("\"wakeup\": 4}", "\"wakeup\": 4, \"issue_by_op\": {}}")),
            "p.json: error: overheads_us.issue_by_op: a version 2 key in a version 1 profile (write \"version\": 2)");
}

TEST(MachineProfileTest, RejectsBadVersion2Values) {
  EXPECT_EQ(errorOfVersion2("\"spread\": [0.1, 0.02]", "\"spread\": [0.1]"),
            "p.json: error: memory.spread: expected 2 values (one per gbps value), got 1");
  EXPECT_EQ(errorOfVersion2("\"spread\": [0.03]", "\"spread\": [11]"),
            "p.json: error: gemm.f32.spread[0]: expected a number from 0 to 10 (relative), got 11");
  EXPECT_EQ(errorOfVersion2("\"spread\": 0.05,", "\"spread\": -0.05,"),
            "p.json: error: communication[0].spread: expected a number from 0 to 10 (relative), got -0.05");
  EXPECT_EQ(errorOfVersion2("\"measured_spread\": [0.05, 0.01]", "\"measured_spread\": [0.05]"),
            "p.json: error: communication[0].measured_spread: expected 2 values (one per us value), got 1");
  EXPECT_EQ(errorOfVersion2("{\"issue\": 0.2,", "{\"issue\": 0.2, \"launc\": 1,"),
            "p.json: error: overheads_us.spread.launc: unknown key (expected one of issue, launch, sync, wakeup)");
  EXPECT_EQ(errorOfVersion2("\"linear\": 30", "\"lienar\": 30"),
            "p.json: error: overheads_us.issue_by_op.lienar: unknown operation (expected an operation's name: "
            "linear, allreduce, ...)");
  EXPECT_EQ(errorOfVersion2("\"allreduce\": 100", "\"allreduce\": -1"),
            "p.json: error: overheads_us.issue_by_op.allreduce: expected a number from 0 to 1e+07 us, got -1");
  EXPECT_EQ(errorOfVersion2("\"rate\": 0.25", "\"rate\": 0"),
            "p.json: error: contention[0].rate: expected a number from 0.001 to 1 (of the rate alone), got 0");
  EXPECT_EQ(errorOfVersion2("\"rate\": 0.9", "\"rate\": 1.5"),
            "p.json: error: contention[1].rate: expected a number from 0.001 to 1 (of the rate alone), got 1.5");
  EXPECT_EQ(errorOfVersion2("\"beside\": \"gemm\"", "\"beside\": \"gpu\""),
            "p.json: error: contention[0].beside: unknown class 'gpu' (expected one of gemm, memory, elementwise, "
            "communication, copy_engine_communication)");
  EXPECT_EQ(errorOfVersion2("\"beside\": \"gemm\"", "\"beside\": \"communication\""),
            "p.json: error: contention[0].beside: communication beside communication: work of one class shares the "
            "units (rank.*_units), it has no contention entry");
  EXPECT_EQ(errorOfVersion2("{\"slowed\": \"gemm\", \"beside\": \"communication\", \"rate\": 0.9}",
                            "{\"slowed\": \"communication\", \"beside\": \"gemm\", \"rate\": 0.9}"),
            "p.json: error: contention[1]: a second entry for communication beside gemm (the first is contention[0])");
  EXPECT_EQ(errorOfVersion2("\"rate\": 0.9}", "\"rat\": 0.9}"),
            "p.json: error: contention[1].rat: unknown key (expected one of slowed, beside, rate, spread)");
}

constexpr std::string_view kMemorySpread = "\"spread\": [0.1, 0.02]";

std::string withStrided(std::string_view strided) {
  std::string text = version2();
  size_t at = text.find(kMemorySpread);
  EXPECT_NE(at, std::string::npos);
  text.insert(at + kMemorySpread.size(), ", \"strided\": " + std::string(strided));
  return text;
}

TEST(MachineProfileTest, ReadsWritesAndRejectsStridedCopies) {
  const std::string text =
      withStrided(R"({"run_bytes": [64, 4096], "slowdown": [2, 1.25], "spread": [0.1, 0], "source": "calibrate"})");
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json", text);
  EXPECT_EQ(parsed->memory.stridedRunBytes, (std::vector<int64_t>{64, 4096}));
  EXPECT_EQ(parsed->memory.stridedSlowdown, (std::vector<double>{2, 1.25}));
  EXPECT_EQ(parsed->memory.stridedSpread, (std::vector<double>{0.1, 0}));
  auto reparsed = parseMachineProfile(machineProfileJson(*parsed), "written.json");
  ASSERT_TRUE(reparsed.ok());
  expectSameProfile(*parsed, *reparsed);
  EXPECT_DOUBLE_EQ(atSpreadEdge(*parsed, SpreadEdge::Slow).memory.stridedSlowdown[0], 2 * 1.1);
  EXPECT_DOUBLE_EQ(atSpreadEdge(*parsed, SpreadEdge::Fast).memory.stridedSlowdown[1], 1.25);
  EXPECT_EQ(errorOf(withStrided(R"({"run_bytes": [64, 4096], "slowdown": [2]})")),
            "p.json: error: memory.strided.slowdown: expected 2 values (one per run_bytes value), got 1");
  EXPECT_EQ(errorOf(withStrided(R"({"run_bytes": [4096, 64], "slowdown": [2, 1]})")),
            "p.json: error: memory.strided.run_bytes[1]: 64 does not exceed the value before it, 4096 (the values "
            "must ascend)");
  EXPECT_EQ(errorOf(withStrided(R"({"run_bytes": [64], "slowdown": [0]})")),
            "p.json: error: memory.strided.slowdown[0]: expected a number from 0.001 to 1000 (times a contiguous "
            "copy), got 0");
  EXPECT_EQ(errorOf(edited("\"gbps\": [10, 100]", "\"gbps\": [10, 100], \"strided\": {}")),
            "p.json: error: memory.strided: a version 2 key in a version 1 profile (write \"version\": 2)");
}

// Every figure with a spread moves to the edge asked for; figures without
// one, and the peaks, stay.
TEST(MachineProfileTest, AtSpreadEdgeMovesEveryFigureByItsSpread) {
  auto parsed = parseMachineProfile(version2(), "p.json");
  ASSERT_TRUE(parsed.ok());
  const MachineProfile& p = *parsed;
  MachineProfile slow = atSpreadEdge(p, SpreadEdge::Slow);
  MachineProfile fast = atSpreadEdge(p, SpreadEdge::Fast);
  EXPECT_DOUBLE_EQ(slow.gemm.at(DType::F32).tflops[0], 0.5 / 1.03);
  EXPECT_DOUBLE_EQ(fast.gemm.at(DType::F32).tflops[0], 0.5 * 1.03);
  EXPECT_EQ(slow.gemm.at(DType::BF16).tflops, p.gemm.at(DType::BF16).tflops);  // no spread
  EXPECT_EQ(slow.peakTflops, p.peakTflops);
  EXPECT_DOUBLE_EQ(slow.memory.gbps[0], 10 / 1.1);
  EXPECT_DOUBLE_EQ(fast.memory.gbps[1], 100 * 1.02);
  EXPECT_DOUBLE_EQ(slow.communication[0].latencyMicros, 10 * 1.05);
  EXPECT_DOUBLE_EQ(slow.communication[0].busGbps, 100 / 1.05);
  EXPECT_DOUBLE_EQ(fast.communication[0].latencyMicros, 10 / 1.05);
  EXPECT_DOUBLE_EQ(slow.communication[0].measuredMicros[0], 11 * 1.05);
  EXPECT_DOUBLE_EQ(fast.communication[0].measuredMicros[1], 14 / 1.01);
  EXPECT_EQ(slow.communication[1].latencyMicros, 20);
  EXPECT_DOUBLE_EQ(slow.overheads.issueMicros, 1.2);
  EXPECT_DOUBLE_EQ(slow.overheads.issueMicrosByOp.at(OpKind::Allreduce), 120);
  EXPECT_DOUBLE_EQ(fast.overheads.issueMicrosByOp.at(OpKind::Linear), 25);
  EXPECT_EQ(slow.overheads.launchMicros, 2);
  EXPECT_DOUBLE_EQ(slow.overheads.syncMicros, 4.5);
  EXPECT_DOUBLE_EQ(fast.overheads.syncMicros, 2);
  EXPECT_DOUBLE_EQ(slow.contention[0].rate, 0.25 / 1.2);
  EXPECT_DOUBLE_EQ(fast.contention[0].rate, 0.25 * 1.2);
  EXPECT_EQ(fast.contention[1].rate, 0.9);
  // A rate never exceeds what it is alone, and the moved profile stays in the format's ranges.
  MachineProfile wide = p;
  wide.contention[1].spread = 1;
  EXPECT_EQ(atSpreadEdge(wide, SpreadEdge::Fast).contention[1].rate, 1);
  for (const MachineProfile& edge : {slow, fast}) {
    std::string json = machineProfileJson(edge);
    EXPECT_TRUE(parseMachineProfile(json, "edge.json").ok()) << json;
  }
  // Without spreads the edges are the profile itself.
  auto plain = parseMachineProfile(kProfile, "p.json");
  ASSERT_TRUE(plain.ok());
  expectSameProfile(atSpreadEdge(*plain, SpreadEdge::Slow), *plain);
  expectSameProfile(atSpreadEdge(*plain, SpreadEdge::Fast), *plain);
}

// The measured kernels (`kernels`): an elementwise and a row-reduction
// bandwidth curve, attention rates by dtype on a (t, d) grid.
constexpr std::string_view kKernels =
    R"("kernels": {
    "source": "hostir calibrate",
    "elementwise": {"bytes": [4096, 1048576], "gbps": [20, 80], "spread": [0.04, 0.01]},
    "row_reduction": {"bytes": [1048576], "gbps": [30], "source": "rms_norm"},
    "attention": {"f32": {"t": [256, 1024], "d": [64, 128], "tflops": [0.1, 0.2, 0.3, 0.4], "spread": [0, 0.1, 0, 0]},
                  "bf16": {"t": [512], "d": [128], "tflops": [0.05]}}
  },
  )";

std::string withKernels(std::string_view kernels = kKernels, std::string text = version2()) {
  const std::string at = "\"communication\": [";
  EXPECT_NE(text.find(at), std::string::npos);
  text.insert(text.find(at), kernels);
  return text;
}

std::string errorWithKernels(std::string_view from, std::string_view to) {
  std::string kernels(kKernels);
  EXPECT_NE(kernels.find(from), std::string::npos) << from;
  kernels.replace(kernels.find(from), from.size(), to);
  return errorOf(withKernels(kernels));
}

TEST(MachineProfileTest, ReadsAndRoundTripsTheMeasuredKernels) {
  const std::string text = withKernels();
  auto parsed = parseMachineProfile(text, "p.json");
  ASSERT_TRUE(parsed.ok()) << renderDiagnostic(parsed.error(), "p.json", text);
  const KernelRates& k = parsed->kernels;
  EXPECT_EQ(k.elementwise.bytes, (std::vector<int64_t>{4096, 1048576}));
  EXPECT_EQ(k.elementwise.gbps, (std::vector<double>{20, 80}));
  EXPECT_EQ(k.elementwise.spread, (std::vector<double>{0.04, 0.01}));
  EXPECT_EQ(k.rowReduction.gbps, std::vector<double>{30});
  EXPECT_TRUE(k.rowReduction.spread.empty());
  ASSERT_EQ(k.attention.size(), 2u);
  EXPECT_EQ(k.attention.at(DType::F32).t, (std::vector<int64_t>{256, 1024}));
  EXPECT_EQ(k.attention.at(DType::F32).d, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(k.attention.at(DType::F32).tflops, (std::vector<double>{0.1, 0.2, 0.3, 0.4}));
  EXPECT_EQ(k.attention.at(DType::BF16).tflops, std::vector<double>{0.05});
  const std::string json = machineProfileJson(*parsed);
  auto reparsed = parseMachineProfile(json, "written.json");
  ASSERT_TRUE(reparsed.ok()) << renderDiagnostic(reparsed.error(), "written.json", json);
  expectSameProfile(*parsed, *reparsed);
  EXPECT_EQ(machineProfileJson(*reparsed), json);
  // The spreads move with the rest.
  EXPECT_DOUBLE_EQ(atSpreadEdge(*parsed, SpreadEdge::Slow).kernels.elementwise.gbps[0], 20 / 1.04);
  EXPECT_DOUBLE_EQ(atSpreadEdge(*parsed, SpreadEdge::Fast).kernels.attention.at(DType::F32).tflops[1], 0.2 * 1.1);
  EXPECT_EQ(atSpreadEdge(*parsed, SpreadEdge::Slow).kernels.rowReduction.gbps, std::vector<double>{30});
  // One measured kernel alone is a profile too, and writes only what it has.
  MachineProfile one = *parsed;
  one.kernels = KernelRates{};
  one.kernels.rowReduction = MemoryCurve{{1 << 20}, {12.5}};
  const std::string oneJson = machineProfileJson(one);
  EXPECT_EQ(oneJson.find("\"elementwise\": {"), std::string::npos) << oneJson;
  EXPECT_EQ(oneJson.find("\"attention\""), std::string::npos) << oneJson;
  auto oneParsed = parseMachineProfile(oneJson, "one.json");
  ASSERT_TRUE(oneParsed.ok()) << renderDiagnostic(oneParsed.error(), "one.json", oneJson);
  expectSameProfile(one, *oneParsed);
}

// Profiles written before `kernels` existed read as they did: nothing
// measured, so the simulator states its assumptions for those kernels.
TEST(MachineProfileTest, ProfilesWithoutKernelsStillLoadWithNothingMeasured) {
  for (const std::string& text : {std::string(kProfile), version2()}) {
    auto parsed = parseMachineProfile(text, "p.json");
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(parsed->kernels.elementwise.bytes.empty());
    EXPECT_TRUE(parsed->kernels.rowReduction.bytes.empty());
    EXPECT_TRUE(parsed->kernels.attention.empty());
    EXPECT_EQ(machineProfileJson(*parsed).find("\"kernels\""), std::string::npos);
  }
  for (const std::string& name : shippedMachineProfiles()) {
    auto profile = loadMachineProfile(name);
    ASSERT_TRUE(profile.ok()) << name;
    EXPECT_TRUE(profile->kernels.attention.empty()) << name << ": no GPU attention was measured";
  }
  // As does the calibration recorded on an H200 before kernels were measured.
  std::ifstream recorded(std::string(HOSTIR_SOURCE_DIR) + "/tests/model/recorded/h200-2026-11-26/calibrated.json");
  std::stringstream file;
  file << recorded.rdbuf();
  auto calibrated = parseMachineProfile(file.str(), "calibrated.json");
  ASSERT_TRUE(calibrated.ok()) << renderDiagnostic(calibrated.error(), "calibrated.json", file.str());
  EXPECT_TRUE(calibrated->kernels.elementwise.bytes.empty());
}

TEST(MachineProfileTest, RejectsBadKernels) {
  EXPECT_EQ(errorWithKernels("\"row_reduction\"", "\"rows\""),
            "p.json: error: kernels.rows: unknown key (expected one of elementwise, row_reduction, attention)");
  EXPECT_EQ(errorWithKernels("\"gbps\": [20, 80]", "\"gbps\": [20]"),
            "p.json: error: kernels.elementwise.gbps: expected 2 values (one per bytes value), got 1");
  EXPECT_EQ(errorWithKernels("\"gbps\": [30]", "\"gbps\": [0]"),
            "p.json: error: kernels.row_reduction.gbps[0]: expected a number from 1e-06 to 1e+06 GB/s, got 0");
  EXPECT_EQ(errorWithKernels("\"spread\": [0.04, 0.01]", "\"strided\": {}"),
            "p.json: error: kernels.elementwise.strided: unknown key (expected one of bytes, gbps, spread)");
  EXPECT_EQ(errorWithKernels("\"tflops\": [0.1, 0.2, 0.3, 0.4]", "\"tflops\": [0.1, 0.2, 0.3]"),
            "p.json: error: kernels.attention.f32.tflops: expected 4 values (t x d = 2 x 2), got 3");
  EXPECT_EQ(errorWithKernels("\"t\": [256, 1024]", "\"t\": [1024, 256]"),
            "p.json: error: kernels.attention.f32.t[1]: 256 does not exceed the value before it, 1024 (the values "
            "must ascend)");
  EXPECT_EQ(errorWithKernels("\"bf16\"", "\"i32\""),
            "p.json: error: kernels.attention.i32: unknown dtype (expected one of f32, f16, bf16, f64)");
  EXPECT_EQ(errorWithKernels("\"d\": [128]", "\"heads\": [128]"),
            "p.json: error: kernels.attention.bf16.heads: unknown key (expected one of t, d, tflops, spread)");
  EXPECT_EQ(errorOf(withKernels("\"kernels\": {}, ", kProfile)),
            "p.json: error: kernels: a version 2 key in a version 1 profile (write \"version\": 2)");
}

}  // namespace
}  // namespace hostir
