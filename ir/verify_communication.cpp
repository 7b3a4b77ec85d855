// The bound check's rule for the communications, checked for a team of
// world_ ranks (ir/shape_checker.h): one rule per shape rule of the
// collectives table (ir/collectives.h), so a collective whose shape rule
// the table already has needs no rule of its own. Operands are found by
// their names in the op table row.
#include <string>

#include "ir/collectives.h"
#include "ir/diagnostic.h"
#include "ir/mesh.h"
#include "ir/shape_checker.h"
#include "ir/shapes.h"

namespace hostir::verification {
namespace {

// "allgather, all_to_all, broadcast and sendrecv": the collectives that move i32.
std::string collectivesMovingIndices() {
  std::string names;
  for (const CollectiveInfo& row : allCollectives()) {
    if (row.reduces) continue;
    if (!names.empty()) names += ", ";
    names += row.name;
  }
  if (size_t last = names.rfind(", "); last != std::string::npos) names.replace(last, 2, " and ");
  return names;
}

}  // namespace

void ShapeChecker::checkCommunication(const Operation& op) {
  const OpSignature& sig = op.signature();
  const CollectiveInfo& info = collectiveInfo(*collectiveOf(op.kind));
  const BoundTensor& t = tensor(op, 0);
  const SourceLoc tLoc = op.operands[0]->loc;
  if (!acceptsDType(info.kind, t.dtype))
    fail(tLoc,
         fmt::format("'{}' reduces elements, but '{}' is {}: {} tensors hold indices, which only {} move", info.name,
                     op.operands[0]->nameValue(), dtypeName(t.dtype), dtypeName(t.dtype), collectivesMovingIndices()));
  const std::optional<size_t> out = outOperand(sig);
  int64_t axis = 0;
  if (splitsAlongAxis(info.shape)) {
    const size_t axisOperand = *operandIndex(sig, "axis");
    axis = intOperand(op, axisOperand, 0);
    checkAxis(op, axisOperand, axis, t);
  }
  // The ranks it spans: the team's, or over mesh axes the group's.
  int64_t world = world_;
  std::string group = "a team";
  if (const std::optional<size_t> over = operandIndex(sig, "over"); over && op.operands[*over]) {
    auto axes = meshAxesOf(program_, *op.operands[*over]);  // verified
    if (!axes) fail(op.operands[*over]->loc, axes.error().message);
    world = *axes == allMeshAxes(meshExtents_.size()) ? world_ : meshGroup(meshExtents_, *axes, 0).size;
    group = fmt::format("a group over {}", meshAxesText(program_, *axes));
  }
  const std::string overWorld = fmt::format("'{}' over {} ranks", info.name, world);
  switch (info.shape) {
    case CollectiveShape::Same:
      if (out && op.operands[*out]) requireShape(op, *out, t.shape, fmt::format("the result of '{}'", info.name));
      break;
    case CollectiveShape::Gathered:
    case CollectiveShape::Scattered:
    case CollectiveShape::Exchanged: {
      // The output is the input with its extent along the axis changed by the rule.
      std::vector<int64_t> shape = t.shape;
      const int64_t extent = shape[static_cast<size_t>(axis)];
      std::optional<int64_t> result = outputExtent(info.shape, extent, world);
      if (!result && info.shape == CollectiveShape::Gathered)
        fail(op.loc, fmt::format("{}: the gathered extent of axis {}, {} x {}, does not fit in 64 bits", overWorld,
                                 axis, extent, world));
      if (!result)
        fail(tLoc, fmt::format("'{}' splits axis {} of extent {} over {} ranks: it must divide evenly", info.name, axis,
                               extent, world));
      shape[static_cast<size_t>(axis)] = *result;
      if (info.shape == CollectiveShape::Gathered) checkByteSize(op.loc, "the gathered tensor", t.dtype, shape);
      requireShape(op, *out, shape, overWorld);
      break;
    }
    case CollectiveShape::InPlace: {
      const size_t rootOperand = *operandIndex(sig, "root");
      int64_t root = intOperand(op, rootOperand);
      if (root < 0 || root >= world)
        fail(op.operands[rootOperand]->loc, fmt::format("root {} is not a rank of {} of {}", root, group, world));
      break;
    }
    case CollectiveShape::PerPeer:
      // The structure check gave src and out one dtype; their element
      // counts may differ (a ring of uneven blocks), pairing is checked
      // across ranks by `hostir check`.
      for (std::string_view peer : {"to", "from"}) {
        const size_t operand = *operandIndex(sig, peer);
        int64_t rank = intOperand(op, operand);
        if (rank < 0 || rank >= world)
          fail(op.operands[operand]->loc, fmt::format("'{}' {} rank {}, which is not a rank of {} of {}", info.name,
                                                      peer == "to" ? "sends to" : "receives from", rank, group, world));
      }
      break;
  }
  // A communication's optional result: the handle `wait` takes.
  if (op.result()) bindEventResult(op);
}

}  // namespace hostir::verification
