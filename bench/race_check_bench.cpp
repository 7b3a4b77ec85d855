// How long `hostir check`'s race analysis takes on a large program:
// examples/row_parallel_linear.hir over S one-row chunks (shard_by_stream + linear +
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

#include "analysis/program_check.h"
#include "analysis/race_check.h"
#include "bench/example_program.h"

namespace {

using namespace hostir;

struct Prepared {
  Program program;
  std::map<std::string, int64_t> params;
  int64_t iterations = 0;
};

// The program for `issued` issued operations, parsed, rewritten and verified.
const Prepared& prepared(int64_t issued) {
  static std::map<int64_t, std::unique_ptr<Prepared>> cache;
  auto& slot = cache[issued];
  if (slot) return *slot;
  int64_t s = issued / 2;
  Bindings bindings{{{"S", s}, {"M", s}, {"K", 8}, {"N", 4}}, 1};
  slot = std::make_unique<Prepared>();
  slot->program = bench::exampleProgram("row_parallel_linear");
  bench::assignStreams(slot->program, bindings);
  slot->params = bench::verifiedParams(slot->program, bindings);
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
