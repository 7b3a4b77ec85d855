// The Backend interface: everything device-specific the evaluator needs.
// Streams run their work in issue order; events are positions in a stream;
// every kernel call is asynchronous on the stream it is given. The CPU and
// CUDA backends implement it; the evaluator above it is shared.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "ir/diagnostic.h"
#include "ir/ops.h"
#include "runtime/memory_high_water.h"
#include "runtime/tensor.h"

namespace hostir {

class Stream {
 public:
  virtual ~Stream() = default;
  // -1 for the main stream, the pool slot for worker streams.
  virtual int slot() const = 0;
};

// "Everything issued on `stream` before this point": record_event, the
// target of synchronize, and the completion of a communication.
struct Event {
  Stream* stream = nullptr;
  uint64_t position = 0;
};

// One communication as the host issued it: a statement of a collective of
// ir/collectives.h on views; runtime/collective_plan gives its signature
// and the contiguous buffers a Communicator takes.
struct CollectiveCall {
  OpKind kind = OpKind::Allreduce;  // a communication: collectiveOf(kind) is its collective
  TensorView input;
  TensorView output;  // the same view as input when in place
  ReduceOp op = ReduceOp::Sum;
  int64_t axis = 0;          // the axis it splits its tensors along (allgather, reduce_scatter, all_to_all)
  int64_t root = 0;          // broadcast
  int64_t to = 0, from = 0;  // sendrecv: input goes to rank `to`, output comes from rank `from`
  // The mesh axes it runs over (bit a for axis a, ir/mesh.h), or 0 for the
  // whole team. When nonzero, it spans this rank's group over those axes
  // (meshGroup, of useMesh's extents), and `root`, `to` and `from` are
  // places in that group rather than team ranks.
  uint32_t over = 0;
  SourceLoc loc;  // for messages about a communication that never completes
};

// One computation as the host issued it: the tensor operands of `kind` by
// its signature's positions (operands::Linear::x, ::bias, ::out, ...); null
// for absent operands and operands that are not tensors. The `out` slot
// holds the view to write: the statement's result or out= operand, or a
// temporary the evaluator stages it through. The views live in the
// evaluator's values and may change once the call returns: a backend that
// runs the work later copies them.
//
// `scalars` holds the values of the non-tensor operands by the same
// positions, with the issue rule's defaults filled in for absent ones:
// integers (attention's heads, kv_heads, offsets), booleans as 0 or 1
// (causal, transpose_a), FLOAT attributes (scale's by, rms_norm's eps).
// Integer operands are also in `integers`, exactly: a double holds
// integers only to 2^53, and offsets near 2^63 are valid.
// cast's target dtype is its `out` view's.
struct KernelCall {
  // Every position cleared.
  explicit KernelCall(OpKind k = OpKind::Add) : KernelCall(k, kMaxOperands) {}
  // The first `count` positions cleared, those of the operation's signature
  // (positions()): the evaluator makes one call per issued computation, and
  // clearing all kMaxOperands of them cost as much as the rest of issuing
  // an add. Nothing reads a call past its signature.
  KernelCall(OpKind k, size_t count) : kind(k) {
    std::fill_n(operands.begin(), count, nullptr);
    std::fill_n(scalars.begin(), count, 0.0);
    std::fill_n(integers.begin(), count, int64_t{0});
  }
  // How many positions the operation's signature has.
  size_t positions() const { return signatureOf(kind).operands.size(); }

  OpKind kind;
  std::array<const TensorView*, kMaxOperands> operands;
  std::array<double, kMaxOperands> scalars;
  std::array<int64_t, kMaxOperands> integers;
  const TensorView& operand(size_t index) const { return *operands[index]; }
  int64_t integer(size_t index) const { return integers[index]; }
  bool flag(size_t index) const { return scalars[index] != 0.0; }
};

// A tensor a statement names, and what it does to the tensor's elements
// (from the op table, with in-place operands resolved).
struct TensorAccess {
  const TensorView* view = nullptr;  // null: no tensor in this operand slot
  Effect effect = Effect::None;
};

// The statement the evaluator is about to issue, for backends that observe
// rather than compute (the race checker) and for traces.
struct OperationInfo {
  OpKind kind;
  SourceLoc loc;
  std::string_view result;  // the name the statement defines, if any
  // Per signature operand: the tensor it names and the statement's effect on
  // it. The `out` slot of `y = op(...)` holds the result y. The views live in
  // the evaluator's values: a result is allocated after beginOperation and is
  // in place by the time the statement's kernel or communication is issued.
  std::array<TensorAccess, kMaxOperands> tensors{};
  // Per signature operand: the name the program gives its tensor (the
  // result's for the `out` slot of `y = op(...)`), for errors about it.
  std::array<std::string_view, kMaxOperands> names{};
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // Called before the calls that issue one statement's work.
  virtual void beginOperation(const OperationInfo&) {}

  // Before a run of a program with a mesh of `extents` (row-major, ir/mesh.h)
  // whose communications name the sets of axes `overs` (CollectiveCall's
  // `over`): those then run among their group's ranks. A backend splits its
  // team into the groups once (every rank calls this with the same
  // arguments before the same run); one that cannot run such
  // communications refuses them when they are issued.
  virtual void useMesh(const std::vector<int64_t>& /*extents*/, const std::vector<uint32_t>& /*overs*/) {}

  // Called at the start of every run: captures the main stream afresh.
  virtual void beginRun() = 0;
  virtual Stream* mainStream() = 0;
  // Worker stream `stream(number)`: slot number mod the pool size.
  virtual Stream* workerStream(int64_t number) = 0;

  virtual Event recordEvent(Stream* stream) = 0;
  // `waiter` runs nothing issued after this call before `event` is reached.
  virtual void waitEvent(Stream* waiter, const Event& event) = 0;
  // The host blocks until every stream has run all its work; rethrows the
  // first failure of any stream's work.
  virtual void synchronizeHost() = 0;

  // Graph replay (CUDA graphs): true once the backend has recorded a run,
  // the first after it was asked to; replayRun() then issues that run's
  // work again, with no operation issued, and synchronizeHost() waits for
  // it as for a run.
  virtual bool replaysRuns() const { return false; }
  virtual void replayRun() { throw std::logic_error("internal error: this backend records no run to replay"); }

  // Stream-ordered memory: usable by work issued on `stream` from now on.
  virtual TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) = 0;
  // The buffer may be reused once all work issued so far that uses it is done.
  virtual void deallocate(const TensorView& tensor, Stream* stream) = 0;

  // Issues one computation (an operation of category Compute: linear,
  // matmul, add, ...) on `stream`; its kernel is chosen by call.kind.
  virtual void compute(Stream* stream, const KernelCall& call) = 0;
  // dst = src, elementwise; also what the evaluator stages read-then-write
  // results through.
  virtual void copy(Stream* stream, const TensorView& src, const TensorView& dst) = 0;

  // Issues a communication on `stream`: it starts once the work issued
  // before it on the stream is done, and work issued after it on the same
  // stream starts once it has completed. Communications are matched across
  // ranks by the order of these calls.
  virtual void collective(Stream* stream, const CollectiveCall& call) = 0;

  // Blocking transfers between host memory (contiguous) and a tensor, for
  // program inputs and outputs; call only when the streams are idle.
  virtual void upload(const void* host, const TensorView& dst) = 0;
  virtual void download(const TensorView& src, void* host) = 0;

  // Whether tensors are host memory that the host may read and write
  // directly while the streams are idle (the CPU's), so that inputs are
  // copied in without staging.
  virtual bool tensorsInHostMemory() const { return false; }

  // From any thread, when the run has failed or was cancelled: the streams
  // may drop the work they have queued instead of running it (the CPU's
  // do; a device's queued work runs out).
  virtual void abandonQueuedWork() {}

  // The tensor memory this backend holds, live and at its peak; null for
  // backends that hold none (the analyses and the simulator).
  virtual MemoryHighWater* tensorMemory() { return nullptr; }
};

}  // namespace hostir
