// A machine profile: what a rank of one machine costs, for the simulator
// (`hostir simulate --machine NAME|FILE.json`). `hostir calibrate` measures
// one; profiles for machines the project cannot reach ship in profiles/
// and are built into the binary. The JSON format is in
// docs/machine-profiles.md; every number in a shipped file names its source.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/ops.h"

namespace hostir {

// How a rank's work gets its compute units.
enum class Admission {
  // A CPU rank: work that needs units starts only when they are free, in
  // the order the host issued it (the CPU backend's compute gate), and a
  // started piece of work runs at full speed.
  IssueOrder,
  // A GPU: every ready kernel starts; communications take their units first
  // and the computations share the rest (rates scale with the share).
  Concurrent,
};

// The measured GEMM rate of one dtype on a grid of (M, N, K) points:
// tflops[(im * n.size() + in) * k.size() + ik]. Axes ascend; an axis may
// have one point.
struct GemmGrid {
  std::vector<int64_t> m, n, k;
  std::vector<double> tflops;
  // The relative spread of each measured rate, parallel to tflops: the
  // interquartile range of its timed runs over their median (every
  // `spread` in a profile means this). Empty: not measured with a spread.
  std::vector<double> spread;
};

// Memory bandwidth by the bytes an operation touches (read plus written):
// what fits in cache runs faster. Ascending bytes.
struct MemoryCurve {
  std::vector<int64_t> bytes;
  std::vector<double> gbps;    // GB/s, 1e9 bytes per second
  std::vector<double> spread;  // parallel to gbps, or empty
  // Copies between strided views (a column block; the pack and unpack
  // around a communication along an inner axis) move their bytes in runs
  // of `runBytes` contiguous bytes, and take `slowdown` times as long as a
  // contiguous copy of as many bytes. Ascending runBytes; empty: not
  // measured, priced as contiguous.
  std::vector<int64_t> stridedRunBytes;
  std::vector<double> stridedSlowdown;
  std::vector<double> stridedSpread;  // parallel to stridedSlowdown, or empty
};

// The measured rate of attention in one dtype (`kernels.attention`): at
// sequence length t (queries and keys alike) and head dim d, not causal;
// tflops[it * d.size() + id], in 10^12 flops (4 · Tq · Tk · H·D) per second.
struct AttentionGrid {
  std::vector<int64_t> t, d;
  std::vector<double> tflops;
  std::vector<double> spread;  // parallel to tflops, or empty
};

// Measured rates of the kernels that are neither GEMMs nor copies
// (`kernels` in the JSON). Each may be absent (empty): the simulator then
// prices the kernels by an assumption it states (cost_model.h,
// PricingAssumption): elementwise and row kernels at the copy bandwidth,
// attention at the GEMM rate of its dtype.
struct KernelRates {
  // Elementwise kernels (add, mul, silu, ...), measured with `mul`: bandwidth by bytes touched.
  MemoryCurve elementwise;  // no strided figures
  // Row reductions (rms_norm, softmax), measured with `rms_norm`: bandwidth by bytes touched.
  MemoryCurve rowReduction;  // no strided figures
  std::map<DType, AttentionGrid> attention;
};

// Communication algorithms, for the latency's growth with the team size.
enum class CommAlgorithm {
  Ring,  // latency grows with the ring's steps (n - 1 per pass)
  Tree,  // latency grows with log2(n)
  Flat,  // latency independent of n (a local copy, a direct transfer, NVLS)
};

// One communication's cost at one team size: seconds =
// latency + bytes * busFactor(kind, ranks) / busbw (nccl-tests' bus bandwidth).
struct CommunicationCost {
  OpKind kind = OpKind::Allreduce;  // Allreduce, Allgather, ReduceScatter, Broadcast, SendRecv
  int64_t ranks = 2;
  CommAlgorithm algorithm = CommAlgorithm::Ring;
  double latencyMicros = 0;
  double busGbps = 0;  // GB/s
  // Optional: times measured at these message sizes (nccl-tests' bytes) at
  // exactly this team size, ascending. They price this team size in place of
  // latency and bandwidth, which cannot capture a cache: a calibrated CPU
  // moves 64 KiB far faster per byte than 64 MiB. Empty: not measured.
  std::vector<int64_t> measuredBytes;
  std::vector<double> measuredMicros;
  std::vector<double> measuredSpread;  // parallel to measuredMicros, or empty
  double spread = 0;                   // of latency and bandwidth: the largest of the points' spreads
};

// Host and stream overheads, in microseconds.
struct Overheads {
  double issueMicros = 0;   // host time to issue one statement
  double launchMicros = 0;  // from issue to start on an idle stream
  double syncMicros = 0;    // a cross-stream wait (wait_event, synchronize, wait) on the waiter
  double wakeupMicros = 0;  // a stream or rank blocked on another resumes this much after it
  // Host time to issue one statement of a kind, where measured (a CUDA
  // allreduce costs the host more than an add); other kinds cost issueMicros.
  std::map<OpKind, double> issueMicrosByOp;
  // Relative spreads of issue, launch, sync and wakeup (0: not measured).
  double issueSpread = 0, launchSpread = 0, syncSpread = 0, wakeupSpread = 0;
};

// The classes of work that contend for a GPU's SMs and memory bandwidth.
// A computation's class follows its cost rule (cost_model.h, workClassOf):
// GEMMs and attention are Gemm; a communication's class follows what
// carries it (communicationClassOf).
enum class WorkClass {
  Gemm,           // linear, matmul (batched too), attention: compute-bound kernels that fill the SMs
  Memory,         // copies and fills, and kernels that only move elements (gather_rows, scatter_add_rows, cast)
  Elementwise,    // the other kernels: add, mul, silu, ..., rms_norm, softmax, merge_attention
  Communication,  // collectives and sendrecv run as kernels on the SMs (NCCL, a CPU team)
  CopyEngineCommunication,  // collectives and sendrecv on the copy engines: they hold no SM, only bandwidth
};

// What carries a run's communications (`--communicator` of simulate and
// tune): kernels on the SMs, or the copy engines (`copy-engine`).
enum class CommunicationCarrier { Kernels, CopyEngines };
WorkClass communicationClassOf(CommunicationCarrier carrier);

// How much work of one class slows while work of another class runs beside
// it on the same rank (Concurrent ranks): its rate then is `rate` times its
// rate alone, i.e. its time alone divided by its time beside the other.
// Measured by `hostir calibrate --backend cuda`, pairwise.
struct Contention {
  WorkClass slowed = WorkClass::Gemm;
  WorkClass beside = WorkClass::Memory;
  double rate = 1;    // (0, 1]
  double spread = 0;  // relative
};

struct MachineProfile {
  std::string name;         // "h100-nvlink", "calibrated on myhost"
  std::string description;  // free text: the machine, the date, how it was made
  Admission admission = Admission::IssueOrder;
  double computeUnits = 1;             // a rank's cores (CPU) or SMs (GPU)
  double gemmUnits = 1;                // units one GEMM uses when alone (0: all of them)
  double elementwiseUnits = 1;         // units a copy or add uses (0: all of them)
  double communicationUnits = 1;       // units a communication holds while it runs
  std::map<DType, double> peakTflops;  // an upper bound for the GEMM rate; dtypes without a grid have no GEMMs
  std::map<DType, GemmGrid> gemm;
  MemoryCurve memory;
  KernelRates kernels;  // measured rates of other kernels; empty where not measured
  std::vector<CommunicationCost> communication;
  // The nodes (`nodes` in the JSON, version 3): how many ranks share one
  // (0: unknown, and every team is priced by its rank count alone), and
  // one rank's share of the network (its NIC's bus bandwidth, GB/s; 0:
  // unknown). A group within one node is priced on the entries of at most
  // ranksPerNode ranks, one across nodes on the larger ones, capped at
  // nicBusGbps per member of the group on a node (cost_model.h).
  int64_t ranksPerNode = 0;
  double nicBusGbps = 0;
  Overheads overheads;
  // Pairwise slow-downs of concurrent work on a Concurrent rank; see
  // docs/cost-model.md for the rule and the pairs a profile leaves out.
  std::vector<Contention> contention;
  // What carries this run's communications: a setting of the run
  // (`--communicator`), not of the file; the JSON never holds it.
  CommunicationCarrier communicationCarrier = CommunicationCarrier::Kernels;
};

// The rate that work of class `slowed` keeps while work of class `beside`
// runs on the same rank (docs/cost-model.md, docs/machine-profiles.md):
// the profile's contention entry for the pair; for a pair its table leaves
// out, assumedContentionRate when the table has entries, and 1 when it is
// empty (a version 1 profile, a CPU: no contention modelled). 1 for one
// class beside itself (units share that).
double contentionRate(const MachineProfile& profile, WorkClass slowed, WorkClass beside);
// The assumed rate of a pair no entry measures (docs/machine-profiles.md,
// "Assumed contention"): work that shares the SMs and memory bandwidth
// keeps half; communication on the copy engines and a GEMM leave each
// other alone (1 both ways), and the copy engines share memory bandwidth
// with the other classes (half).
double assumedContentionRate(WorkClass slowed, WorkClass beside);
// "gemm", "memory", "elementwise", "communication", "copy_engine_communication".
std::string_view workClassName(WorkClass workClass);

// Which end of its spread every figure of a profile is taken at.
enum class SpreadEdge {
  Slow,  // every time x (1 + spread), every rate / (1 + spread)
  Fast,  // every time / (1 + spread), every rate x (1 + spread) (a contention rate at most 1)
};
// The profile with every figure that has a spread moved to that edge of it,
// within the format's ranges, and its measured times then made
// non-decreasing in size again (point_times.h); the peaks (datasheet
// bounds) stay. A profile without spreads comes back equal.
MachineProfile atSpreadEdge(const MachineProfile& profile, SpreadEdge edge);
// Whether any figure of the profile has a spread above 0.
bool hasSpread(const MachineProfile& profile);

// Parses and validates a profile, and lowers any measured time above a
// larger operation's to that one's (makeTimesNonDecreasing, point_times.h).
// Errors name the file and the JSON path:
// "p.json: error: gemm.bf16.tflops: expected 12 values (m x n x k), got 11".
// The diagnostic holds the JSON path, message and (for malformed JSON) the
// line and column; the file comes from rendering it:
// renderDiagnostic(error, fileName, jsonText).
Result<MachineProfile> parseMachineProfile(std::string_view jsonText, std::string_view fileName);
// The profile's JSON text (what calibrate writes); parseMachineProfile reads
// it back equal, but for measured times it lowers as above.
std::string machineProfileJson(const MachineProfile& profile);

// `--machine` argument: a shipped profile's name ("h100-nvlink") or a path
// to a JSON file (anything with a '/' or ending in ".json"). Unknown names
// list the shipped ones. Render errors with nameOrPath as the file.
Result<MachineProfile> loadMachineProfile(std::string_view nameOrPath);
// The names of the profiles built into the binary, sorted.
std::vector<std::string> shippedMachineProfiles();

}  // namespace hostir
