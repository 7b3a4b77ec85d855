// Mutation test for assign-streams: for every example and golden input,
// find every statement the pass inserted (by comparing its output with its
// input), delete each one in turn, and check the result against a table of
// expectations reasoned from the semantics (docs/hostir-language.md and the
// README's "Semantics the language doc leaves open"): the mutant either no
// longer verifies, is reported racy (with a race the table names), or is
// proved race-free, and the table says why.
//
// The labels: `capture@n` is the `main = get_current_stream()` before the
// n-th rewritten loop (one capture may serve several loops), `set-stream@n`
// the `with stream(i)` block around the n-th rewritten loop's body (the
// mutant keeps the block's statements and drops only the block),
// `sync-main@n` the `synchronize(main)` at the top of that block, `join@n`
// the loop's whole join loop and `join-sync@n` the join loop's
// `synchronize(stream(j))`.
//
// Every mutant is checked for a team of 2 ranks with pools of 1, 2 and 4
// worker streams; the table gives the outcome per pool.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>

#include "analysis/race_check.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/assign_streams.h"
#include "race_oracle.h"
#include "test_util.h"

namespace hostir {
namespace {

enum class Outcome { NoLongerVerifies, RaceFree, Racy };
constexpr Outcome X = Outcome::NoLongerVerifies;
constexpr Outcome F = Outcome::RaceFree;
constexpr Outcome R = Outcome::Racy;

const char* outcomeName(Outcome o) {
  switch (o) {
    case Outcome::NoLongerVerifies: return "no longer verifies";
    case Outcome::RaceFree: return "race-free";
    case Outcome::Racy: return "racy";
  }
  return "?";
}

// A race that must be among the reports where the outcome is Racy.
struct Witness {
  OpKind first = OpKind::Allocate, second = OpKind::Allocate;
  const char* buffer = "";
};

struct Expectation {
  const char* file;
  const char* label;
  Outcome pool1, pool2, pool4;
  Witness witness;
  const char* why;
};

constexpr int64_t kWorld = 2;
constexpr int64_t kPools[] = {1, 2, 4};

// Texts shared by many rows.
constexpr const char* kWhyCapture =
    "the captured stream is used by the loop's synchronize: without its definition the name is unknown, so the "
    "program no longer verifies";
constexpr const char* kWhyEverythingOnMain =
    "every iteration stays on the main stream, in issue order; synchronize(main) on the main stream is a no-op";
constexpr const char* kWhyJoinLast =
    "nothing follows the loop on the main stream, and the program end waits for every stream";

const std::vector<Expectation>& expectations() {
  using K = OpKind;
  static const std::vector<Expectation> kTable = {
      // examples/all_gather.hir
      {"examples/all_gather.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/all_gather.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/all_gather.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Allgather, "g"},
       "iteration i's allgather writes chunk i of g on stream(i), and nothing orders it after g's allocate on the "
       "main stream"},
      {"examples/all_gather.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/all_gather.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // examples/broadcast.hir
      {"examples/broadcast.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/broadcast.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/broadcast.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Copy, "xs"},
       "iteration i's copy writes block i of xs on stream(i), and nothing orders it after xs's allocate on the main "
       "stream"},
      {"examples/broadcast.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/broadcast.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // examples/events.hir: only the second (allreduce) loop is rewritten; its capture is main_1.
      {"examples/events.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/events.hir",
       "set-stream@1",
       F,
       F,
       F,
       {},
       "the allreduce loop runs on the main stream, which has already synchronized stream(0) and stream(1), the "
       "streams of the hand-written pipeline"},
      {"examples/events.hir",
       "sync-main@1",
       F,
       R,
       R,
       {K::Linear, K::Allreduce, "y"},
       "stream(k) is no longer ordered after the main stream's join of the pipeline: chunk 0 of y was written by "
       "the linear on stream(1) and is allreduced on stream(0); with one pool slot every worker stream is that "
       "same slot, so the allreduce follows the linear in issue order (and y's allocate, which slot 0 "
       "synchronized before the pipeline)"},
      {"examples/events.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/events.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // examples/reduce_scatter.hir
      {"examples/reduce_scatter.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/reduce_scatter.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/reduce_scatter.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Matmul, "p"},
       "iteration i's matmul writes chunk i of p on stream(i), and nothing orders it after p's allocate on the main "
       "stream"},
      {"examples/reduce_scatter.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/reduce_scatter.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/benchmark_variants.hir: work follows the loop on the main stream.
      {"tests/golden/benchmark_variants.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/benchmark_variants.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/benchmark_variants.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Linear, "y"},
       "iteration i's linear writes chunk i of y on stream(i), and nothing orders it after y's allocate on the main "
       "stream"},
      {"tests/golden/benchmark_variants.hir",
       "join@1",
       R,
       R,
       R,
       {K::Allreduce, K::Copy, "y"},
       "the copy into y on the main stream is no longer ordered after the iterations' allreduces of y"},
      {"tests/golden/benchmark_variants.hir",
       "join-sync@1",
       R,
       R,
       R,
       {K::Allreduce, K::Copy, "y"},
       "the copy into y on the main stream is no longer ordered after the iterations' allreduces of y"},

      // examples/row_parallel_linear.hir
      {"examples/row_parallel_linear.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/row_parallel_linear.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/row_parallel_linear.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Linear, "y"},
       "iteration i's linear writes chunk i of y on stream(i), and nothing orders it after y's allocate on the main "
       "stream"},
      {"examples/row_parallel_linear.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/row_parallel_linear.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // examples/sequence_parallel_mlp.hir (examples/parallel_block.hir has no loop: nothing is inserted)
      {"examples/sequence_parallel_mlp.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/sequence_parallel_mlp.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/sequence_parallel_mlp.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::ReduceScatter, "y"},
       "iteration i's reduce_scatter writes chunk i of y on stream(i), and nothing orders it after y's allocate on "
       "the main stream (the buffers allocated in the body are on stream(i) itself)"},
      {"examples/sequence_parallel_mlp.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"examples/sequence_parallel_mlp.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // examples/ring_all_gather_linear.hir on two ranks: its ring loop has one step, which nothing orders against
      // another.
      {"examples/ring_all_gather_linear.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/ring_all_gather_linear.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/ring_all_gather_linear.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Copy, K::Linear, "ring"},
       "the one step (two ranks) multiplies the block copied into `ring` on the main stream"},
      {"examples/ring_all_gather_linear.hir",
       "join@1",
       R,
       R,
       R,
       {K::SendRecv, K::Linear, "ring"},
       "the step after the loop uses what the loop's transfer received"},
      {"examples/ring_all_gather_linear.hir",
       "join-sync@1",
       R,
       R,
       R,
       {K::SendRecv, K::Linear, "ring"},
       "the step after the loop uses what the loop's transfer received"},

      // examples/ring_bidirectional.hir on two ranks: its ring loop has one step, which nothing orders against another.
      {"examples/ring_bidirectional.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/ring_bidirectional.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/ring_bidirectional.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Copy, K::Linear, "ring"},
       "the one step (two ranks) multiplies the halves copied into `ring` on the main stream"},
      {"examples/ring_bidirectional.hir",
       "join@1",
       R,
       R,
       R,
       {K::SendRecv, K::Linear, "ring"},
       "the step after the loop uses what the loop's transfer received"},
      {"examples/ring_bidirectional.hir",
       "join-sync@1",
       R,
       R,
       R,
       {K::SendRecv, K::Linear, "ring"},
       "the step after the loop uses what the loop's transfer received"},

      // examples/ring_reduce_scatter.hir on two ranks: its ring loop has one step, which nothing orders against
      // another.
      {"examples/ring_reduce_scatter.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"examples/ring_reduce_scatter.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"examples/ring_reduce_scatter.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Add, "incoming"},
       "the one step (two ranks) adds `incoming`, zeroed by its allocate on the main stream"},
      {"examples/ring_reduce_scatter.hir",
       "join@1",
       R,
       R,
       R,
       {K::SendRecv, K::Add, "incoming"},
       "the step after the loop uses what the loop's transfer received"},
      {"examples/ring_reduce_scatter.hir",
       "join-sync@1",
       R,
       R,
       R,
       {K::SendRecv, K::Add, "incoming"},
       "the step after the loop uses what the loop's transfer received"},

      // tests/golden/canonical_forms.hir: each iteration broadcasts its own chunk of y.
      {"tests/golden/canonical_forms.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/canonical_forms.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/canonical_forms.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Broadcast, "y"},
       "the broadcast of chunk i of y on stream(i) is no longer ordered after y's allocate (and the copy into its "
       "left half) on the main stream"},
      {"tests/golden/canonical_forms.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/canonical_forms.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/name_clash.hir: the capture is main_1, the join index j_1.
      {"tests/golden/name_clash.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/name_clash.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/name_clash.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Copy, "out"},
       "iteration i's copy writes chunk i of out on stream(i), and nothing orders it after out's allocate on the "
       "main stream"},
      {"tests/golden/name_clash.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/name_clash.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/nested_loops.hir
      {"tests/golden/nested_loops.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/nested_loops.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/nested_loops.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Linear, "y"},
       "the inner loop's linear writes rows of chunk i of y on stream(i), and nothing orders it after y's allocate "
       "on the main stream"},
      {"tests/golden/nested_loops.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/nested_loops.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/range_start.hir: iterations 1..3 on stream(0)..stream(2).
      {"tests/golden/range_start.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/range_start.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/range_start.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Add, "y"},
       "iteration i's add writes chunk i-1 of y on stream(i - 1), and nothing orders it after y's (zeroing) "
       "allocate on the main stream"},
      {"tests/golden/range_start.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/range_start.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/range_negative.hir: iterations -1..1 on stream(0)..stream(2).
      {"tests/golden/range_negative.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/range_negative.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/range_negative.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Add, "y"},
       "iteration i's add writes chunk i+1 of y on stream(i + 1), and nothing orders it after y's allocate on the "
       "main stream"},
      {"tests/golden/range_negative.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/range_negative.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/range_expressions.hir: iterations first-1 .. first+S-2 on stream(0)..stream(S-1).
      {"tests/golden/range_expressions.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/range_expressions.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/range_expressions.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Add, "y"},
       "iteration i's add writes its chunk of y on stream(i - (first - 1)), and nothing orders it after y's "
       "allocate on the main stream"},
      {"tests/golden/range_expressions.hir", "join@1", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/range_expressions.hir", "join-sync@1", F, F, F, {}, kWhyJoinLast},

      // tests/golden/pipelines.hir: loop 1 allgathers chunk i of x into its own g, multiplies it and
      // reduce-scatters into chunk i of y; loop 2 (range(2, S + 2)) writes chunk i - 2 of z and allgathers
      // into chunk i - 2 of gathered, both allocated after loop 1. One capture serves both loops.
      {"tests/golden/pipelines.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/pipelines.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/pipelines.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::ReduceScatter, "y"},
       "iteration i's reduce_scatter writes chunk i of y on stream(i), and nothing orders it after y's allocate on "
       "the main stream (g is allocated on stream(i) itself)"},
      {"tests/golden/pipelines.hir",
       "join@1",
       F,
       F,
       F,
       {},
       "loop 2 touches none of loop 1's buffers (it reads x and writes z and gathered; loop 1 writes y and its "
       "own g), and the program end waits for every stream"},
      {"tests/golden/pipelines.hir",
       "join-sync@1",
       F,
       F,
       F,
       {},
       "loop 2 touches none of loop 1's buffers (it reads x and writes z and gathered; loop 1 writes y and its "
       "own g), and the program end waits for every stream"},
      {"tests/golden/pipelines.hir", "set-stream@2", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/pipelines.hir",
       "sync-main@2",
       R,
       R,
       R,
       {K::Allocate, K::Linear, "z"},
       "iteration i's linear writes chunk i - 2 of z on stream(i - 2), and nothing orders it after z's allocate, "
       "issued on the main stream after loop 1's synchronizations"},
      {"tests/golden/pipelines.hir", "join@2", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/pipelines.hir", "join-sync@2", F, F, F, {}, kWhyJoinLast},

      // tests/golden/two_loops.hir: one capture serves both loops. Loop 1 copies chunk i of a into chunk i of b
      // on stream(i); loop 2 allreduces chunk i of b into chunk i of c on stream(i): the same chunk on the same
      // stream, which makes several of the inserted statements redundant.
      {"tests/golden/two_loops.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/two_loops.hir",
       "set-stream@1",
       F,
       F,
       F,
       {},
       "loop 1 runs on the main stream in order; loop 2's iterations synchronize the main stream first"},
      {"tests/golden/two_loops.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Copy, "b"},
       "loop 1's copy writes chunk i of b on stream(i), and nothing orders it after b's allocate on the main stream"},
      {"tests/golden/two_loops.hir",
       "join@1",
       F,
       F,
       F,
       {},
       "loop 2's iteration i reads chunk i of b on stream(i), the stream that wrote it in loop 1 (both loops have "
       "the same range), so it needs no join; nothing else touches b before the end"},
      {"tests/golden/two_loops.hir",
       "join-sync@1",
       F,
       F,
       F,
       {},
       "loop 2's iteration i reads chunk i of b on stream(i), the stream that wrote it in loop 1 (both loops have "
       "the same range), so it needs no join; nothing else touches b before the end"},
      {"tests/golden/two_loops.hir",
       "set-stream@2",
       F,
       F,
       F,
       {},
       "loop 2 runs on the main stream, which join 1 has ordered after every iteration of loop 1"},
      {"tests/golden/two_loops.hir",
       "sync-main@2",
       F,
       F,
       F,
       {},
       "stream(i) already synchronized the main stream in loop 1, after both allocates, and the main stream "
       "issued no work since; chunk i of b was written on stream(i) itself"},
      {"tests/golden/two_loops.hir", "join@2", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/two_loops.hir", "join-sync@2", F, F, F, {}, kWhyJoinLast},

      // tests/golden/handle_arrays.hir: loop 1 issues chunk i+1's allreduce into h[i + 1] on stream(i) and waits
      // h[i], which iteration i - 1 issued, before its relu of chunk i. After it, the main stream waits each ev[j]
      // of stream(0) (loop 2) but stream(1)'s done[k] only after add(y, t, out=y), and waits h[3], which stream(2)
      // issued before its relu of chunk 2.
      {"tests/golden/handle_arrays.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/handle_arrays.hir",
       "set-stream@1",
       F,
       F,
       F,
       {},
       "every iteration stays on the main stream, in issue order, as the program was written"},
      {"tests/golden/handle_arrays.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Copy, K::Allreduce, "y"},
       "iteration i's allreduce of chunk i+1 of y on stream(i) is not ordered after the copy into y on the main "
       "stream"},
      {"tests/golden/handle_arrays.hir",
       "join@1",
       F,
       R,
       R,
       {K::Relu, K::Add, "y"},
       "with one worker stream loop 2's wait_event(ev[j]) orders the main stream after every iteration; with "
       "more, the relu of chunk 1 on stream(1) meets add(y, t, out=y) on the main stream unordered"},
      {"tests/golden/handle_arrays.hir",
       "join-sync@1",
       F,
       R,
       R,
       {K::Relu, K::Add, "y"},
       "with one worker stream loop 2's wait_event(ev[j]) orders the main stream after every iteration; with "
       "more, the relu of chunk 1 on stream(1) meets add(y, t, out=y) on the main stream unordered"},

      // tests/golden/if_branches.hir: two loops whose bodies branch on the index, one capture for both.
      // Loop 1 writes chunk i of y (a copy or a linear) on stream(i); loop 2's odd iterations add chunk
      // i - 1 of z into chunk i on stream(i - 1).
      {"tests/golden/if_branches.hir", "capture@1", X, X, X, {}, kWhyCapture},
      {"tests/golden/if_branches.hir", "set-stream@1", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/if_branches.hir",
       "sync-main@1",
       R,
       R,
       R,
       {K::Allocate, K::Copy, "y"},
       "iteration 0's branch copies into chunk 0 of y on stream(0), and nothing orders it after y's zeroing "
       "allocate on the main stream"},
      {"tests/golden/if_branches.hir",
       "join@1",
       F,
       F,
       F,
       {},
       "nothing after loop 1 touches y, and the program end waits for every stream"},
      {"tests/golden/if_branches.hir",
       "join-sync@1",
       F,
       F,
       F,
       {},
       "nothing after loop 1 touches y, and the program end waits for every stream"},
      {"tests/golden/if_branches.hir", "set-stream@2", F, F, F, {}, kWhyEverythingOnMain},
      {"tests/golden/if_branches.hir",
       "sync-main@2",
       R,
       R,
       R,
       {K::Allocate, K::Add, "z"},
       "iteration 1's branch adds into chunk 1 of z on stream(0), and nothing orders it after z's zeroing "
       "allocate on the main stream"},
      {"tests/golden/if_branches.hir", "join@2", F, F, F, {}, kWhyJoinLast},
      {"tests/golden/if_branches.hir", "join-sync@2", F, F, F, {}, kWhyJoinLast},

      // tests/golden/untouched_loops.hir: the pass inserts nothing (one loop does no work, the other sets
      // its own streams), and neither in tests/golden/dependent_loops.hir (every loop's iterations depend
      // on each other), tests/golden/if_canonical.hir (no loop), nor in examples/pipeline_with_blocks.hir
      // and examples/pipeline_handles.hir (every loop chooses its streams with `with` blocks), so there is
      // nothing to delete; the test checks
      // that the lists are empty.
  };
  return kTable;
}

using Path = std::vector<size_t>;

struct Inserted {
  Path path;
  std::string label;
  bool unwrap = false;  // a with block: drop the block, keep its statements
};

bool sameLoopHeader(const ForLoop& a, const ForLoop& b) {
  return a.index == b.index && a.start == b.start && a.end == b.end;
}

// The statements of `output` (assign-streams applied to `input`) that the
// input does not have, found by walking both: an input statement appears
// unchanged, or as a loop whose body is a with block holding a
// synchronization and the original body.
std::vector<Inserted> insertedStatements(const Program& input, const Program& output) {
  std::vector<Inserted> inserted;
  const auto& in = input.body;
  const auto& out = output.body;
  size_t i = 0;
  int loopNumber = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const Statement& s = out[k];
    if (i < in.size() && s == in[i]) {
      ++i;
      continue;
    }
    if (i < in.size() && s.isFor() && in[i].isFor() && sameLoopHeader(s.loop(), in[i].loop()) &&
        s.loop().body.size() == 1 && s.loop().body[0].isWith() &&
        s.loop().body[0].with().body.size() == in[i].loop().body.size() + 1 &&
        std::equal(s.loop().body[0].with().body.begin() + 1, s.loop().body[0].with().body.end(),
                   in[i].loop().body.begin())) {
      ++i;
      ++loopNumber;
      const Statement& first = s.loop().body[0].with().body[0];
      EXPECT_TRUE(first.isOp() && first.op().kind == OpKind::Synchronize);
      inserted.push_back({{k, 0}, fmt::format("set-stream@{}", loopNumber), /*unwrap=*/true});
      inserted.push_back({{k, 0, 0}, fmt::format("sync-main@{}", loopNumber)});
      continue;
    }
    // A statement of its own: the capture (before the loop it serves) or
    // the join loop (after the loop).
    if (s.isOp() && s.op().kind == OpKind::GetCurrentStream) {
      inserted.push_back({{k}, fmt::format("capture@{}", loopNumber + 1)});
    } else if (s.isFor() && s.loop().body.size() == 1 && s.loop().body[0].isOp() &&
               s.loop().body[0].op().kind == OpKind::Synchronize) {
      inserted.push_back({{k}, fmt::format("join@{}", loopNumber)});
      inserted.push_back({{k, 0}, fmt::format("join-sync@{}", loopNumber)});
    } else {
      ADD_FAILURE() << "unexpected statement at " << k << " that the input does not have:\n" << printProgram(output);
    }
  }
  EXPECT_EQ(i, in.size()) << "some input statements are missing from the output";
  return inserted;
}

// Deletes the statement at `path`; with `unwrap`, a with block there gives
// way to its statements.
void eraseAt(std::vector<Statement>& body, const Path& path, bool unwrap, size_t depth = 0) {
  if (depth + 1 == path.size()) {
    auto at = body.begin() + static_cast<std::ptrdiff_t>(path[depth]);
    std::vector<Statement> kept;
    if (unwrap) kept = std::move(at->with().body);
    at = body.erase(at);
    body.insert(at, std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()));
    return;
  }
  eraseAt(body[path[depth]].nestedBodies()[0], path, unwrap, depth + 1);
}

// Statements without a source position: what the pass built (before printing and reparsing).
int unpositioned(const std::vector<Statement>& body) {
  int n = 0;
  walkStatements(body, [&](const Statement& s) { n += !s.loc().valid(); });
  return n;
}

std::vector<std::pair<std::string, std::string>> examplesAndGoldenInputs() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const char* dir : {"examples", "tests/golden"})
    for (const auto& path : testing::hirFiles(testing::sourceDir() / dir))
      if (path.stem().string().find('.') == std::string::npos)
        files.emplace_back(std::filesystem::relative(path, testing::sourceDir()).string(), testing::readFile(path));
  return files;
}

TEST(RaceMutation, DeletingAnyStatementAssignStreamsInsertedIsAsExpected) {
  std::map<std::pair<std::string, std::string>, const Expectation*> table;
  for (const Expectation& e : expectations()) {
    bool fresh = table.emplace(std::make_pair(std::string(e.file), std::string(e.label)), &e).second;
    EXPECT_TRUE(fresh) << "duplicate row " << e.file << " " << e.label;
  }
  std::set<std::pair<std::string, std::string>> used;
  int mutants = 0, racy = 0, raceFree = 0, unverifiable = 0;

  auto files = examplesAndGoldenInputs();
  ASSERT_EQ(files.size(), 30u);  // 15 examples, 15 golden inputs
  for (const auto& [file, text] : files) {
    SCOPED_TRACE(file);
    Program input = testing::parseOrDie(text, file);
    Program output = input;
    // Proved for the team the mutants are checked for, with the largest pool.
    ASSERT_FALSE(AssignStreamsPass().run(output, testing::raceCheckedContext(input, Bindings{{}, kWorld}, 4)));
    // Printed and reparsed, so that every statement has a position to report.
    std::string printed = printProgram(output);
    Program program = testing::parseOrDie(printed, file);
    ASSERT_EQ(program, output);

    std::vector<Inserted> inserted = insertedStatements(input, program);
    // Cross-check: the statements the pass built are exactly those without a source position.
    EXPECT_EQ(static_cast<int>(inserted.size()), unpositioned(output.body));
    if (file == "tests/golden/untouched_loops.hir" || file == "tests/golden/dependent_loops.hir" ||
        file == "tests/golden/if_canonical.hir" || file == "examples/pipeline_with_blocks.hir" ||
        file == "examples/pipeline_handles.hir") {
      EXPECT_TRUE(inserted.empty());
    }

    for (const Inserted& ins : inserted) {
      auto row = table.find({file, ins.label});
      if (row == table.end()) {
        ADD_FAILURE() << "no expectation for deleting " << ins.label << " from " << file;
        continue;
      }
      used.insert(row->first);
      const Expectation& e = *row->second;
      SCOPED_TRACE(fmt::format("deleting {} from {}: why: {}", ins.label, file, e.why));

      Program mutant = program;
      eraseAt(mutant.body, ins.path, ins.unwrap);
      ++mutants;
      Bindings bindings{{}, kWorld};
      Status error = verifyProgram(mutant, bindings);
      if (e.pool1 == X) {
        EXPECT_TRUE(e.pool2 == X && e.pool4 == X);
        EXPECT_TRUE(error) << "expected the mutant not to verify:\n" << printProgram(mutant);
        if (error) {
          EXPECT_NE(error->message.find("unknown"), std::string::npos) << error->message;
        }
        ++unverifiable;
        continue;
      }
      ASSERT_FALSE(error) << error->message << "\n" << printProgram(mutant);
      auto params = *bindParams(mutant, bindings);
      std::string mutantText = printProgram(mutant);
      for (size_t p = 0; p < 3; ++p) {
        int64_t pool = kPools[p];
        Outcome want = p == 0 ? e.pool1 : p == 1 ? e.pool2 : e.pool4;
        SCOPED_TRACE(fmt::format("{} worker streams: expected {}", pool, outcomeName(want)));
        // The reports' positions are in the printed (unmutated) program, which the mutant shares up to the deletion.
        auto races = checkRaces(mutant, params, kWorld, pool);
        std::string found;
        for (const RaceReport& r : races) found += formatRace(r, file + " (after assign-streams)", printed);
        if (want == F) {
          ++raceFree;
          EXPECT_TRUE(races.empty()) << found << mutantText;
          continue;
        }
        ++racy;
        bool matched = false;
        for (const RaceReport& r : races)
          matched |= r.race.first.op == e.witness.first && r.race.second.op == e.witness.second &&
                     r.race.buffer == e.witness.buffer;
        EXPECT_TRUE(matched) << "expected a race between " << signatureOf(e.witness.first).name << " and "
                             << signatureOf(e.witness.second).name << " on '" << e.witness.buffer << "', got:\n"
                             << (found.empty() ? "(none)\n" : found) << mutantText;
      }
    }
  }
  // Every row of the table was exercised.
  for (const auto& [key, e] : table) EXPECT_TRUE(used.count(key)) << "unused row " << key.first << " " << key.second;
  std::cout << fmt::format("[ mutation ] {} mutants: {} do not verify; {} racy and {} race-free checks (3 pools)\n",
                           mutants, unverifiable, racy, raceFree);
  EXPECT_EQ(mutants, static_cast<int>(expectations().size()));
}

}  // namespace
}  // namespace hostir
