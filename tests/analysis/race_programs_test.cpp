// A table of small racy and race-free programs, each checked with a world
// size and a worker-stream pool size. Every program must first pass the
// verifier (so the table cannot rot into programs the checker never sees);
// a racy one must report at least the expected race (first statement's
// line, second statement's line, buffer), a race-free one none at all; and
// none reads uninitialized memory or communicates differently by rank.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "analysis/program_check.h"
#include "analysis/race_check.h"
#include "hostir/parser.h"
#include "hostir/verifier.h"

namespace hostir {
namespace {

struct Case {
  const char* name;
  const char* text;  // line 1 is the `program` line
  int64_t world;
  int64_t pool;
  bool racy;
  // For racy programs: one race that must be among the reports.
  uint32_t firstLine = 0, secondLine = 0;
  const char* buffer = "";
  int64_t rank = -1;  // the rank the race is reported for, -1: any
};

// ---------------------------------------------------------------------------
// Programs shared by several table rows (checked with different pools or worlds).

// Two streams write y; with one pool slot they are the same stream.
constexpr const char* kTwoWriters = R"hir(program two_writers(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(1))
  synchronize(main)
  add(x, x, out=y)
}
)hir";

// stream(i) and stream(i + P): one slot when the pool has P slots.
constexpr const char* kSlotShare = R"hir(program slot_share(M = 8, N = 8, P = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(P) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=P)
    yi = shard_by_stream(y, axis=0, index=i, chunks=P)
    copy(xi, out=yi)
    set_current_stream(stream(i + P))
    add(yi, xi, out=yi)
  }
}
)hir";

// Rank r writes on stream(0), then on stream(r): only ranks other than 0 race.
constexpr const char* kRankStream = R"hir(program rank_stream(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(rank))
  synchronize(main)
  add(x, x, out=y)
}
)hir";

// Streams 0 and 3 write the same rows; a pool of 3 merges them, 4 separates them.
constexpr const char* kZeroAndThree = R"hir(program zero_and_three(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N], zero=true)
  main = get_current_stream()
  set_current_stream(stream(3))
  synchronize(main)
  set_current_stream(stream(0))
  synchronize(main)
  add(y, x, out=y)
  set_current_stream(stream(3))
  add(y, x, out=y)
}
)hir";

const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      // ---------------------------------------------------------------- racy
      {"EventRecordedTooEarly", R"hir(program event_early(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  ev = record_event()
  copy(x, out=y)
  set_current_stream(stream(1))
  wait_event(ev)
  z = allocate(f32[M, N])
  add(y, x, out=z)
}
)hir",
       1, 4, true, 8, 12, "y"},

      {"EventWaitedOnByTheWrongStream", R"hir(program wrong_waiter(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  ev = record_event()
  set_current_stream(stream(2))
  wait_event(ev)
  set_current_stream(stream(1))
  synchronize(main)
  z = allocate(f32[M, N])
  add(y, x, out=z)
}
)hir",
       1, 4, true, 7, 14, "y"},

      {"EventChainRecordedBeforeItsWait", R"hir(program chain_early(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  e0 = record_event()
  set_current_stream(stream(1))
  e1 = record_event()
  wait_event(e0)
  set_current_stream(stream(2))
  wait_event(e1)
  z = allocate(f32[M, N])
  copy(y, out=z)
}
)hir",
       1, 4, true, 7, 15, "y"},

      {"PoolOfTwoSeparatesStreams", kTwoWriters, 1, 2, true, 7, 10, "y"},
      {"StreamAndStreamPlusPoolAreDifferentInALargerPool", kSlotShare, 1, 4, true, 10, 12, "y"},
      {"PoolOfFourSeparatesStreamZeroAndThree", kZeroAndThree, 1, 4, true, 9, 11, "y"},

      {"OverlappingColumnChunks", R"hir(program overlapping_columns(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  a = shard_by_stream(y, axis=1, index=0, chunks=2)
  xa = shard_by_stream(x, axis=1, index=0, chunks=2)
  copy(xa, out=a)
  set_current_stream(stream(1))
  synchronize(main)
  b = shard_by_stream(y, axis=1, index=1, chunks=3)
  xb = shard_by_stream(x, axis=1, index=1, chunks=3)
  copy(xb, out=b)
}
)hir",
       1, 4, true, 9, 14, "y"},

      {"StridedColumnChunkMeetsRowChunk", R"hir(program strided_overlap(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  set_current_stream(stream(1))
  synchronize(main)
  set_current_stream(stream(0))
  yc = shard_by_stream(y, axis=1, index=0, chunks=2)
  xc = shard_by_stream(x, axis=1, index=0, chunks=2)
  copy(xc, out=yc)
  set_current_stream(stream(1))
  yr = shard_by_stream(y, axis=0, index=1, chunks=2)
  xr = shard_by_stream(x, axis=0, index=1, chunks=2)
  copy(xr, out=yr)
}
)hir",
       1, 4, true, 12, 16, "y"},

      {"NestedViewsOverlapInThreeDimensions", R"hir(program overlap_3d(A = 4, B = 6, C = 8) {
  input  x : f32[A, B, C]
  y = allocate(f32[A, B, C])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  y0 = shard_by_stream(y, axis=2, index=1, chunks=2)
  y01 = shard_by_stream(y0, axis=0, index=1, chunks=2)
  x0 = shard_by_stream(x, axis=2, index=1, chunks=2)
  x01 = shard_by_stream(x0, axis=0, index=1, chunks=2)
  copy(x01, out=y01)
  set_current_stream(stream(1))
  synchronize(main)
  y1 = shard_by_stream(y, axis=1, index=2, chunks=3)
  x1 = shard_by_stream(x, axis=1, index=2, chunks=3)
  add(x1, x1, out=y1)
}
)hir",
       1, 4, true, 11, 16, "y"},

      {"InPlaceAllreduceReadWithoutWait", R"hir(program allreduce_no_wait(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  copy(x, out=y)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = allreduce(y, op=sum)
  set_current_stream(stream(1))
  synchronize(main)
  z = allocate(f32[M, N])
  copy(y, out=z)
}
)hir",
       2, 4, true, 8, 12, "y"},

      {"WaitOnTheIssuingStreamOrdersNothingElse", R"hir(program wait_same_stream(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  copy(x, out=y)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = allreduce(y, op=max)
  wait(h)
  set_current_stream(stream(1))
  synchronize(main)
  z = allocate(f32[M, N])
  copy(y, out=z)
}
)hir",
       2, 4, true, 8, 13, "y"},

      {"AllgatherReadsWhileAnotherStreamWrites", R"hir(program allgather_reads(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N], zero=true)
  g = allocate(f32[M * world, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = allgather(y, out=g, axis=0)
  set_current_stream(stream(1))
  synchronize(main)
  copy(x, out=y)
}
)hir",
       2, 4, true, 8, 11, "y"},

      {"ReduceScatterWritesWhileSynchronizeTargetsTheWrongStream", R"hir(program rs_wrong_sync(M = 8, N = 8) {
  input  x : f32[M, N]
  o = allocate(f32[M, N / world])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = reduce_scatter(x, out=o, axis=1, op=sum)
  set_current_stream(stream(1))
  synchronize(main)
  synchronize(stream(2))
  z = allocate(f32[M, N / world])
  copy(o, out=z)
}
)hir",
       2, 4, true, 7, 12, "o"},

      {"BroadcastWritesWhileAnotherStreamWrites", R"hir(program broadcast_write(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N], zero=true)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  b = broadcast(y, root=0)
  set_current_stream(stream(1))
  synchronize(main)
  yr = shard_by_stream(y, axis=0, index=1, chunks=4)
  xr = shard_by_stream(x, axis=0, index=1, chunks=4)
  copy(xr, out=yr)
}
)hir",
       2, 4, true, 7, 12, "y"},

      // sendrecv reads its src on its stream, like any other statement.
      {"SendRecvReadsWhileAnotherStreamWrites", R"hir(program sendrecv_read(M = 8, N = 8) {
  input  x : f32[M, N]
  s = allocate(f32[M, N], zero=true)
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = sendrecv(s, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
  set_current_stream(stream(1))
  synchronize(main)
  copy(x, out=s)
}
)hir",
       3, 4, true, 8, 11, "s"},

      // ... and writes its out: a read of a view of it on another stream races.
      {"SendRecvWritesWhileAnotherStreamReads", R"hir(program sendrecv_write(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = sendrecv(x, out=y, to=(rank + 2) % world, from=(rank + world - 2) % world)
  set_current_stream(stream(1))
  synchronize(main)
  yr = shard_by_stream(y, axis=1, index=1, chunks=2)
  z = copy(yr)
}
)hir",
       4, 4, true, 7, 11, "y"},

      {"MissingJoin", R"hir(program missing_join(M = 8, N = 8, S = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
  set_current_stream(main)
  z = allocate(f32[M, N])
  add(y, y, out=z)
}
)hir",
       1, 4, true, 10, 14, "y"},

      {"JoinMissesTheLastStream", R"hir(program partial_join(M = 8, N = 8, S = 3) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
  set_current_stream(main)
  for j in range(S - 1) {
    synchronize(stream(j))
  }
  z = allocate(f32[M, N])
  add(y, y, out=z)
}
)hir",
       1, 4, true, 10, 17, "y"},

      {"MissingEntrySynchronize", R"hir(program missing_entry(M = 8, N = 8, S = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
  set_current_stream(main)
  for j in range(S) {
    synchronize(stream(j))
  }
}
)hir",
       1, 4, true, 3, 9, "y"},

      {"SynchronizeOnTheWrongStream", R"hir(program wrong_sync(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(1))
  synchronize(main)
  synchronize(stream(2))
  z = allocate(f32[M, N])
  add(y, x, out=z)
}
)hir",
       1, 4, true, 7, 12, "y"},

      {"NestedLoopIterationsShareAChunk", R"hir(program nested_racy(M = 8, N = 8, S = 2, T = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    for k in range(T) {
      yk = shard_by_stream(y, axis=0, index=k, chunks=T)
      xk = shard_by_stream(x, axis=0, index=k, chunks=T)
      copy(xk, out=yk)
    }
  }
}
)hir",
       1, 4, true, 11, 11, "y"},

      {"AccumulatingAcrossIterations", R"hir(program accumulate(M = 8, N = 8, S = 4) {
  input  x : f32[M, N]
  acc = allocate(f32[M, N], zero=true)
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    add(acc, x, out=acc)
  }
}
)hir",
       1, 4, true, 8, 8, "acc"},

      {"OnlyRankOneRaces", kRankStream, 2, 4, true, 7, 10, "y", 1},

      {"DeallocateWhileAnotherStreamReads", R"hir(program dealloc_racy(M = 8, N = 8) {
  input  x : f32[M, N]
  t = allocate(f32[M, N])
  copy(x, out=t)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  z = allocate(f32[M, N])
  add(t, t, out=z)
  set_current_stream(main)
  deallocate(t)
}
)hir",
       1, 4, true, 9, 11, "t"},

      {"DeallocateAViewedChunkStillInUse", R"hir(program dealloc_chunk(M = 8, N = 8) {
  input  x : f32[M, N]
  t = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(1))
  synchronize(main)
  tc = shard_by_stream(t, axis=1, index=1, chunks=4)
  xc = shard_by_stream(x, axis=1, index=1, chunks=4)
  copy(xc, out=tc)
  set_current_stream(main)
  deallocate(t)
}
)hir",
       1, 4, true, 9, 11, "t"},

      {"InputWrittenOnTwoStreams", R"hir(program input_written(M = 8, N = 8) {
  input  x : f32[M, N]
  input  a : f32[M, N]
  set_current_stream(stream(0))
  copy(a, out=x)
  set_current_stream(stream(1))
  add(a, a, out=x)
}
)hir",
       1, 4, true, 5, 7, "x"},

      {"InputWrittenOnMainReadOnAWorker", R"hir(program input_read_after_write(M = 8, N = 8) {
  input  x : f32[M, N]
  input  a : f32[M, N]
  copy(a, out=x)
  set_current_stream(stream(2))
  z = allocate(f32[M, N])
  copy(x, out=z)
}
)hir",
       1, 4, true, 4, 7, "x"},

      {"ALaterOrderedReadDoesNotHideTheWrite", R"hir(program read_chain(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(1))
  synchronize(stream(0))
  z1 = allocate(f32[M, N])
  copy(y, out=z1)
  set_current_stream(stream(2))
  synchronize(main)
  z2 = allocate(f32[M, N])
  copy(y, out=z2)
}
)hir",
       1, 4, true, 7, 15, "y"},

      {"MatmulOutputReadByAnotherStream", R"hir(program matmul_read(M = 8, K = 4, N = 8) {
  input  a : f32[M, K]
  input  b : f32[K, N]
  input  w : f32[N, N]
  main = get_current_stream()
  set_current_stream(stream(0))
  c = matmul(a, b)
  set_current_stream(stream(1))
  d = linear(c, w)
}
)hir",
       1, 4, true, 7, 9, "c"},

      // ----------------------------------------------------------- race-free
      {"EventRecordedAfterTheWrite", R"hir(program event_late(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  ev = record_event()
  set_current_stream(stream(1))
  wait_event(ev)
  z = allocate(f32[M, N])
  add(y, x, out=z)
}
)hir",
       1, 4, false},

      {"EventChainIsTransitive", R"hir(program chain(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  e0 = record_event()
  set_current_stream(stream(1))
  wait_event(e0)
  e1 = record_event()
  set_current_stream(stream(2))
  wait_event(e1)
  z = allocate(f32[M, N])
  copy(y, out=z)
}
)hir",
       1, 4, false},

      {"PoolOfOneMergesStreams", kTwoWriters, 1, 1, false},
      {"StreamAndStreamPlusPoolShareASlot", kSlotShare, 1, 2, false},
      {"PoolOfThreeMergesStreamZeroAndThree", kZeroAndThree, 1, 3, false},

      {"DisjointColumnChunks", R"hir(program disjoint_columns(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  a = shard_by_stream(y, axis=1, index=0, chunks=2)
  xa = shard_by_stream(x, axis=1, index=0, chunks=2)
  copy(xa, out=a)
  set_current_stream(stream(1))
  synchronize(main)
  b = shard_by_stream(y, axis=1, index=1, chunks=2)
  xb = shard_by_stream(x, axis=1, index=1, chunks=2)
  copy(xb, out=b)
}
)hir",
       1, 4, false},

      {"SameChunkReadByBothStreams", R"hir(program shared_read(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  copy(x, out=y)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  a = shard_by_stream(y, axis=1, index=1, chunks=2)
  za = allocate(f32[M, N / 2])
  copy(a, out=za)
  set_current_stream(stream(1))
  synchronize(main)
  b = shard_by_stream(y, axis=1, index=1, chunks=2)
  zb = allocate(f32[M, N / 2])
  add(b, b, out=zb)
}
)hir",
       1, 4, false},

      {"StridedChunksInterleaveButDoNotOverlap", R"hir(program strided_disjoint(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  set_current_stream(stream(1))
  synchronize(main)
  set_current_stream(stream(0))
  yc = shard_by_stream(y, axis=1, index=0, chunks=2)
  xc = shard_by_stream(x, axis=1, index=0, chunks=2)
  copy(xc, out=yc)
  set_current_stream(stream(1))
  yc1 = shard_by_stream(y, axis=1, index=1, chunks=2)
  yr = shard_by_stream(yc1, axis=0, index=1, chunks=2)
  xc1 = shard_by_stream(x, axis=1, index=1, chunks=2)
  xr = shard_by_stream(xc1, axis=0, index=1, chunks=2)
  copy(xr, out=yr)
}
)hir",
       1, 4, false},

      {"DisjointBlocksInThreeDimensions", R"hir(program disjoint_3d(A = 4, B = 6, C = 8) {
  input  x : f32[A, B, C]
  y = allocate(f32[A, B, C])
  main = get_current_stream()
  for i in range(2) {
    set_current_stream(stream(i))
    synchronize(main)
    for k in range(3) {
      yi = shard_by_stream(y, axis=2, index=i, chunks=2)
      yik = shard_by_stream(yi, axis=1, index=k, chunks=3)
      xi = shard_by_stream(x, axis=2, index=i, chunks=2)
      xik = shard_by_stream(xi, axis=1, index=k, chunks=3)
      add(xik, xik, out=yik)
    }
  }
}
)hir",
       1, 4, false},

      {"EmptyChunksTouchNothing", R"hir(program empty_chunks(M = 2, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(2, 4) {
    set_current_stream(stream(i))
    synchronize(main)
    yi = shard_by_stream(y, axis=0, index=i, chunks=4)
    xi = shard_by_stream(x, axis=0, index=i, chunks=4)
    copy(xi, out=yi)
  }
  set_current_stream(stream(1))
  synchronize(main)
  add(x, x, out=y)
}
)hir",
       1, 4, false},

      {"WaitOnAHandleFromAnotherStream", R"hir(program wait_other(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  copy(x, out=y)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = allreduce(y, op=sum)
  set_current_stream(stream(1))
  synchronize(main)
  wait(h)
  z = allocate(f32[M, N])
  copy(y, out=z)
}
)hir",
       2, 4, false},

      {"AllgatherWaitedBeforeItsInputIsOverwritten", R"hir(program allgather_waited(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N], zero=true)
  g = allocate(f32[M * world, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = allgather(y, out=g, axis=0)
  set_current_stream(stream(1))
  synchronize(main)
  wait(h)
  copy(x, out=y)
}
)hir",
       2, 4, false},

      {"ReduceScatterSynchronizedOnTheRightStream", R"hir(program rs_right_sync(M = 8, N = 8) {
  input  x : f32[M, N]
  o = allocate(f32[M, N / world])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = reduce_scatter(x, out=o, axis=1, op=sum)
  set_current_stream(stream(1))
  synchronize(main)
  synchronize(stream(0))
  z = allocate(f32[M, N / world])
  copy(o, out=z)
}
)hir",
       2, 4, false},

      {"BroadcastWaitedBeforeAnotherStreamWrites", R"hir(program broadcast_waited(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N], zero=true)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  b = broadcast(y, root=1)
  set_current_stream(stream(1))
  synchronize(main)
  wait(b)
  yr = shard_by_stream(y, axis=0, index=1, chunks=4)
  xr = shard_by_stream(x, axis=0, index=1, chunks=4)
  copy(xr, out=yr)
}
)hir",
       2, 4, false},

      {"SendRecvWaitedBeforeAnotherStreamWrites", R"hir(program sendrecv_waited(M = 8, N = 8) {
  input  x : f32[M, N]
  s = allocate(f32[M, N], zero=true)
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  h = sendrecv(s, out=y, to=(rank + 1) % world, from=(rank + world - 1) % world)
  set_current_stream(stream(1))
  synchronize(main)
  wait(h)
  copy(x, out=s)
  z = copy(y)
}
)hir",
       3, 4, false},

      {"JoinedLoop", R"hir(program joined(M = 8, N = 8, S = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    copy(xi, out=yi)
  }
  set_current_stream(main)
  for j in range(S) {
    synchronize(stream(j))
  }
  z = allocate(f32[M, N])
  add(y, y, out=z)
}
)hir",
       1, 4, false},

      {"NestedLoopsOnDisjointChunks", R"hir(program nested_ok(M = 8, N = 8, S = 2, T = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    for k in range(T) {
      yk = shard_by_stream(y, axis=0, index=i * T + k, chunks=S * T)
      xk = shard_by_stream(x, axis=0, index=i * T + k, chunks=S * T)
      copy(xk, out=yk)
    }
  }
  set_current_stream(main)
  for j in range(S) {
    synchronize(stream(j))
  }
  c = allreduce(y, op=sum)
  wait(c)
}
)hir",
       2, 4, false},

      {"RankStreamOnOneRank", kRankStream, 1, 4, false},

      {"RankDependentStreamsSynchronized", R"hir(program rank_sync(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  copy(x, out=y)
  set_current_stream(stream(rank + 1))
  synchronize(stream(0))
  add(x, x, out=y)
}
)hir",
       2, 4, false},

      {"DeallocateAfterSynchronize", R"hir(program dealloc_ok(M = 8, N = 8) {
  input  x : f32[M, N]
  t = allocate(f32[M, N])
  copy(x, out=t)
  main = get_current_stream()
  set_current_stream(stream(0))
  synchronize(main)
  z = allocate(f32[M, N])
  add(t, t, out=z)
  set_current_stream(main)
  synchronize(stream(0))
  deallocate(t)
}
)hir",
       1, 4, false},

      {"InputsReadOnEveryStreamWithoutOrdering", R"hir(program input_reads(M = 8, N = 8) {
  input  x : f32[M, N]
  a = allocate(f32[M, N])
  copy(x, out=a)
  set_current_stream(stream(0))
  b = allocate(f32[M, N])
  add(x, x, out=b)
  set_current_stream(stream(1))
  xc = shard_by_stream(x, axis=1, index=1, chunks=2)
  c = allocate(f32[M, N / 2])
  copy(xc, out=c)
  g = allocate(f32[M, N])
  h = allreduce(x, out=g, op=sum)
}
)hir",
       1, 4, false},

      {"InputWrittenOnOneStreamOnly", R"hir(program input_one_writer(M = 8, N = 8) {
  input  x : f32[M, N]
  input  a : f32[M, N]
  set_current_stream(stream(3))
  copy(a, out=x)
  add(x, a, out=x)
  h = allreduce(x, op=sum)
  wait(h)
}
)hir",
       2, 4, false},

      {"ProgramEndJoinsTheWorkers", R"hir(program end_joins(M = 8, N = 8, S = 4) {
  input  x : f32[M, N]
  output y : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    add(xi, xi, out=yi)
    c = allreduce(yi, op=sum)
  }
}
)hir",
       2, 4, false},

      {"AssignStreamsShapedRowParallelLinear", R"hir(program rpl(M = 16, K = 8, N = 8, S = 4) {
  input  x : f32[M, K] shard(1)
  input  w : f32[N, K] shard(1)
  output y : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    set_current_stream(stream(i))
    synchronize(main)
    xi = shard_by_stream(x, axis=0, index=i, chunks=S)
    yi = shard_by_stream(y, axis=0, index=i, chunks=S)
    linear(xi, w, out=yi)
    c = allreduce(yi, op=sum)
    wait(c)
  }
  set_current_stream(main)
  for j in range(S) {
    synchronize(stream(j))
  }
  y2 = allocate(f32[M, N])
  add(y, y, out=y2)
}
)hir",
       2, 2, false},

      {"SynchronizeTheCurrentStreamIsANoOpButHarmless", R"hir(program self_sync(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  set_current_stream(stream(1))
  synchronize(stream(1))
  synchronize(main)
  copy(x, out=y)
  add(y, y, out=y)
}
)hir",
       1, 4, false},

      // with blocks: the stream goes back after the block, so the add runs
      // on the main stream while the block's copy may still run on stream(0).
      {"WithBlockWorkRacesWithTheRestoredStream", R"hir(program with_race(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  with stream(0) {
    synchronize(main)
    copy(x, out=y)
  }
  add(y, y, out=y)
}
)hir",
       1, 4, true, 7, 9, "y"},

      // The event recorded in the block is visible after it (no scope), and
      // the main stream waits for it.
      {"WithBlockNamesUsedAfterIt", R"hir(program with_event(M = 8, N = 8) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  with stream(0) {
    synchronize(main)
    copy(x, out=y)
    done = record_event()
  }
  wait_event(done)
  add(y, y, out=y)
}
)hir",
       1, 4, false},

      // Nested in a loop: chunk i on stream(i), joined after the loop.
      {"WithBlocksInALoopJoined", R"hir(program with_loop(M = 8, N = 8, S = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    with stream(i) {
      synchronize(main)
      xi = shard_by_stream(x, axis=0, index=i, chunks=S)
      yi = shard_by_stream(y, axis=0, index=i, chunks=S)
      copy(xi, out=yi)
    }
  }
  for j in range(S) {
    synchronize(stream(j))
  }
  add(y, y, out=y)
}
)hir",
       1, 4, false},

      // The same loop without the join: the add on the main stream races
      // with the last iteration's copy.
      {"WithBlocksInALoopUnjoined", R"hir(program with_loop(M = 8, N = 8, S = 2) {
  input  x : f32[M, N]
  y = allocate(f32[M, N])
  main = get_current_stream()
  for i in range(S) {
    with stream(i) {
      synchronize(main)
      xi = shard_by_stream(x, axis=0, index=i, chunks=S)
      yi = shard_by_stream(y, axis=0, index=i, chunks=S)
      copy(xi, out=yi)
    }
  }
  add(y, y, out=y)
}
)hir",
       1, 4, true, 10, 13, "y"},

      // A nested with block on the captured main stream orders its copy
      // after the main stream's allocate; the outer block's add then
      // runs on stream(1) again and must wait for it.
      {"NestedWithBlockOnMainStream", R"hir(program with_nested(M = 8, N = 8) {
  input  x : f32[M, N]
  main = get_current_stream()
  with stream(1) {
    with main {
      y = copy(x)
    }
    add(y, y, out=y)
  }
}
)hir",
       1, 4, true, 6, 8, "y"},
  };
  return kCases;
}

// Test names print the case name, not its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RacePrograms : public ::testing::TestWithParam<Case> {};

std::string describe(const RaceReport& r) {
  return fmt::format("  {}:{} ({}) vs {}:{} ({}) on '{}'{} rank {}\n", r.race.first.loc.line, r.race.first.loc.col,
                     r.race.first.stream, r.race.second.loc.line, r.race.second.loc.col, r.race.second.stream,
                     r.race.buffer, r.race.region.toString(), r.rank);
}

TEST_P(RacePrograms, VerifiesAndIsCheckedAsExpected) {
  const Case& c = GetParam();
  auto program = parseProgram(c.text);
  ASSERT_TRUE(program) << renderDiagnostic(program.error(), c.name, c.text);
  Bindings bindings{{}, c.world};
  auto error = verifyProgram(*program, bindings);
  ASSERT_FALSE(error) << renderDiagnostic(*error, c.name, c.text);
  auto params = bindParams(*program, bindings);
  ASSERT_TRUE(params);

  std::vector<RaceReport> races = checkRaces(*program, *params, c.world, c.pool);
  std::string found;
  for (const RaceReport& r : races) found += describe(r);
  // What `hostir check` runs finds the same races, and nothing else: every
  // program of the table writes what it reads and communicates alike on every rank.
  ProgramCheck whole = checkProgram(*program, *params, c.world, c.pool);
  EXPECT_EQ(whole.races.size(), races.size());
  EXPECT_TRUE(whole.uninitializedReads.empty() && whole.unwrittenOutputs.empty() && !whole.communicationMismatch &&
              !whole.sendRecvMismatch)
      << formatProgramCheck(whole, c.name, c.text);
  if (!c.racy) {
    EXPECT_TRUE(races.empty()) << "expected race-free with world " << c.world << " and " << c.pool
                               << " worker streams, got:\n"
                               << found;
    return;
  }
  bool matched = false;
  for (const RaceReport& r : races) {
    if (r.race.first.loc.line == c.firstLine && r.race.second.loc.line == c.secondLine && r.race.buffer == c.buffer &&
        (c.rank < 0 || r.rank == c.rank)) {
      matched = true;
      // The two sides are on different streams and at least one writes.
      EXPECT_NE(r.race.first.stream, r.race.second.stream);
      EXPECT_TRUE(r.race.first.write || r.race.second.write);
      EXPECT_FALSE(r.race.region.empty());
    }
  }
  EXPECT_TRUE(matched) << "expected a race " << c.firstLine << " vs " << c.secondLine << " on '" << c.buffer
                       << "' with world " << c.world << " and " << c.pool << " worker streams, got:\n"
                       << (found.empty() ? "  (none)\n" : found);
}

INSTANTIATE_TEST_SUITE_P(Table, RacePrograms, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.racy ? "Racy_" : "RaceFree_") + info.param.name;
                         });

TEST(RaceProgramsTable, HasEnoughOfEachKind) {
  int racy = 0, free = 0;
  for (const Case& c : cases()) (c.racy ? racy : free)++;
  EXPECT_GE(racy, 22);
  EXPECT_GE(free, 22);
}

}  // namespace
}  // namespace hostir
