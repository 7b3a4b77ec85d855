// The issue rule of the communications: every collective (ir/collectives.h)
// becomes one CollectiveCall on the current stream (runtime/issue_rules.h).
// Its operands are read by their names in the op table row, so a new
// collective needs no rule of its own here.
#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <vector>

#include "ir/mesh.h"
#include "runtime/issue_rules.h"

namespace hostir {
namespace {

// Every communication's tensor is its first operand.
static_assert(operands::Allreduce::t == 0 && operands::Allgather::t == 0 && operands::ReduceScatter::t == 0 &&
              operands::AllToAll::t == 0 && operands::Broadcast::t == 0 && operands::SendRecv::src == 0);

// The rank a sendrecv operand names. A peer outside the team would leave
// the call unmatched: an error at the operand on this rank, before
// anything is issued.
// `group`: the ranks the communication spans (the team's, or its mesh
// group's), which `to` and `from` count.
int64_t sendRecvPeer(const RunFrame& frame, const Instruction& in, size_t operand, std::string_view what,
                     const MeshGroup& group, uint32_t over) {
  int64_t r = frame.integer(frame.slot(in, operand));
  if (r < 0 || r >= group.size)
    throw DiagnosticError{
        Diagnostic{frame.program.detail(in).operandLoc[operand],
                   over == 0 ? fmt::format("'sendrecv' {} rank {}, which is not a rank of a team of {} (on rank {})",
                                           what, r, frame.world, frame.rank)
                             : fmt::format("'sendrecv' {} place {} of its group, which has {} rank{} (on rank {})",
                                           what, r, group.size, group.size == 1 ? "" : "s", frame.rank)}};
  return r;
}

// Where a communication's operands sit in its signature, looked up by name
// once per kind rather than once per issued statement.
struct CommunicationOperands {
  std::optional<size_t> out, axis, root, to, from, over;
};

const CommunicationOperands& communicationOperands(OpKind kind) {
  static const std::vector<CommunicationOperands> table = [] {
    std::vector<CommunicationOperands> operands;
    for (const OpSignature& sig : allSignatures())
      operands.push_back({outOperand(sig), operandIndex(sig, "axis"), operandIndex(sig, "root"),
                          operandIndex(sig, "to"), operandIndex(sig, "from"), operandIndex(sig, "over")});
    return operands;
  }();
  return table[static_cast<size_t>(kind)];
}

}  // namespace

void issueCommunication(RunFrame& frame, const Instruction& in) {
  const CommunicationOperands& operands = communicationOperands(in.op);
  // An integer operand of the statement, when its kind takes it and it is given.
  auto integer = [&](std::optional<size_t> index) -> std::optional<size_t> {
    if (!index || !frame.present(in, *index)) return std::nullopt;
    return index;
  };
  // Without `out` a collective works in place (allreduce; broadcast has none).
  const std::optional<size_t>& out = operands.out;
  CollectiveCall& call = frame.collective;
  call.kind = in.op;
  call.input = frame.tensor(in, 0);
  call.output = out && frame.present(in, *out) ? frame.tensor(in, *out) : call.input;
  call.op = in.reduceOp;
  call.axis = call.root = call.to = call.from = 0;
  call.over = 0;
  call.loc = frame.program.detail(in).loc;
  if (std::optional<size_t> over = integer(operands.over)) {
    call.over = static_cast<uint32_t>(frame.integer(frame.slot(in, *over)));
    // Over every axis: the whole team.
    if (call.over == allMeshAxes(frame.program.meshExtents.size())) call.over = 0;
  }
  const MeshGroup group = call.over == 0 ? MeshGroup{0, frame.rank, frame.world}
                                         : meshGroup(frame.program.meshExtents, call.over, frame.rank);
  if (std::optional<size_t> axis = integer(operands.axis)) call.axis = frame.integer(frame.slot(in, *axis));
  if (std::optional<size_t> root = integer(operands.root)) call.root = frame.integer(frame.slot(in, *root));
  if (std::optional<size_t> to = integer(operands.to))
    call.to = sendRecvPeer(frame, in, *to, "sends to", group, call.over);
  if (std::optional<size_t> from = integer(operands.from))
    call.from = sendRecvPeer(frame, in, *from, "receives from", group, call.over);
  frame.backend.collective(frame.current, call);
  // The call must not keep the buffers alive past the statement (a deallocate may follow).
  call.input.buffer.reset();
  call.output.buffer.reset();
  // The communication occupies its stream: its completion is the stream's next position.
  if (in.result >= 0) frame.eventResult(in) = frame.backend.recordEvent(frame.current);
}

}  // namespace hostir
