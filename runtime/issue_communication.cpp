// The issue rule of the communications: allreduce, allgather,
// reduce_scatter, broadcast and sendrecv become one CollectiveCall on the
// current stream (runtime/issue_rules.h).
#include <fmt/format.h>

#include <string_view>

#include "runtime/issue_rules.h"

namespace hostir {
namespace {

// Every communication's tensor is its first operand; all but broadcast
// write `out` (allreduce in place without it).
static_assert(operands::Allreduce::t == 0 && operands::Allgather::t == 0 && operands::ReduceScatter::t == 0 &&
              operands::Broadcast::t == 0 && operands::SendRecv::src == 0);
static_assert(size_t{operands::Allreduce::out} == size_t{operands::Allgather::out} &&
              size_t{operands::Allgather::out} == size_t{operands::ReduceScatter::out} &&
              size_t{operands::ReduceScatter::out} == size_t{operands::SendRecv::out});
static_assert(size_t{operands::Allgather::axis} == size_t{operands::ReduceScatter::axis});

// The rank a sendrecv operand names. A peer outside the team would leave
// the call unmatched: an error at the operand on this rank, before
// anything is issued.
int64_t sendRecvPeer(const RunFrame& frame, const Instruction& in, size_t operand, std::string_view what) {
  int64_t r = frame.integer(in.operand[operand]);
  if (r < 0 || r >= frame.world)
    throw DiagnosticError{Diagnostic{
        in.operandLoc[operand], fmt::format("'sendrecv' {} rank {}, which is not a rank of a team of {} (on rank {})",
                                            what, r, frame.world, frame.rank)}};
  return r;
}

}  // namespace

void issueCommunication(RunFrame& frame, const Instruction& in) {
  CollectiveCall call;
  call.kind = in.op;
  call.input = frame.tensor(in, operands::Allreduce::t);
  call.output = in.op != OpKind::Broadcast && frame.present(in, operands::Allreduce::out)
                    ? frame.tensor(in, operands::Allreduce::out)
                    : call.input;
  call.op = in.reduceOp;
  call.loc = in.loc;
  if (in.op == OpKind::Allgather || in.op == OpKind::ReduceScatter) {
    int32_t axis = in.operand[operands::Allgather::axis];
    call.axis = axis >= 0 ? frame.integer(axis) : 0;
  }
  if (in.op == OpKind::Broadcast) call.root = frame.integer(in.operand[operands::Broadcast::root]);
  if (in.op == OpKind::SendRecv) {
    call.to = sendRecvPeer(frame, in, operands::SendRecv::to, "sends to");
    call.from = sendRecvPeer(frame, in, operands::SendRecv::from, "receives from");
  }
  frame.backend.collective(frame.current, call);
  // The communication occupies its stream: its completion is the stream's next position.
  if (in.result >= 0) frame.value(in.result).event = frame.backend.recordEvent(frame.current);
}

}  // namespace hostir
