// How long `hostir check`'s race analysis takes on a large program: a
// row-parallel linear over S one-row chunks (shard_by_stream + linear +
// allreduce + wait per iteration), after assign-streams, so every iteration
// runs on a worker stream behind a synchronize(main) and a join loop of S
// synchronizes follows. Each iteration issues 2 operations (the linear and
// the allreduce), so S = 50,000 issues 100,001 operations (with y's
// allocate) in 400,002 statement instances. The parse, the pass and the
// verifier run once, outside the timing. BM_CheckRaces times checkRaces
// (races only); BM_CheckProgram times checkProgram, what `hostir check` runs
// (races, uninitialized reads, and the cross-rank comparison, here on one
// rank since the program never names `rank`).
//
//   race_check_bench                      # 10k, 100k and 1M issued operations
//   race_check_bench --benchmark_filter=/100000
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "executor/program_check.h"
#include "executor/race_oracle.h"
#include "hostir/parser.h"
#include "hostir/verifier.h"
#include "passes/assign_streams.h"

namespace {

using namespace hostir;

struct Prepared {
  Program program;
  std::map<std::string, int64_t> params;
  int64_t iterations = 0;
};

// assign-streams as `hostir opt` runs it: each rewrite proved with the race
// check for one rank. The benchmark needs the loop rewritten, so a loop left
// as it is would be an error here.
void assignStreams(Program& program) {
  auto context = raceCheckedContext(program, Bindings{{}, 1}, 4);
  if (!context) throw std::runtime_error(context.error().message);
  const Program before = program;
  if (auto error = AssignStreamsPass().run(program, *context)) throw std::runtime_error(error->message);
  if (program == before) throw std::runtime_error("assign-streams left the benchmark's loop as it is");
}

// The program for `issued` issued operations, parsed, rewritten and verified.
const Prepared& prepared(int64_t issued) {
  static std::map<int64_t, std::unique_ptr<Prepared>> cache;
  auto& slot = cache[issued];
  if (slot) return *slot;
  int64_t s = issued / 2;
  std::string text = fmt::format(R"hir(program race_bench(S = {}, M = {}, K = 8, N = 4) {{
  input  x : f32[M, K] shard(1)
  input  w : f32[N, K] shard(1)
  output y : f32[M, N]

  y = allocate(f32[M, N])
  for i in range(S) {{
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    linear(xi, w, out=yi)
    c = allreduce(yi, op=sum)
    wait(c)
  }}
}}
)hir",
                                 s, s);
  auto parsed = parseProgram(text);
  if (!parsed) throw std::runtime_error(parsed.error().message);
  slot = std::make_unique<Prepared>();
  slot->program = std::move(*parsed);
  assignStreams(slot->program);
  Bindings bindings{{}, 1};
  if (auto error = verifyProgram(slot->program, bindings)) throw std::runtime_error(error->message);
  slot->params = *bindParams(slot->program, bindings);
  slot->iterations = s;
  return *slot;
}

void BM_CheckRaces(benchmark::State& state) {
  const int64_t issued = state.range(0);
  const int64_t pool = state.range(1);
  const Prepared& p = prepared(issued);
  size_t races = 0;
  for (auto _ : state) {
    auto reports = checkRaces(p.program, p.params, /*world=*/1, pool);
    races = reports.size();
    benchmark::DoNotOptimize(reports);
  }
  if (races != 0) state.SkipWithError("the benchmark program must be race-free");
  const int64_t s = p.iterations;
  state.counters["issued_ops"] = static_cast<double>(2 * s + 1);
  // allocate, capture, set_current_stream(main); per iteration set_current_stream, synchronize,
  // 2 views, linear, allreduce, wait; per join iteration one synchronize.
  state.counters["statements"] = static_cast<double>(3 + 7 * s + s);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(2 * s + 1), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_CheckProgram(benchmark::State& state) {
  const int64_t issued = state.range(0);
  const int64_t pool = state.range(1);
  const Prepared& p = prepared(issued);
  bool ok = true;
  for (auto _ : state) {
    ProgramCheck check = checkProgram(p.program, p.params, /*world=*/1, pool);
    ok = check.ok();
    benchmark::DoNotOptimize(check);
  }
  if (!ok) state.SkipWithError("the benchmark program must pass every check");
  const int64_t s = p.iterations;
  state.counters["issued_ops"] = static_cast<double>(2 * s + 1);
  state.counters["ops_per_s"] =
      benchmark::Counter(static_cast<double>(2 * s + 1), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_CheckRaces)
    ->ArgNames({"issued", "pool"})
    ->Args({10'000, 4})
    ->Args({100'000, 4})
    ->Args({100'000, 1})
    ->Args({1'000'000, 4})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

BENCHMARK(BM_CheckProgram)
    ->ArgNames({"issued", "pool"})
    ->Args({10'000, 4})
    ->Args({100'000, 4})
    ->Args({1'000'000, 4})
    ->Unit(benchmark::kMillisecond)
    ->MeasureProcessCPUTime()
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
