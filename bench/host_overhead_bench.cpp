// What the host spends per issued operation (issue 6): a CUDA launch costs
// about 2-4 us, so the evaluator and the CPU backend should stay under 1 us
// per issued operation or the host becomes the bottleneck.
//
// BM_EvaluatorPerOperation runs the evaluator on a backend that does no
// work, so only the interpretation is timed. BM_CpuBackendPerOperation runs
// the same programs on the CPU backend (one rank, in-process team) with
// f32[4, 4] tensors, so the kernels are negligible and what is left is
// queueing, waking the stream threads, cross-stream waits and the
// communication path. Each benchmark iteration is one whole Evaluator::run,
// which ends with synchronizeHost; ns_per_op is its wall time divided by
// Evaluator::issuedOperations(), and host_ns_per_op the issuing thread's CPU
// time divided the same way (what the host itself spends, without the time
// it sleeps waiting for the streams). See timeRuns for the other counters.
//
// The programs, each with S iterations:
//   row_parallel  the row-parallel linear after assign-streams: per iteration
//                 linear + allreduce on a worker stream, plus the join
//   elementwise   a straight loop of add + copy on the main stream
//   allreduce     a straight loop of add + allreduce on the main stream
// and row_parallel_gated, the first on the CPU backend with the compute gate
// as `hostir run` configures one rank (computations start in issue order on
// at most one per core).
//
// BM_TwoRanksRowParallel runs the tiny row-parallel layer (M = 16 S, K = N =
// 16, after assign-streams) on two in-process ranks, over the in-process
// communicator (`in_process`) or over copy engines on the host engine
// (`copy_engine`, as `--communicator copy-engine` runs it on the CPU), so the
// two show what a copy-engine collective costs the host. Its ns_per_iteration
// is wall time per iteration of the program's loop.
//
// BM_ExecutableRun calls api::Executable::run on examples/row_parallel_linear.hir
// at its defaults on two in-process ranks, the embedding loop's step:
// call_us is the median call's wall time, program_us the program's own
// time measured side by side (the median of `hostir run --repeat 300`'s
// timed runs, through the same code), and overhead_us their difference:
// what binding the inputs, waking the ranks, uploading the shards,
// gathering the outputs and returning cost (goal: at most 100 us).
//
// BM_CudaRowParallel (built with the CUDA backend; skipped without a device)
// runs the tiny row-parallel iteration (M = 1024, K = N = 16, S = 64 after
// assign-streams) on the device through api::Executable, each call 5
// warm-up and 20 timed runs, captured into a CUDA graph or not: issue_us is
// the median timed run's host time until its work was issued (rank 0; with
// the graph, its launch), run_us the median run, and the *_per_iteration_us
// counters the same divided by the 64 iterations.
//
//   host_overhead_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <hostir/hostir.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <sys/resource.h>

#include "bench/example_program.h"
#include "comm/copy_engine_communicator.h"
#include "comm/host_transfer_engine.h"
#include "comm/in_process_communicator.h"
#include "executor/backend_factory.h"
#include "executor/cpu/cpu_backend.h"
#include "ir/parser.h"
#include "runtime/evaluator.h"

namespace {

using namespace hostir;

enum class Workload { RowParallel, Elementwise, Allreduce };

// The elementwise and allreduce loops (one stream, tiny tensors); the
// row-parallel layer is examples/row_parallel_linear.hir.
std::string programText(Workload workload, int64_t iterations) {
  switch (workload) {
    case Workload::RowParallel: throw std::logic_error("the row-parallel layer is an example file");
    case Workload::Elementwise:
      return fmt::format(R"hir(program elementwise(S = {}) {{
  input  a : f32[4, 4]
  input  b : f32[4, 4]
  output y : f32[4, 4]

  y = allocate(f32[4, 4])
  t = allocate(f32[4, 4])
  for i in range(S) {{
    add(a, b, out=t)
    copy(t, out=y)
  }}
}}
)hir",
                         iterations);
    case Workload::Allreduce:
      return fmt::format(R"hir(program allreduce_loop(S = {}) {{
  input  a : f32[4, 4]
  input  b : f32[4, 4]
  output y : f32[4, 4]

  y = allocate(f32[4, 4])
  for i in range(S) {{
    add(a, b, out=y)
    c = allreduce(y, op=sum)
    wait(c)
  }}
}}
)hir",
                         iterations);
  }
  throw std::logic_error("unknown workload");
}

struct Prepared {
  Program program;
  std::map<std::string, int64_t> params;
};

// Parsed, rewritten (row_parallel only: the others must stay on one stream)
// and verified for one rank, once per workload and size.
const Prepared& prepared(Workload workload, int64_t iterations) {
  static std::map<std::pair<Workload, int64_t>, std::unique_ptr<Prepared>> cache;
  auto& slot = cache[{workload, iterations}];
  if (slot) return *slot;
  auto result = std::make_unique<Prepared>();
  Bindings bindings{{}, 1};
  if (workload == Workload::RowParallel) {
    bindings.params = {{"S", iterations}, {"M", 4 * iterations}, {"K", 4}, {"N", 4}};
    result->program = bench::exampleProgram("row_parallel_linear");
    bench::assignStreams(result->program, bindings);
  } else {
    auto parsed = parseProgram(programText(workload, iterations));
    if (!parsed) throw std::runtime_error(parsed.error().message);
    result->program = std::move(*parsed);
  }
  result->params = bench::verifiedParams(result->program, bindings);
  slot = std::move(result);
  return *slot;
}

// ---------------------------------------------------------------------------
// A backend that does nothing, so that only the evaluator is timed.

class NullStream : public Stream {
 public:
  explicit NullStream(int slot) : slot_(slot) {}
  int slot() const override { return slot_; }
  uint64_t issued = 0;

 private:
  int slot_;
};

// One buffer behind every tensor; nothing ever reads or writes it.
class NullBuffer : public Buffer {
 public:
  std::byte* data() override { return nullptr; }
  size_t bytes() const override { return 0; }
};

class NullBackend : public Backend {
 public:
  NullBackend() {
    for (int slot = 0; slot < kPoolSize; ++slot) pool_.push_back(std::make_unique<NullStream>(slot));
  }

  std::string_view name() const override { return "null"; }
  void beginRun() override {}
  Stream* mainStream() override { return &main_; }
  Stream* workerStream(int64_t number) override { return pool_[static_cast<size_t>(number % kPoolSize)].get(); }
  Event recordEvent(Stream* stream) override { return Event{stream, static_cast<NullStream*>(stream)->issued}; }
  void waitEvent(Stream* waiter, const Event&) override { ++static_cast<NullStream*>(waiter)->issued; }
  void synchronizeHost() override {}
  TensorView allocate(DType dtype, const Dims& shape, Stream*, bool) override {
    return TensorView::contiguous(buffer_, dtype, shape);
  }
  void deallocate(const TensorView&, Stream*) override {}
  void compute(Stream* stream, const KernelCall&) override { issue(stream); }
  void copy(Stream* stream, const TensorView&, const TensorView&) override { issue(stream); }
  void collective(Stream* stream, const CollectiveCall&) override { issue(stream); }
  void upload(const void*, const TensorView&) override {}
  void download(const TensorView&, void*) override {}

  TensorView tensor(DType dtype, const Dims& shape) { return TensorView::contiguous(buffer_, dtype, shape); }

 private:
  static constexpr int kPoolSize = 4;
  static void issue(Stream* stream) { ++static_cast<NullStream*>(stream)->issued; }

  std::shared_ptr<Buffer> buffer_ = std::make_shared<NullBuffer>();
  NullStream main_{-1};
  std::vector<std::unique_ptr<NullStream>> pool_;
};

double cpuNanos(clockid_t clock) {
  timespec now{};
  clock_gettime(clock, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

// Context switches of every thread of the process so far.
double contextSwitches() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw);
}

// Runs the evaluator once per benchmark iteration and reports, per issued
// operation: wall nanoseconds (ns_per_op), the host thread's CPU nanoseconds
// (host_ns_per_op), every thread's CPU nanoseconds (all_threads_ns_per_op:
// the stream threads' work included) and context switches
// (switches_per_op: sleeping hand-offs between threads). The last two vary
// far less than wall time on a shared machine. Plain counters rather than
// inverted rates, so that the console shows them without a misleading unit.
void timeRuns(benchmark::State& state, Evaluator& evaluator, Backend& backend,
              const std::map<std::string, TensorView>& inputs) {
  const double hostCpuStart = cpuNanos(CLOCK_THREAD_CPUTIME_ID);
  const double processCpuStart = cpuNanos(CLOCK_PROCESS_CPUTIME_ID);
  const double switchesStart = contextSwitches();
  const auto wallStart = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto outputs = evaluator.run(backend, inputs);
    benchmark::DoNotOptimize(outputs);
  }
  const double wallNanos =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wallStart).count();
  const double ops = static_cast<double>(evaluator.issuedOperations()) * static_cast<double>(state.iterations());
  state.counters["issued_ops"] = static_cast<double>(evaluator.issuedOperations());
  state.counters["ns_per_op"] = wallNanos / ops;
  state.counters["host_ns_per_op"] = (cpuNanos(CLOCK_THREAD_CPUTIME_ID) - hostCpuStart) / ops;
  state.counters["all_threads_ns_per_op"] = (cpuNanos(CLOCK_PROCESS_CPUTIME_ID) - processCpuStart) / ops;
  state.counters["switches_per_op"] = (contextSwitches() - switchesStart) / ops;
}

void BM_EvaluatorPerOperation(benchmark::State& state, Workload workload) {
  const Prepared& p = prepared(workload, state.range(0));
  Evaluator evaluator(p.program, p.params, /*rank=*/0, /*world=*/1);
  NullBackend backend;
  std::map<std::string, TensorView> inputs;
  for (const TensorSpec& spec : evaluator.inputs()) inputs[spec.name] = backend.tensor(spec.dtype, spec.localShape);
  timeRuns(state, evaluator, backend, inputs);
}

// `gated`: computations take the machine's cores in issue order, as
// `hostir run` sets up a single rank (--cores-per-rank defaults to all of them).
void BM_CpuBackendPerOperation(benchmark::State& state, Workload workload, bool gated) {
  const Prepared& p = prepared(workload, state.range(0));
  Evaluator evaluator(p.program, p.params, /*rank=*/0, /*world=*/1);
  InProcessTeam team(1);
  auto comm = team.communicator(0);
  cpu::CpuBackendOptions options;
  if (gated) options.coresPerRank = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu::CpuBackend backend(options, *comm);
  std::map<std::string, TensorView> inputs;
  for (const TensorSpec& spec : evaluator.inputs()) {
    TensorView t = backend.allocate(spec.dtype, spec.localShape, backend.mainStream(), /*zero=*/false);
    std::vector<float> ones(static_cast<size_t>(t.numel()), 1.0f);
    backend.upload(ones.data(), t);
    inputs[spec.name] = t;
  }
  timeRuns(state, evaluator, backend, inputs);
}

enum class TeamCommunicator { InProcess, CopyEngines };

// One rank of BM_TwoRanksRowParallel, built on its own thread: the copy
// engines' construction is collective.
struct TeamRank {
  std::unique_ptr<Communicator> hostComm, copyEngines;
  std::unique_ptr<cpu::CpuBackend> backend;
  std::unique_ptr<Evaluator> evaluator;
  std::map<std::string, TensorView> inputs;

  TeamRank(InProcessTeam& team, int rank, TeamCommunicator choice, const Program& program,
           const std::map<std::string, int64_t>& params)
      : hostComm(team.communicator(rank)) {
    if (choice == TeamCommunicator::CopyEngines)
      copyEngines = std::make_unique<CopyEngineCommunicator>(*hostComm, std::make_unique<HostTransferEngine>());
    backend = std::make_unique<cpu::CpuBackend>(cpu::CpuBackendOptions{}, copyEngines ? *copyEngines : *hostComm);
    evaluator = std::make_unique<Evaluator>(program, params, rank, 2);
    for (const TensorSpec& spec : evaluator->inputs()) {
      TensorView t = backend->allocate(spec.dtype, spec.localShape, backend->mainStream(), /*zero=*/false);
      std::vector<float> ones(static_cast<size_t>(t.numel()), 1.0f);
      backend->upload(ones.data(), t);
      inputs[spec.name] = t;
    }
  }
  void run() { benchmark::DoNotOptimize(evaluator->run(*backend, inputs)); }
};

void BM_TwoRanksRowParallel(benchmark::State& state, TeamCommunicator choice) {
  const int64_t S = state.range(0);
  const Bindings bindings{{{"S", S}, {"M", 16 * S}, {"K", 16}, {"N", 16}}, 2};
  Program program = bench::exampleProgram("row_parallel_linear");
  bench::assignStreams(program, bindings);
  const std::map<std::string, int64_t> params = bench::verifiedParams(program, bindings);
  InProcessTeam team(2);
  // Rank 1 runs once per benchmark iteration, between two meetings with rank 0.
  std::barrier meet(2);
  std::atomic<bool> done{false};
  std::thread peer([&] {
    TeamRank rank(team, 1, choice, program, params);
    meet.arrive_and_wait();
    while (true) {
      meet.arrive_and_wait();
      if (done) break;
      rank.run();
      meet.arrive_and_wait();
    }
  });
  auto rank = std::make_unique<TeamRank>(team, 0, choice, program, params);
  meet.arrive_and_wait();
  const auto wallStart = std::chrono::steady_clock::now();
  for (auto _ : state) {
    meet.arrive_and_wait();
    rank->run();
    meet.arrive_and_wait();
  }
  const double wallNanos =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - wallStart).count();
  done = true;
  meet.arrive_and_wait();
  rank.reset();  // the copy engines' destruction is collective too
  peer.join();
  state.counters["ns_per_iteration"] = wallNanos / static_cast<double>(state.iterations() * S);
}

// Buffers for every declaration of `executable`, inputs filled with 0.5.
struct CallBuffers {
  std::map<std::string, std::vector<float>> storage;
  std::map<std::string, api::HostBuffer> inputs, outputs;

  explicit CallBuffers(const api::Executable& executable) {
    for (const api::TensorDecl& decl : executable.tensors()) {
      int64_t elements = 1;
      for (int64_t e : decl.shape) elements *= e;
      std::vector<float>& data = storage[decl.name];
      data.assign(static_cast<size_t>(elements), 0.5f);
      (decl.input ? inputs : outputs)[decl.name] = api::HostBuffer{decl.dtype, decl.shape, data.data()};
    }
  }
};

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void BM_ExecutableRun(benchmark::State& state) {
  api::Program program = api::Program::fromFile(HOSTIR_SOURCE_DIR "/examples/row_parallel_linear.hir");
  api::RunOptions options;
  options.ranks = 2;
  options.backend = "cpu";
  // The program's own time as `hostir run --warmup 20 --repeat 300` measures it.
  api::RunOptions repeated = options;
  repeated.warmup = 20;
  repeated.repeat = 300;
  api::Executable timing(program, repeated);
  CallBuffers timingBuffers(timing);
  const double programMillis = medianOf(timing.run(timingBuffers.inputs, timingBuffers.outputs).runMillis);
  timing.close();

  api::Executable executable(program, options);
  CallBuffers buffers(executable);
  std::vector<double> callMicros;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    executable.run(buffers.inputs, buffers.outputs);
    callMicros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  const double medianCall = medianOf(callMicros);
  state.counters["call_us"] = medianCall;
  state.counters["program_us"] = programMillis * 1e3;
  state.counters["overhead_us"] = medianCall - programMillis * 1e3;
}
BENCHMARK(BM_ExecutableRun)->UseRealTime()->MinWarmUpTime(0.2);

#ifdef HOSTIR_BENCH_CUDA
void BM_CudaRowParallel(benchmark::State& state, int ranks, const char* communicator, bool graph) {
  if (std::optional<std::string> reason = cudaUnavailableReason()) {
    state.SkipWithError(reason->c_str());
    return;
  }
  constexpr int64_t kIterations = 64;
  api::Program program = api::Program::fromFile(HOSTIR_SOURCE_DIR "/examples/row_parallel_linear.hir");
  api::RunOptions options;
  options.backend = "cuda";
  options.communicator = communicator;
  options.ranks = ranks;
  options.params = {{"M", 1024}, {"K", 16}, {"N", 16}, {"S", kIterations}};
  options.passes = {"assign-streams"};
  options.graph = graph;
  options.warmup = 5;
  options.repeat = 20;
  api::Executable executable(program, options);
  CallBuffers buffers(executable);
  std::vector<double> issueMillis, runMillis;
  for (auto _ : state) {
    const api::RunStats stats = executable.run(buffers.inputs, buffers.outputs);
    issueMillis.insert(issueMillis.end(), stats.issueMillis.begin(), stats.issueMillis.end());
    runMillis.insert(runMillis.end(), stats.runMillis.begin(), stats.runMillis.end());
  }
  const double issue = medianOf(issueMillis) * 1e3, run = medianOf(runMillis) * 1e3;
  state.counters["issue_us"] = issue;
  state.counters["run_us"] = run;
  state.counters["issue_per_iteration_us"] = issue / kIterations;
  state.counters["run_per_iteration_us"] = run / kIterations;
}
BENCHMARK_CAPTURE(BM_CudaRowParallel, nccl_1_rank, 1, "nccl", false)->UseRealTime()->Iterations(5);
BENCHMARK_CAPTURE(BM_CudaRowParallel, nccl_1_rank_graph, 1, "nccl", true)->UseRealTime()->Iterations(5);
BENCHMARK_CAPTURE(BM_CudaRowParallel, copy_engine_2_ranks, 2, "copy-engine", false)->UseRealTime()->Iterations(5);
BENCHMARK_CAPTURE(BM_CudaRowParallel, copy_engine_2_ranks_graph, 2, "copy-engine", true)->UseRealTime()->Iterations(5);
#endif

// The warm-up keeps start-up out of the figures: OpenBLAS's server thread
// spins for about 0.1 s after the library loads, on the core the stream
// threads would use, and the memory pool fills on the first runs.
#define HOSTIR_PER_OPERATION_BENCHMARK(function, label, ...) \
  BENCHMARK_CAPTURE(function, label, __VA_ARGS__)            \
      ->ArgName("S")                                         \
      ->Arg(8)                                               \
      ->Arg(64)                                              \
      ->Arg(512)                                             \
      ->UseRealTime()                                        \
      ->MinWarmUpTime(0.2)

HOSTIR_PER_OPERATION_BENCHMARK(BM_EvaluatorPerOperation, row_parallel, Workload::RowParallel);
HOSTIR_PER_OPERATION_BENCHMARK(BM_EvaluatorPerOperation, elementwise, Workload::Elementwise);
HOSTIR_PER_OPERATION_BENCHMARK(BM_EvaluatorPerOperation, allreduce, Workload::Allreduce);
HOSTIR_PER_OPERATION_BENCHMARK(BM_CpuBackendPerOperation, row_parallel, Workload::RowParallel, false);
HOSTIR_PER_OPERATION_BENCHMARK(BM_CpuBackendPerOperation, row_parallel_gated, Workload::RowParallel, true);
HOSTIR_PER_OPERATION_BENCHMARK(BM_CpuBackendPerOperation, elementwise, Workload::Elementwise, false);
HOSTIR_PER_OPERATION_BENCHMARK(BM_CpuBackendPerOperation, allreduce, Workload::Allreduce, false);
HOSTIR_PER_OPERATION_BENCHMARK(BM_TwoRanksRowParallel, in_process, TeamCommunicator::InProcess);
HOSTIR_PER_OPERATION_BENCHMARK(BM_TwoRanksRowParallel, copy_engine, TeamCommunicator::CopyEngines);

}  // namespace

BENCHMARK_MAIN();
