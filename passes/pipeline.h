// pipeline: software-pipelines a chunked loop whose body is an input
// communication, then computation, then an output communication (either
// communication may be absent), as Megatron's and Transformer Engine's
// overlapped layers and FSDP's prefetch schedule them:
//
//   main = get_current_stream()
//   g_ring = allocate(f32[(d + 1) * R, C])   # the input's buffer, d + 1 slots
//   with stream(0) { synchronize(main) }
//   for step in range(S + d) {
//     if step < S {                          # issue chunk `step`'s input
//       i = step
//       ...its views...
//       g = shard_by_stream(g_ring, axis=0, index=i % (d + 1), chunks=d + 1)
//       with stream(0) { ag[i] = allgather(xi, out=g, axis=0) }
//     }
//     if step >= d {                         # compute chunk step - d
//       i = step - d
//       ...the body's views and allocations...
//       wait(ag[i])
//       ...the computation, in order, on the current stream...
//       done[i] = record_event()
//       with stream(0) { wait_event(done[i]) }   # its slot may be refilled
//       with stream(1) {
//         wait_event(done[i])
//         rs[i] = reduce_scatter(p, out=yi, axis=0, op=sum)
//       }
//     }
//   }
//   for j in range(S) { wait(rs[j]) }
//
// So chunk i + d's input travels while chunk i computes, and chunk i's
// output travels while chunk i + 1 computes. Input communications go on
// stream(0) and output ones on stream(1), so that the race check sees every
// pair of them that the new order could break: the rewrite is kept only
// when it verifies and adds no race (with the context's bindings).
//
// A loop of another shape is left as written, with a remark naming the
// statement that stops it: a nested block, stream management, a
// communication between two computations, a wait for a handle from outside
// the loop, an unnamed handle, or an input buffer whose shape changes with
// the iteration (it cannot rotate).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "passes/fresh_names.h"
#include "passes/pass.h"

namespace hostir {

// Why a loop cannot be pipelined: the statement that stops it.
struct PipelineStop {
  SourceLoc loc;
  std::string reason;
};

// A loop's pipelined form: the statements that replace it, and what moved,
// in words, for the remark.
struct PipelinedLoop {
  std::vector<Statement> statements;
  std::string moved;
  bool hasInput = false;  // depth matters only with an input communication
};

// `loop`, a statement of `program`, pipelined at `depth`. It captures the
// current stream as `main` first when `captureMain`, else `main` names a
// capture of the current stream already made. New names come from `names`.
// Nothing is proved here: the caller race-checks the result.
std::variant<PipelinedLoop, PipelineStop> pipelineLoop(const ForLoop& loop, int64_t depth, const std::string& main,
                                                       bool captureMain, FreshNames& names, const Program& program);

class PipelinePass : public Pass {
 public:
  static constexpr int64_t kDefaultDepth = 1;
  static constexpr int64_t kMaxDepth = 16;
  explicit PipelinePass(int64_t depth = kDefaultDepth) : depth_(depth) {}

  static constexpr std::string_view kName = "pipeline";
  static constexpr std::string_view kSummary =
      "software-pipeline each top-level loop of input communication, computation and output communication "
      "(pipeline{depth=d} issues inputs d iterations ahead; default 1)";

  // `depth=d` as written in `pipeline{depth=d}`; an error names what is wrong.
  static Result<int64_t> parseOptions(std::string_view options);

  std::string_view name() const override { return kName; }
  std::string_view summary() const override { return kSummary; }
  using Pass::run;
  Status run(Program& program, const PassContext& context) override;

 private:
  int64_t depth_;
};

}  // namespace hostir
