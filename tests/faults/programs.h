// Small programs the hardening tests run: rank-dependent communications,
// a race, an allocation far beyond any machine's memory.
#pragma once

namespace hostir::testing {

// Rank r issues r + 1 allreduces (the loop's bound names `rank`).
inline constexpr const char* kLoopByRank = R"(program loop_by_rank(N = 8) {
  input  t : f32[N]
  output y : f32[N]
  y = copy(t)
  for i in range(rank + 1) {
    h = allreduce(y)
    wait(h)
  }
}
)";

// Rank r reduces the first of r + 1 chunks: element counts differ.
inline constexpr const char* kSizeByRank = R"(program size_by_rank(N = 12) {
  input  t : f32[N]
  output y : f32[N]
  y = copy(t)
  v = shard_by_stream(y, axis=0, index=0, chunks=rank + 1)
  h = allreduce(v)
  wait(h)
}
)";

// The ranks of each tp group reduce differently sized chunks.
inline constexpr const char* kSizeByGroupPlace = R"(program size_by_place(TP = 2) mesh(dp = world / TP, tp = TP) {
  input  t : f32[12]
  output y : f32[world * 12] shard(0)
  y = copy(t)
  v = shard_by_stream(y, axis=0, index=0, chunks=coord(tp) + 1)
  h = allreduce(v, over=tp)
  wait(h)
}
)";

// Every rank names itself as the root.
inline constexpr const char* kRootByRank = R"(program root_by_rank(N = 8) {
  input  t : f32[N]
  output y : f32[N]
  y = copy(t)
  h = broadcast(y, root=rank)
  wait(h)
}
)";

// Two streams write y with nothing ordering them.
inline constexpr const char* kRacy = R"(program racy(N = 8) {
  input  t : f32[N]
  output y : f32[N]
  y = allocate(f32[N])
  set_current_stream(stream(0))
  copy(t, out=y)
  set_current_stream(stream(1))
  copy(t, out=y)
}
)";

// The last chunk of y is never written: `check` rejects it, but running it
// races on nothing (what the output holds there is simply undefined).
inline constexpr const char* kMissedChunk = R"(program missed_chunk(M = 8, N = 4, S = 4) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  for i in range(S - 1) {
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
}
)";

// 4 TiB: no test machine has it; the verifier accepts it (it fits in 63 bits).
inline constexpr const char* kHugeAllocation = R"(program huge(N = 1099511627776) {
  input  t : f32[4]
  output y : f32[4]
  big = allocate(f32[N])
  y = copy(t)
}
)";

// Gathers rows of `table` by `routes`, the program's own names, at a
// position the fault tests name: the statement is at 5:12.
inline constexpr const char* kRoutedGather = R"(program routed(R = 4, N = 6) {
  input  table : f32[R, 3]
  input  routes : i32[N] shard(0)
  output picked : f32[N, 3] shard(0)
  picked = gather_rows(table, routes)
}
)";

// A long enough run for faults between runs (with --repeat).
inline constexpr const char* kChunkedAllreduce = R"(program chunked(M = 64, N = 32, S = 4) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = copy(x)
  for i in range(S) {
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    h = allreduce(yi)
    wait(h)
  }
}
)";

}  // namespace hostir::testing
