#include "tools/hostir/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "executor/evaluator.h"
#include "executor/host_tensor.h"
#include "hostir/parser.h"
#include "hostir/verifier.h"
#include "model/cost_model.h"

namespace hostir {
namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * 1024;

// The programs. Every tensor is an input, filled with zeros before each run
// and outside its timing, so that a timed run is only the loop (no
// allocation, no page faults); zeros keep denormals out of the GEMMs. Each
// loop body is one statement (or one hop), so a run's time less the empty
// program's, divided by R, is what one statement costs in a stream of them.
constexpr const char* kEmptyProgram = "program empty() {\n}\n";

// The GEMMs take their x and y from B blocks in turn, as a chunked program
// does: with B blocks larger than the last-level cache together, every GEMM
// reads and writes memory, not cache lines the previous one left behind.
std::string gemmProgram(DType dtype) {
  return fmt::format(
      "program gemm(M = 64, N = 64, K = 8, B = 1, R = 1) {{\n"
      "  input x : {0}[B * M, K]\n"
      "  input w : {0}[N, K]\n"
      "  input y : {0}[B * M, N]\n"
      "  for i in range(R) {{\n"
      "    xi = shard_by_stream(x, axis=0, index=i % B, chunks=B)\n"
      "    yi = shard_by_stream(y, axis=0, index=i % B, chunks=B)\n"
      "    linear(xi, w, out=yi)\n"
      "  }}\n"
      "}}\n",
      dtypeName(dtype));
}

// What the GEMMs' blocks of x and y add up to: beyond the last-level cache
// of the machines hostir runs on (32 MiB here).
constexpr double kGemmBlockBytes = 64.0 * kMiB;

constexpr const char* kCopyProgram =
    "program copy(C = 1, R = 1) {\n"
    "  input a : f32[C]\n"
    "  input b : f32[C]\n"
    "  for i in range(R) {\n"
    "    copy(a, out=b)\n"
    "  }\n"
    "}\n";

// Two hops per iteration: the main stream hands a tiny copy's result to
// stream(1), which hands its own back; each hop wakes the other stream.
constexpr const char* kPingPongProgram =
    "program pingpong(R = 1) {\n"
    "  input a : f32[1]\n"
    "  input b : f32[1]\n"
    "  input c : f32[1]\n"
    "  main = get_current_stream()\n"
    "  for i in range(R) {\n"
    "    copy(a, out=b)\n"
    "    there = record_event()\n"
    "    set_current_stream(stream(1))\n"
    "    wait_event(there)\n"
    "    copy(b, out=c)\n"
    "    back = record_event()\n"
    "    set_current_stream(main)\n"
    "    wait_event(back)\n"
    "  }\n"
    "}\n";

constexpr const char* kSyncProgram =
    "program sync(R = 1) {\n"
    "  for i in range(R) {\n"
    "    synchronize(stream(1))\n"
    "  }\n"
    "}\n";

struct CollectiveBench {
  OpKind kind;
  const char* name;
  const char* program;
  bool bytesAreWholeTeam;  // nccl-tests' size is world * C elements (allgather's output, reduce-scatter's input)
  CommAlgorithm algorithm = CommAlgorithm::Ring;  // how its latency grows with the team (model/machine_profile.h)
};

const CollectiveBench kCollectives[] = {
    {OpKind::Allreduce, "allreduce",
     "program allreduce(C = 256, R = 1) {\n"
     "  input t : f32[C]\n"
     "  for i in range(R) {\n"
     "    h = allreduce(t, op=sum)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false},
    {OpKind::Allgather, "allgather",
     "program allgather(C = 256, R = 1) {\n"
     "  input t : f32[C]\n"
     "  input o : f32[C * world]\n"
     "  for i in range(R) {\n"
     "    h = allgather(t, out=o, axis=0)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     true},
    {OpKind::ReduceScatter, "reduce_scatter",
     "program reduce_scatter(C = 256, R = 1) {\n"
     "  input t : f32[C * world]\n"
     "  input o : f32[C]\n"
     "  for i in range(R) {\n"
     "    h = reduce_scatter(t, out=o, axis=0, op=sum)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     true},
    {OpKind::Broadcast, "broadcast",
     "program broadcast(C = 256, R = 1) {\n"
     "  input t : f32[C]\n"
     "  for i in range(R) {\n"
     "    h = broadcast(t, root=0)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false},
    // A ring step: every rank sends to the next and receives from the previous.
    {OpKind::SendRecv, "sendrecv",
     "program sendrecv(C = 256, R = 1) {\n"
     "  input t : f32[C]\n"
     "  input o : f32[C]\n"
     "  for i in range(R) {\n"
     "    h = sendrecv(t, out=o, to=(rank + 1) % world, from=(rank + world - 1) % world)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false, CommAlgorithm::Flat},
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  if (n == 0) return 0;
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int64_t ceilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b)); }

// The axes of the grids and curves, full and --quick.
struct Plan {
  std::vector<int64_t> m, n, k;              // f32 and f64 GEMMs
  std::vector<int64_t> mHalf, nHalf, kHalf;  // f16 and bf16 (converted to f32 per GEMM on the CPU: slower, coarser)
  double gemmFlopsPerRun;                    // a run's loop does at least this many flops...
  int64_t gemmMaxLoop;                       // ...in at most this many GEMMs
  std::vector<int64_t> memoryBytes;          // bytes a copy touches (read + written)
  double memoryBytesPerRun;
  std::vector<int64_t> messageBytes;  // collectives, nccl-tests' bytes
  double messageBytesPerRun;
  int64_t maxLoop;  // tiny copies, collectives, hops
  int overheadRepeat;
};

Plan planFor(bool quick) {
  Plan p;
  if (quick) {
    p.m = {64, 256};
    p.n = {64, 256};
    p.k = {32, 128};
    p.mHalf = {64, 256};
    p.nHalf = {64};
    p.kHalf = {64};
    p.gemmFlopsPerRun = 2e7;
    p.gemmMaxLoop = 200;
    p.memoryBytes = {16 * kKiB, 4 * kMiB};
    p.memoryBytesPerRun = 16 * kMiB;
    p.messageBytes = {16 * kKiB, 1 * kMiB};
    p.messageBytesPerRun = 4 * kMiB;
    p.maxLoop = 100;
    p.overheadRepeat = 5;
    return p;
  }
  // Covers the benchmark shapes on two ranks: M 64..8192, N 64..2048, K 8..2048.
  p.m = {64, 256, 1024, 4096, 8192};
  p.n = {64, 256, 1024, 2048};
  p.k = {8, 32, 128, 512, 2048};
  p.mHalf = {64, 1024, 8192};
  p.nHalf = {64, 512, 2048};
  p.kHalf = {8, 128, 2048};
  p.gemmFlopsPerRun = 6e8;  // ~8 ms at this machine's f32 rate
  p.gemmMaxLoop = 2000;
  for (int64_t bytes = 4 * kKiB; bytes <= 256 * kMiB; bytes *= 4) p.memoryBytes.push_back(bytes);
  p.memoryBytesPerRun = 512 * kMiB;
  // Every power of two from 4 MiB: large messages leave the cache, and their time per byte changes most there.
  for (int64_t bytes = 1 * kKiB; bytes <= 64 * kMiB; bytes *= bytes < 4 * kMiB ? 4 : 2) p.messageBytes.push_back(bytes);
  p.messageBytesPerRun = 64 * kMiB;
  p.maxLoop = 2000;
  p.overheadRepeat = 15;
  return p;
}

class Calibrator {
 public:
  Calibrator(const CalibrationRequest& request, const TeamRunner& runTeam)
      : request_(request), runTeam_(runTeam), plan_(planFor(request.quick)) {}

  MachineProfile run() {
    MachineProfile profile;
    profile.admission = Admission::IssueOrder;
    profile.computeUnits = request_.computeSlots;
    profile.gemmUnits = 1;  // OpenBLAS runs each GEMM on one thread (executor/cpu/cpu_kernels.cpp)
    profile.elementwiseUnits = 1;
    profile.communicationUnits = 1;  // a communication holds a core (cpu_backend.h, Admission::CommTurn)

    progress("overheads");
    // The fastest empty run: the barriers' and the evaluator's fixed cost.
    // A late rank (a core taken by another process) adds a time slice to
    // some runs; subtracted from every measurement, it would swamp them.
    emptySeconds_ = runSeconds(parse(kEmptyProgram), {}, 2, plan_.overheadRepeat * 2, /*fastest=*/true);
    profile.overheads = measureOverheads();
    // Communications and memory first, in a process as fresh as a `hostir
    // run`'s, before the GEMMs' large buffers have come and gone.
    if (request_.world > 1) {
      for (const CollectiveBench& bench : kCollectives) {
        progress(bench.name);
        profile.communication.push_back(measureCollective(bench));
      }
    }
    progress("memory");
    profile.memory = measureMemory();
    for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
      progress(fmt::format("gemm {}", dtypeName(dtype)));
      GemmGrid grid = measureGemm(dtype);
      profile.peakTflops[dtype] = *std::max_element(grid.tflops.begin(), grid.tflops.end());
      profile.gemm[dtype] = std::move(grid);
    }
    profile.description = fmt::format(
        "medians of timed loops run by the CPU backend on {} ranks at once, {} core(s) each, less the fastest "
        "empty program's time; GEMMs `linear(x, w, out=y)`, memory `copy(a, out=b)` of f32, collectives of f32 fitted "
        "to latency + bytes * busFactor / busbw (least squares, relative error){}",
        request_.world, request_.computeSlots,
        request_.quick ? "; --quick: a coarse grid, not a faithful profile" : "");
    return profile;
  }

 private:
  void progress(std::string_view what) const {
    if (request_.progress) request_.progress(what);
  }

  Program parse(std::string_view text) const {
    auto program = parseProgram(text);
    if (!program)
      fail({}, fmt::format("internal error: a calibration program does not parse: {}", program.error().message));
    return std::move(*program);
  }

  // The median (or the fastest) seconds of `repeat` timed runs of `program`
  // with `set` params bound, after `warmup` untimed ones; every input is zeros.
  double runSeconds(const Program& program, const std::map<std::string, int64_t>& set, int warmup, int repeat,
                    bool fastest = false) const {
    Bindings bindings{set, request_.world};
    if (Status error = verifyProgram(program, bindings))
      fail({},
           fmt::format("internal error: calibration program '{}' does not verify: {}", program.name, error->message));
    auto params = bindParams(program, bindings);
    if (!params) fail({}, params.error().message);
    RunRequest run;
    run.program = program;
    run.params = *params;
    Evaluator shapes(program, *params, 0, request_.world);  // the inputs' global shapes
    for (const TensorSpec& spec : shapes.inputs()) run.inputs[spec.name] = makeHostTensor(spec.dtype, spec.globalShape);
    run.backend = BackendKind::Cpu;
    run.streams = request_.streams;
    run.computeSlots = request_.computeSlots;
    run.watchdog = request_.watchdog;
    run.warmup = warmup;
    run.repeat = repeat;
    auto result = runTeam_(run);
    if (!result) {
      Diagnostic diag = result.error();
      diag.message = fmt::format("calibration program '{}' failed: {}", program.name, diag.message);
      throw DiagnosticError{diag};
    }
    const std::vector<double>& millis = result->runMillis;
    if (millis.empty()) fail({}, fmt::format("internal error: calibration program '{}' was not timed", program.name));
    return (fastest ? *std::min_element(millis.begin(), millis.end()) : median(millis)) / 1e3;
  }

  // Seconds per iteration of a loop of `loop` iterations.
  double perIteration(const Program& program, std::map<std::string, int64_t> set, int64_t loop, int warmup,
                      int repeat) const {
    set["R"] = loop;
    double seconds = runSeconds(program, set, warmup, repeat);
    // A run that beat the empty program (noise) is taken whole.
    double loopSeconds = seconds > emptySeconds_ ? seconds - emptySeconds_ : seconds;
    return loopSeconds / static_cast<double>(loop);
  }

  // Timed runs for a run of about `seconds`: long runs are steady, and
  // repeating them would not fit the budget.
  static std::pair<int, int> runsFor(double estimatedSeconds) {
    if (estimatedSeconds > 0.3) return {0, 1};
    if (estimatedSeconds > 0.05) return {1, 1};
    return {1, 5};
  }

  Overheads measureOverheads() {
    Overheads o;
    int repeat = plan_.overheadRepeat;
    Program copy = parse(kCopyProgram);
    // A long loop of 1-element copies on the main stream: the host's issue rate.
    double issue = perIteration(copy, {{"C", 1}}, plan_.maxLoop * 4, 1, 5);
    o.issueMicros = issue * 1e6;
    // One tiny copy on an idle stream, less the empty program: from issue to its end.
    double one = perIteration(copy, {{"C", 1}}, 1, 2, repeat);
    o.launchMicros = one * 1e6;
    // Each hop wakes the other stream; less the tiny copy the hop also runs.
    double hop = perIteration(parse(kPingPongProgram), {}, plan_.maxLoop / 2, 1, 5) / 2;
    o.wakeupMicros = std::max(hop - issue, 0.0) * 1e6;
    // synchronize(s) on an idle stream, beyond issuing a statement.
    double sync = perIteration(parse(kSyncProgram), {}, plan_.maxLoop * 4, 1, 5);
    o.syncMicros = std::max(sync - issue, 0.0) * 1e6;
    return o;
  }

  GemmGrid measureGemm(DType dtype) {
    bool half = dtype == DType::F16 || dtype == DType::BF16;
    GemmGrid grid;
    grid.m = half ? plan_.mHalf : plan_.m;
    grid.n = half ? plan_.nHalf : plan_.n;
    grid.k = half ? plan_.kHalf : plan_.k;
    Program program = parse(gemmProgram(dtype));
    // A guess of the rate only sizes the runs; f64 and the converted halves are slower than f32.
    double guessFlopsPerSecond = dtype == DType::F32 ? 80e9 : 40e9;
    for (int64_t m : grid.m)
      for (int64_t n : grid.n)
        for (int64_t k : grid.k) {
          double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
          int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.gemmFlopsPerRun, flops), 1, plan_.gemmMaxLoop);
          auto [warmup, repeat] = runsFor(flops * static_cast<double>(loop) / guessFlopsPerSecond);
          const double blockBytes = static_cast<double>(m * (k + n)) * static_cast<double>(dtypeSize(dtype));
          const int64_t blocks = std::clamp<int64_t>(ceilDiv(kGemmBlockBytes, blockBytes), 1, loop);
          double seconds = perIteration(program, {{"M", m}, {"N", n}, {"K", k}, {"B", blocks}}, loop, warmup, repeat);
          grid.tflops.push_back(flops / seconds / 1e12);
        }
    return grid;
  }

  MemoryCurve measureMemory() {
    MemoryCurve curve;
    Program program = parse(kCopyProgram);
    for (int64_t bytes : plan_.memoryBytes) {
      int64_t elements = std::max<int64_t>(bytes / 8, 1);  // f32: 4 bytes read, 4 written
      int64_t touched = elements * 8;
      int64_t loop =
          std::clamp<int64_t>(ceilDiv(plan_.memoryBytesPerRun, static_cast<double>(touched)), 1, plan_.maxLoop * 2);
      auto [warmup, repeat] = runsFor(static_cast<double>(touched * loop) / 10e9);
      double seconds = perIteration(program, {{"C", elements}}, loop, warmup, repeat);
      curve.bytes.push_back(touched);
      curve.gbps.push_back(static_cast<double>(touched) / seconds / 1e9);
    }
    return curve;
  }

  CommunicationCost measureCollective(const CollectiveBench& bench) {
    Program program = parse(bench.program);
    const int64_t world = request_.world;
    std::vector<double> scaled, seconds;
    CommunicationCost cost;
    for (int64_t bytes : plan_.messageBytes) {
      int64_t perRank = bench.bytesAreWholeTeam ? world : 1;
      int64_t elements = std::max<int64_t>(bytes / (4 * perRank), 1);
      double size = static_cast<double>(elements * 4 * perRank);
      int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.messageBytesPerRun, size), 1, plan_.maxLoop / 10);
      auto [warmup, repeat] = runsFor(size * static_cast<double>(loop) / 2e9);
      seconds.push_back(perIteration(program, {{"C", elements}}, loop, warmup, repeat));
      scaled.push_back(size * busFactor(bench.kind, world));
      // The times themselves price this team size (cache effects included); the fit, other sizes.
      if (cost.measuredBytes.empty() || static_cast<int64_t>(size) > cost.measuredBytes.back()) {
        cost.measuredBytes.push_back(static_cast<int64_t>(size));
        cost.measuredMicros.push_back(std::max(seconds.back(), 1e-9) * 1e6);
      }
    }
    LineFit fit = fitLatencyBandwidth(scaled, seconds);
    cost.kind = bench.kind;
    cost.ranks = world;
    cost.algorithm = bench.algorithm;
    cost.latencyMicros = fit.latency * 1e6;
    // One message size (or none that grew): the largest one's rate, latency included.
    cost.busGbps = (fit.bandwidth > 0 ? fit.bandwidth : scaled.back() / seconds.back()) / 1e9;
    return cost;
  }

  const CalibrationRequest& request_;
  const TeamRunner& runTeam_;
  Plan plan_;
  double emptySeconds_ = 0;
};

}  // namespace

LineFit fitLatencyBandwidth(const std::vector<double>& x, const std::vector<double>& seconds) {
  // Weighted least squares of t = a + b x with weights 1 / t^2.
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  for (size_t i = 0; i < x.size() && i < seconds.size(); ++i) {
    if (!(seconds[i] > 0)) continue;
    double w = 1 / (seconds[i] * seconds[i]);
    sw += w;
    swx += w * x[i];
    swy += w * seconds[i];
    swxx += w * x[i] * x[i];
    swxy += w * x[i] * seconds[i];
  }
  LineFit fit;
  double det = sw * swxx - swx * swx;
  double a = 0, b = 0;
  // Relative: one point (or one size) leaves only rounding in det.
  if (det > 1e-9 * sw * swxx) {
    b = (sw * swxy - swx * swy) / det;
    a = (swy - b * swx) / sw;
  }
  if (!(det > 1e-9 * sw * swxx) || a < 0) {
    // Through the origin: a bandwidth alone.
    a = 0;
    b = swxx > 0 ? swxy / swxx : 0;
  }
  if (b <= 0) {
    // Times that do not grow with the size: a latency alone.
    fit.latency = sw > 0 ? swy / sw : 0;
    return fit;
  }
  fit.latency = a;
  fit.bandwidth = 1 / b;
  return fit;
}

Result<MachineProfile> calibrate(const CalibrationRequest& request, const TeamRunner& runTeam) {
  try {
    return Calibrator(request, runTeam).run();
  } catch (const DiagnosticError& error) {
    return error.diag;
  }
}

}  // namespace hostir
