#include "calibration/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "calibration/calibration_runs.h"
#include "calibration/contention_calibration.h"
#include "calibration/figure_estimate.h"
#include "calibration/kernel_calibration.h"
#include "model/cost_model.h"
#include "runtime/backend_selection.h"

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

constexpr const char* kCopyProgram =
    "program copy(C = 1, R = 1) {\n"
    "  input a : f32[C]\n"
    "  input b : f32[C]\n"
    "  for i in range(R) {\n"
    "    copy(a, out=b)\n"
    "  }\n"
    "}\n";

// A contiguous [H, W] block copied into alternate column halves of [H, 2W]:
// the destination's rows are W elements apart from the next, as an unpack
// after a communication along axis 1 writes them.
constexpr const char* kStridedCopyProgram =
    "program strided_copy(H = 1, W = 1, R = 1) {\n"
    "  input a : f32[H, W]\n"
    "  input b : f32[H, 2 * W]\n"
    "  for i in range(R) {\n"
    "    bi = shard_by_stream(b, axis=1, index=i % 2, chunks=2)\n"
    "    copy(a, out=bi)\n"
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

// Each iteration takes the next of B blocks, as a chunked program's
// collectives take chunks that no earlier one left in the caches; B is
// sized like the GEMMs' (Plan::blockBytes).
const CollectiveBench kCollectives[] = {
    {OpKind::Allreduce, "allreduce",
     "program allreduce(C = 256, B = 1, R = 1) {\n"
     "  input t : f32[B * C]\n"
     "  for i in range(R) {\n"
     "    ti = shard_by_stream(t, axis=0, index=i % B, chunks=B)\n"
     "    h = allreduce(ti, op=sum)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false},
    {OpKind::Allgather, "allgather",
     "program allgather(C = 256, B = 1, R = 1) {\n"
     "  input t : f32[B * C]\n"
     "  input o : f32[B * C * world]\n"
     "  for i in range(R) {\n"
     "    ti = shard_by_stream(t, axis=0, index=i % B, chunks=B)\n"
     "    oi = shard_by_stream(o, axis=0, index=i % B, chunks=B)\n"
     "    h = allgather(ti, out=oi, axis=0)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     true},
    {OpKind::ReduceScatter, "reduce_scatter",
     "program reduce_scatter(C = 256, B = 1, R = 1) {\n"
     "  input t : f32[B * C * world]\n"
     "  input o : f32[B * C]\n"
     "  for i in range(R) {\n"
     "    ti = shard_by_stream(t, axis=0, index=i % B, chunks=B)\n"
     "    oi = shard_by_stream(o, axis=0, index=i % B, chunks=B)\n"
     "    h = reduce_scatter(ti, out=oi, axis=0, op=sum)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     true},
    {OpKind::Broadcast, "broadcast",
     "program broadcast(C = 256, B = 1, R = 1) {\n"
     "  input t : f32[B * C]\n"
     "  for i in range(R) {\n"
     "    ti = shard_by_stream(t, axis=0, index=i % B, chunks=B)\n"
     "    h = broadcast(ti, root=0)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false},
    // A ring step: every rank sends to the next and receives from the previous.
    {OpKind::SendRecv, "sendrecv",
     "program sendrecv(C = 256, B = 1, R = 1) {\n"
     "  input t : f32[B * C]\n"
     "  input o : f32[B * C]\n"
     "  for i in range(R) {\n"
     "    ti = shard_by_stream(t, axis=0, index=i % B, chunks=B)\n"
     "    oi = shard_by_stream(o, axis=0, index=i % B, chunks=B)\n"
     "    h = sendrecv(ti, out=oi, to=(rank + 1) % world, from=(rank + world - 1) % world)\n"
     "    wait(h)\n"
     "  }\n"
     "}\n",
     false, CommAlgorithm::Flat},
};

int64_t ceilDiv(double a, double b) { return static_cast<int64_t>(std::ceil(a / b)); }

// Tiny statements of each kind, R of each in a row: the host's cost to
// issue one, read from the traced host track (CUDA only, where a statement
// is an asynchronous launch and the host's time is its own).
constexpr const char* kIssueProgram =
    "program issue(R = 1) {\n"
    "  input a : f32[16]\n"
    "  input b : f32[16]\n"
    "  input x : f32[16, 16]\n"
    "  input w : f32[16, 16]\n"
    "  input y : f32[16, 16]\n"
    "  for i in range(R) {\n"
    "    copy(a, out=b)\n"
    "  }\n"
    "  for i in range(R) {\n"
    "    add(a, b, out=b)\n"
    "  }\n"
    "  for i in range(R) {\n"
    "    linear(x, w, out=y)\n"
    "  }\n"
    "  for i in range(R) {\n"
    "    h = allreduce(a, op=sum)\n"
    "    wait(h)\n"
    "  }\n"
    "}\n";

// The axes of the grids and curves, full and --quick.
struct Plan {
  std::vector<int64_t> m, n, k;                 // f32 GEMMs
  std::vector<int64_t> mOther, nOther, kOther;  // f64, bf16, f16: on a CPU slower (the halves converted to f32
                                                // per GEMM) and priced by no benchmark there: coarser
  double gemmRunSeconds;                        // a run's loop lasts about this long...
  int64_t gemmMaxLoop;                          // ...in at most this many GEMMs
  double blockBytes;                 // a loop's blocks (GEMMs' x and y, messages) add up to this (beyond the caches)
  double guessFlopsPerSecond;        // sizes the runs only
  std::vector<int64_t> memoryBytes;  // bytes a copy touches (read + written)
  double memoryBytesPerRun;
  std::vector<int64_t> stridedRunBytes;  // strided copies: contiguous bytes per row...
  int64_t stridedBytes;                  // ...and the bytes each touches (beyond the caches)
  double guessBytesPerSecond;
  std::vector<int64_t> messageBytes;  // collectives, nccl-tests' bytes
  double messageBytesPerRun;
  int64_t maxLoop;  // tiny copies, collectives, hops
  int overheadRepeat;
  KernelPlan kernels;  // elementwise, row reduction, attention
};

// The kernels' curves take the copies' sizes; attention a few sequence
// lengths and head dims.
KernelPlan kernelPlan(const Plan& p, std::vector<int64_t> t, std::vector<int64_t> d, int64_t heads,
                      std::vector<DType> dtypes, double flopsPerRun) {
  KernelPlan k;
  k.bytes = p.memoryBytes;
  k.bytesPerRun = p.memoryBytesPerRun;
  k.maxLoop = p.maxLoop * 2;
  k.guessBytesPerSecond = p.guessBytesPerSecond;
  k.attentionT = std::move(t);
  k.attentionD = std::move(d);
  k.attentionHeads = heads;
  k.attentionDtypes = std::move(dtypes);
  k.attentionFlopsPerRun = flopsPerRun;
  k.attentionMaxLoop = p.gemmMaxLoop;
  k.guessFlopsPerSecond = p.guessFlopsPerSecond / 10;  // attention runs below the GEMMs' rate
  return k;
}

Plan cpuPlan(bool quick) {
  Plan p;
  p.blockBytes = 64.0 * kMiB;  // the last-level cache of the machines hostir runs on is 32 MiB
  p.guessFlopsPerSecond = 40e9;
  p.guessBytesPerSecond = 10e9;
  if (quick) {
    p.m = {64, 256};
    p.n = {64, 256};
    p.k = {32, 128};
    p.mOther = {64, 256};
    p.nOther = {64};
    p.kOther = {64};
    p.gemmRunSeconds = 0.5e-3;
    p.gemmMaxLoop = 200;
    p.memoryBytes = {16 * kKiB, 4 * kMiB};
    p.memoryBytesPerRun = 16 * kMiB;
    p.stridedRunBytes = {64, 1024};
    p.stridedBytes = 4 * kMiB;
    p.messageBytes = {16 * kKiB, 1 * kMiB};
    p.messageBytesPerRun = 4 * kMiB;
    p.maxLoop = 100;
    p.overheadRepeat = 9;
    p.kernels = kernelPlan(p, {64, 256}, {64}, 4, {DType::F32}, 2e7);
    return p;
  }
  // Covers the benchmark shapes on two ranks: M 64..8192, N 16..2048, K 8..2048.
  // Below N = 64 a GEMM is bound by reading its left operand, not by its
  // flops: priced at the N = 64 rate, N = 32 came out 30% fast.
  p.m = {64, 256, 1024, 4096, 8192};
  p.n = {16, 64, 256, 1024, 2048};
  p.k = {8, 32, 128, 512, 2048};
  // The other dtypes' largest GEMM, 2048 x 2048 x 2048, takes about half a
  // second in bf16 on the 2-vCPU VM; their rates level off well before it.
  p.mOther = {64, 512, 2048};
  p.nOther = {64, 512, 2048};
  p.kOther = {16, 256, 2048};
  p.gemmRunSeconds = 0.012;  // beyond runsFor's 10 ms: five timed runs
  p.gemmMaxLoop = 2000;
  for (int64_t bytes = 4 * kKiB; bytes <= 256 * kMiB; bytes *= 4) p.memoryBytes.push_back(bytes);
  p.memoryBytesPerRun = 512 * kMiB;
  p.stridedRunBytes = {64, 256, 1024, 4096};
  p.stridedBytes = 64 * kMiB;
  // Every power of two from 4 MiB: large messages leave the cache, and their time per byte changes most there.
  for (int64_t bytes = 1 * kKiB; bytes <= 64 * kMiB; bytes *= bytes < 4 * kMiB ? 4 : 2) p.messageBytes.push_back(bytes);
  p.messageBytesPerRun = 64 * kMiB;
  p.maxLoop = 2000;
  p.overheadRepeat = 15;
  p.kernels = kernelPlan(p, {128, 512, 2048}, {64, 128}, 4, {DType::F32, DType::BF16}, 6e8);
  return p;
}

// A GPU: the shapes of tensor-parallel layers (M to 16384, N and K to
// 8192), copies to 1 GiB (the L2 holds 50 MiB), messages to 512 MiB.
Plan cudaPlan(bool quick) {
  Plan p;
  p.blockBytes = 256.0 * kMiB;
  p.guessFlopsPerSecond = 20e12;
  p.guessBytesPerSecond = 1e12;
  p.gemmMaxLoop = 200;
  p.maxLoop = 1000;
  if (quick) {
    p.m = p.mOther = {256, 4096};
    p.n = p.nOther = {256, 4096};
    p.k = p.kOther = {64, 1024};
    p.gemmRunSeconds = 1e-3;
    p.memoryBytes = {64 * kKiB, 64 * kMiB};
    p.memoryBytesPerRun = 1024 * kMiB;
    p.stridedRunBytes = {64, 1024};
    p.stridedBytes = 64 * kMiB;
    p.messageBytes = {64 * kKiB, 16 * kMiB};
    p.messageBytesPerRun = 256 * kMiB;
    p.overheadRepeat = 5;
    p.kernels = kernelPlan(p, {512, 2048}, {128}, 16, {DType::F32}, 2e10);
    return p;
  }
  p.m = p.mOther = {256, 1024, 4096, 16384};
  p.n = p.nOther = {256, 1024, 8192};
  p.k = p.kOther = {32, 256, 2048, 8192};
  p.gemmRunSeconds = 0.01;
  for (int64_t bytes = 4 * kKiB; bytes <= 1024 * kMiB; bytes *= 4) p.memoryBytes.push_back(bytes);
  p.memoryBytesPerRun = 4096 * kMiB;
  p.stridedRunBytes = {64, 256, 1024, 4096};
  p.stridedBytes = 256 * kMiB;
  for (int64_t bytes = 1 * kKiB; bytes <= 512 * kMiB; bytes *= bytes < 16 * kMiB ? 4 : 2)
    p.messageBytes.push_back(bytes);
  p.messageBytesPerRun = 1024 * kMiB;
  p.overheadRepeat = 10;
  p.kernels = kernelPlan(p, {512, 2048, 8192}, {64, 128}, 16, {DType::BF16, DType::F32}, 2e11);
  return p;
}

class Calibrator {
 public:
  Calibrator(const CalibrationRequest& request, const TeamRunner& runTeam)
      : request_(request), runs_(request, runTeam), plan_(onGpu() ? cudaPlan(request.quick) : cpuPlan(request.quick)) {}

  Calibration run() {
    MachineProfile profile = rankFacts();
    judgeLoad();
    progress("overheads");
    // The fastest empty run: the barriers' and the evaluator's fixed cost.
    // A late rank (a core taken by another process) adds a time slice to
    // some runs; subtracted from every measurement, it would swamp them.
    std::vector<double> empty = runs_.timedRuns(runs_.parse(kEmptyProgram), {}, 2, plan_.overheadRepeat * 2);
    emptySeconds_ = *std::min_element(empty.begin(), empty.end());
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
    progress("strided copies");
    measureStridedCopies(profile);
    TimeLoop time = [this](const std::string& figure, const Program& program, std::map<std::string, int64_t> set,
                           int64_t loop, int warmup,
                           int repeat) { return perIteration(figure, program, std::move(set), loop, warmup, repeat); };
    profile.kernels = measureKernels(runs_, plan_.kernels, time, request_.progress);
    for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
      progress(fmt::format("gemm {}", dtypeName(dtype)));
      GemmGrid grid = measureGemm(dtype);
      profile.peakTflops[dtype] = *std::max_element(grid.tflops.begin(), grid.tflops.end());
      profile.gemm[dtype] = std::move(grid);
    }
    if (onGpu()) {
      progress("contention");
      profile.contention = measureContention(runs_, request_);
    }
    profile.description = description();
    std::stable_sort(noisy_.begin(), noisy_.end(),
                     [](const NoisyFigure& a, const NoisyFigure& b) { return a.spread > b.spread; });
    return Calibration{std::move(profile), std::move(noisy_)};
  }

 private:
  bool onGpu() const { return request_.backend.kind == BackendKind::Cuda; }

  void progress(std::string_view what) const {
    if (request_.progress) request_.progress(what);
  }

  double agreed(double mine) const { return request_.agree ? request_.agree(mine) : mine; }
  bool agreed(bool mine) const { return agreed(mine ? 1.0 : 0.0) != 0; }

  // How a rank gets its units: a CPU rank's cores in issue order; a GPU's
  // SMs (those of the devices the team shares) for every ready kernel, with
  // contention measured rather than assumed.
  MachineProfile rankFacts() const {
    MachineProfile profile;
    if (!onGpu()) {
      profile.admission = Admission::IssueOrder;
      profile.computeUnits = request_.backend.cpu.coresPerRank;
      profile.gemmUnits = 1;  // OpenBLAS runs each GEMM on one thread (executor/cpu/cpu_kernels.cpp)
      profile.elementwiseUnits = 1;
      profile.communicationUnits = 1;  // a communication holds a core (cpu_backend.h, Admission::CommTurn)
      return profile;
    }
    profile.admission = Admission::Concurrent;
    const std::optional<CudaDeviceFacts> device = cudaDeviceFacts(0);
    const int64_t devices = std::clamp<int64_t>(cudaDeviceCount(), 1, request_.world);
    const double sms = device ? device->multiprocessors : 1;
    profile.computeUnits = std::max(1.0, sms * static_cast<double>(devices) / static_cast<double>(request_.world));
    profile.gemmUnits = 0;  // all of them: cuBLAS fills the device
    profile.elementwiseUnits = 0;
    profile.communicationUnits = 1;  // what a communication takes from the GEMMs is the measured contention
    return profile;
  }

  // Timed runs of `program` with R = loop, measured again while noisy (rank
  // 0 decides), keeping the least noisy runs; seconds per iteration beyond
  // the empty program's (estimateFigure), rank 0's on every rank, since
  // later runs are sized by it. An unusable figure stops the calibration
  // unless it is forced.
  Measured perIteration(const std::string& figure, const Program& program, std::map<std::string, int64_t> set,
                        int64_t loop, int warmup, int repeat) {
    if (busy_) {
      // Every run is slower by the load: shorter runs, and fewer of them,
      // keep a forced calibration within about twice its quiet time.
      loop = std::max<int64_t>(1, loop / kBusyLoopDivisor);
      repeat = std::min(repeat, kBusyRepeat);
      warmup = std::min(warmup, 1);
    }
    set["R"] = loop;
    FigureEstimate best;
    best.noise = std::numeric_limits<double>::infinity();
    for (int attempt = 0;; ++attempt) {
      FigureEstimate estimate = estimateFigure(runs_.timedRuns(program, set, warmup, repeat), emptySeconds_, loop);
      if (estimate.noise < best.noise) best = estimate;
      if (attempt == retries_ || !agreed(best.verdict != FigureVerdict::Steady)) break;
    }
    if (!request_.force && agreed(best.verdict == FigureVerdict::Unusable)) throw tooNoisy(figure, best);
    if (best.verdict != FigureVerdict::Steady)
      noisy_.push_back(NoisyFigure{figure, best.spread, best.micro ? best.spreadMicros : 0});
    return Measured{agreed(best.seconds), agreed(best.spread)};
  }

  DiagnosticError tooNoisy(const std::string& figure, const FigureEstimate& estimate) const {
    return DiagnosticError{Diagnostic{
        {},
        fmt::format("the machine is too noisy to measure: the runs of {} spread {:.0f}%, {:.1f} us per iteration, "
                    "after {} retries (steady within {:.0f}% or {:.0f} us; this is {:.0f} times beyond); nothing is "
                    "written: quiet the machine, or force the calibration (--force) to keep such figures",
                    figure, estimate.spread * 100, estimate.spreadMicros, retries_, api::kCalibrationNoisySpread * 100,
                    api::kCalibrationNoisyMicros, estimate.noise)}};
  }

  // The load, judged first, before anything is measured. Other processes
  // that kept the cores busy while the team waited (request.load) take a
  // share of every core the runs want: refused at once, naming the
  // busiest. Work that comes and goes shows in two short figures, each run
  // a single task of about a millisecond, whose runs then spread. A busy
  // machine is refused unless forced, then measured with shorter and fewer
  // timed runs (perIteration) and no figure measured again. The verdict is
  // rank 0's. A device's runs are too short for such probes: CPU only.
  void judgeLoad() {
    if (onGpu()) return;
    progress("load");
    const MachineLoad& load = request_.load;
    const std::string held = fmt::format(
        "other processes kept {:.0f}% of its cores busy as the calibration started "
        "(the busiest: {})",
        load.othersBusy * 100, describeBusiest(load.busiest));
    const std::string quiet = "quiet the machine, or force the calibration (--force) to measure it anyway";
    if (agreed(load.othersBusy >= kBusyCores)) {
      if (!request_.force)
        throw DiagnosticError{Diagnostic{{}, fmt::format("the machine is busy: {}; {}", held, quiet)}};
      measureBusy();
      return;
    }
    std::vector<NoisyFigure> probes;
    auto probe = [&](const std::string& figure, const Program& program, std::map<std::string, int64_t> set) {
      set["R"] = 1;
      FigureEstimate least;
      least.noise = std::numeric_limits<double>::infinity();
      for (int attempt = 0; attempt <= kCalibrationRetries; ++attempt) {
        FigureEstimate estimate = estimateFigure(runs_.timedRuns(program, set, 1, kLoadProbeRuns), 0, 1);
        if (estimate.noise < least.noise) least = estimate;
        if (!agreed(least.verdict != FigureVerdict::Steady)) break;
      }
      probes.push_back(NoisyFigure{figure, least.spread, 0});
      return least.verdict != FigureVerdict::Steady;
    };
    const bool copyNoisy = probe("copy 4 MiB", runs_.parse(kCopyProgram), {{"C", int64_t{1} << 20}});
    const bool gemmNoisy =
        probe("gemm f32 m=256 n=256 k=256", runs_.parse(gemmProgram(DType::F32)), {{"M", 256}, {"N", 256}, {"K", 256}});
    if (!agreed(copyNoisy && gemmNoisy)) return;
    if (!request_.force)
      throw DiagnosticError{
          Diagnostic{{},
                     fmt::format("the machine is busy: {}, and its runs of {} spread {:.0f}% and of {} {:.0f}% (noisy "
                                 "beyond {:.0f}%); {}",
                                 held, probes[0].name, probes[0].spread * 100, probes[1].name, probes[1].spread * 100,
                                 kNoisySpread * 100, quiet)}};
    measureBusy();
  }

  // A forced calibration of a busy machine: every run is slower, and more
  // runs or retries would not make its figures less noisy.
  void measureBusy() {
    busy_ = true;
    retries_ = 0;
  }

  Overheads measureOverheads() {
    Overheads o;
    const int repeat = plan_.overheadRepeat;
    Program copy = runs_.parse(kCopyProgram);
    // A long loop of 1-element copies on the main stream: the host's issue rate.
    Measured issue = perIteration("issue overhead", copy, {{"C", 1}}, plan_.maxLoop * 2, 1, repeat);
    o.issueMicros = issue.seconds * 1e6;
    o.issueSpread = issue.spread;
    // One tiny copy on an idle stream, less the empty program: from issue to its end.
    Measured one = perIteration("launch overhead", copy, {{"C", 1}}, 1, 2, repeat * 2);
    o.launchMicros = one.seconds * 1e6;
    o.launchSpread = one.spread;
    // Each hop wakes the other stream; less the tiny copy the hop also runs.
    Measured hop = perIteration("wakeup overhead", runs_.parse(kPingPongProgram), {}, plan_.maxLoop / 2, 1, repeat);
    o.wakeupMicros = std::max(hop.seconds / 2 - issue.seconds, 0.0) * 1e6;
    o.wakeupSpread = hop.spread;
    // synchronize(s) on an idle stream, beyond issuing a statement.
    Measured sync = perIteration("sync overhead", runs_.parse(kSyncProgram), {}, plan_.maxLoop * 2, 1, repeat);
    o.syncMicros = std::max(sync.seconds - issue.seconds, 0.0) * 1e6;
    o.syncSpread = sync.spread;
    if (onGpu()) o.issueMicrosByOp = measureIssueByOp();
    return o;
  }

  // The host track's median time per statement kind, from one traced run.
  std::map<OpKind, double> measureIssueByOp() {
    std::string text = kIssueProgram;
    if (request_.world < 2) text = text.substr(0, text.find("  for i in range(R) {\n    h = ")) + "}\n";
    const std::vector<RecordedSlice> slices = runs_.tracedRun(runs_.parse(text), {{"R", 200}}, 1);
    std::map<OpKind, std::vector<double>> byOp;
    for (const RecordedSlice& slice : slices)
      if (slice.category == "host")
        if (std::optional<OpKind> kind = opKindByName(slice.name)) byOp[*kind].push_back(slice.durationMicros);
    std::map<OpKind, double> micros;
    for (auto& [kind, durations] : byOp) micros[kind] = medianOf(durations);
    return micros;
  }

  // A first guess at a dtype's GEMM rate, to size its first runs: f64 and
  // the CPU's converted halves are slower than f32; a GPU's halves faster.
  double gemmRateGuess(DType dtype) const {
    if (dtype == DType::F32 || onGpu()) return plan_.guessFlopsPerSecond;
    return plan_.guessFlopsPerSecond * (dtype == DType::F64 ? 0.5 : 0.25);
  }

  GemmGrid measureGemm(DType dtype) {
    const bool f32 = dtype == DType::F32;
    GemmGrid grid;
    grid.m = f32 ? plan_.m : plan_.mOther;
    grid.n = f32 ? plan_.n : plan_.nOther;
    grid.k = f32 ? plan_.k : plan_.kOther;
    Program program = runs_.parse(gemmProgram(dtype));
    // Each run is sized by the rate last measured at the same (n, k), else
    // the same k, else the guess: a grid's rates span a factor of ten.
    std::map<std::pair<int64_t, int64_t>, double> rateAt;
    std::map<int64_t, double> rateAtK;
    for (int64_t m : grid.m)
      for (int64_t n : grid.n)
        for (int64_t k : grid.k) {
          const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
          const double rate = rateAt.count({n, k}) ? rateAt[{n, k}]
                              : rateAtK.count(k)   ? rateAtK[k]
                                                   : gemmRateGuess(dtype);
          const int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.gemmRunSeconds * rate, flops), 1, plan_.gemmMaxLoop);
          auto [warmup, repeat] = runsFor(flops * static_cast<double>(loop) / rate);
          const double blockBytes = static_cast<double>(m * (k + n)) * static_cast<double>(dtypeSize(dtype));
          const int64_t blocks = std::clamp<int64_t>(ceilDiv(plan_.blockBytes, blockBytes), 1, loop);
          Measured measured = perIteration(fmt::format("gemm {} m={} n={} k={}", dtypeName(dtype), m, n, k), program,
                                           {{"M", m}, {"N", n}, {"K", k}, {"B", blocks}}, loop, warmup, repeat);
          grid.tflops.push_back(flops / measured.seconds / 1e12);
          grid.spread.push_back(measured.spread);
          rateAt[{n, k}] = rateAtK[k] = flops / measured.seconds;
        }
    return grid;
  }

  MemoryCurve measureMemory() {
    MemoryCurve curve;
    Program program = runs_.parse(kCopyProgram);
    for (int64_t bytes : plan_.memoryBytes) {
      const int64_t elements = std::max<int64_t>(bytes / 8, 1);  // f32: 4 bytes read, 4 written
      const int64_t touched = elements * 8;
      const int64_t loop =
          std::clamp<int64_t>(ceilDiv(plan_.memoryBytesPerRun, static_cast<double>(touched)), 1, plan_.maxLoop * 2);
      auto [warmup, repeat] = runsFor(static_cast<double>(touched * loop) / plan_.guessBytesPerSecond);
      Measured measured =
          perIteration(fmt::format("copy {}", sizeName(touched)), program, {{"C", elements}}, loop, warmup, repeat);
      curve.bytes.push_back(touched);
      curve.gbps.push_back(static_cast<double>(touched) / measured.seconds / 1e9);
      curve.spread.push_back(measured.spread);
    }
    return curve;
  }

  // Each run length's time over a contiguous copy's of as many bytes, on
  // the memory curve just measured.
  void measureStridedCopies(MachineProfile& profile) {
    Program program = runs_.parse(kStridedCopyProgram);
    MemoryCurve& memory = profile.memory;
    for (int64_t runBytes : plan_.stridedRunBytes) {
      const int64_t width = runBytes / 4;                                             // f32
      const int64_t height = std::max<int64_t>(plan_.stridedBytes / (8 * width), 1);  // 4 bytes read, 4 written
      const int64_t touched = height * width * 8;
      const int64_t loop =
          std::clamp<int64_t>(ceilDiv(plan_.memoryBytesPerRun, static_cast<double>(touched)), 2, plan_.maxLoop * 2);
      auto [warmup, repeat] = runsFor(static_cast<double>(touched * loop) / plan_.guessBytesPerSecond);
      Measured measured = perIteration(fmt::format("strided copy, {} rows", sizeName(runBytes)), program,
                                       {{"H", height}, {"W", width}}, loop, warmup, repeat);
      memory.stridedRunBytes.push_back(runBytes);
      memory.stridedSlowdown.push_back(std::clamp(measured.seconds / memorySeconds(profile, touched), 1e-3, 1e3));
      memory.stridedSpread.push_back(measured.spread);
    }
  }

  CommunicationCost measureCollective(const CollectiveBench& bench) {
    Program program = runs_.parse(bench.program);
    const int64_t world = request_.world;
    std::vector<double> scaled, seconds;
    CommunicationCost cost;
    for (int64_t bytes : plan_.messageBytes) {
      const int64_t perRank = bench.bytesAreWholeTeam ? world : 1;
      const int64_t elements = std::max<int64_t>(bytes / (4 * perRank), 1);
      const double size = static_cast<double>(elements * 4 * perRank);
      const int64_t loop = std::clamp<int64_t>(ceilDiv(plan_.messageBytesPerRun, size), 1, plan_.maxLoop / 10);
      auto [warmup, repeat] = runsFor(size * static_cast<double>(loop) / (plan_.guessBytesPerSecond / 5));
      const int64_t blocks = std::clamp<int64_t>(ceilDiv(plan_.blockBytes, size), 1, loop);
      Measured measured = perIteration(fmt::format("{} {}", bench.name, sizeName(static_cast<int64_t>(size))), program,
                                       {{"C", elements}, {"B", blocks}}, loop, warmup, repeat);
      seconds.push_back(measured.seconds);
      scaled.push_back(size * busFactor(bench.kind, world));
      cost.spread = std::max(cost.spread, measured.spread);
      // The times themselves price this team size (cache effects included); the fit, other sizes.
      if (cost.measuredBytes.empty() || static_cast<int64_t>(size) > cost.measuredBytes.back()) {
        cost.measuredBytes.push_back(static_cast<int64_t>(size));
        cost.measuredMicros.push_back(std::max(measured.seconds, 1e-9) * 1e6);
        cost.measuredSpread.push_back(measured.spread);
      }
    }
    LineFit fit = fitLatencyBandwidth(scaled, seconds);
    cost.kind = bench.kind;
    cost.ranks = world;
    // Copy engines move every block directly between the ranks: no ring's steps.
    cost.algorithm = copyEngines() ? CommAlgorithm::Flat : bench.algorithm;
    cost.latencyMicros = fit.latency * 1e6;
    // One message size (or none that grew): the largest one's rate, latency included.
    cost.busGbps = (fit.bandwidth > 0 ? fit.bandwidth : scaled.back() / seconds.back()) / 1e9;
    return cost;
  }

  bool copyEngines() const { return onGpu() && request_.backend.communicator == CommunicatorChoice::CopyEngine; }

  std::string description() const {
    if (!onGpu())
      return fmt::format(
          "medians of timed loops (a low quantile for figures of a few microseconds) run by the CPU backend on {} "
          "ranks at once, {} core(s) each, less the fastest "
          "empty program's time; GEMMs `linear(x, w, out=y)`, memory `copy(a, out=b)` of f32, kernels `mul(a, b, "
          "out=c)` and `rms_norm(x, w, out=y)` of f32 and `attention(q, k, v, out=o, heads=H)`, collectives of f32 "
          "fitted to latency + bytes * busFactor / busbw (least squares, relative error){}",
          request_.world, request_.backend.cpu.coresPerRank,
          request_.quick ? "; --quick: a coarse grid, not a faithful profile" : "");
    return fmt::format(
        "medians of timed loops (a low quantile for figures of a few microseconds) run by the CUDA backend on {} "
        "ranks at once ({} communicator), less the fastest "
        "empty program's time; GEMMs `linear(x, w, out=y)` through cuBLAS (f32 without TF32), memory `copy(a, "
        "out=b)` of f32, kernels `mul(a, b, out=c)` and `rms_norm(x, w, out=y)` of f32 and `attention(q, k, v, "
        "out=o, heads=H)`, collectives of f32 fitted to latency + bytes * busFactor / busbw; host cost per statement "
        "kind and pairwise contention from traced runs{}",
        request_.world, copyEngines() ? "copy-engine" : "NCCL",
        request_.quick ? "; --quick: a coarse grid, not a faithful profile" : "");
  }

  const CalibrationRequest& request_;
  CalibrationRuns runs_;
  Plan plan_;
  double emptySeconds_ = 0;
  std::vector<NoisyFigure> noisy_;
  bool busy_ = false;  // measureBusy()
  int retries_ = kCalibrationRetries;
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

Result<Calibration> calibrate(const CalibrationRequest& request, const TeamRunner& runTeam) {
  try {
    return Calibrator(request, runTeam).run();
  } catch (const DiagnosticError& error) {
    return error.diag;
  }
}

}  // namespace hostir
