// A program's device mesh (`mesh(dp = world / TP, tp = TP)`): its axes lay
// the team out row-major, the last axis varying fastest, as PyTorch's
// DeviceMesh does. Each axis gives the program two integer builtins,
// coord(AXIS) (this rank's coordinate along it) and size(AXIS) (its
// extent), which resolve like `rank` and `world`: as names, spelled as the
// program writes them, bound per rank.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/expr.h"
#include "ir/ir.h"

namespace hostir {

// The builtins' spellings, which are also their names: "coord(tp)", "size(tp)".
std::string meshCoordName(std::string_view axis);
std::string meshSizeName(std::string_view axis);
// Whether `function` is a mesh builtin (`coord` or `size`).
bool isMeshBuiltin(std::string_view function);
// Whether `name` is a coord(AXIS) name: a part of the rank.
bool isMeshCoordName(std::string_view name);

// The extents of `program`'s mesh with the integers `lookup` gives (the
// parameters and `world`), checked: each at least 1 and their product
// `world`, or an error positioned at the mesh that names the extents.
Result<std::vector<int64_t>> meshExtents(const Program& program, const IntLookup& lookup, int64_t world);

// `rank`'s coordinate along each axis of a mesh of `extents`, row-major.
std::vector<int64_t> meshCoordinates(const std::vector<int64_t>& extents, int64_t rank);

// The position of the axis `name` in `program`'s mesh (which has it).
size_t meshAxisIndex(const Program& program, std::string_view name);

// The axes an `over=` operand names (an axis, or a list of them) as bits of
// the mesh's axis positions (bit a for axis a); or an error at the operand
// when the program has no mesh, a name is none of its axes, or an axis is
// named twice. A communication without `over` spans the whole team.
Result<uint32_t> meshAxesOf(const Program& program, const Arg& over);
// Every axis of a mesh of `axes` axes: the whole team.
inline uint32_t allMeshAxes(size_t axes) { return axes >= 32 ? ~0u : (1u << axes) - 1; }
// The names of the axes in `over`, as a program writes them: "tp", "(dp, tp)".
std::string meshAxesText(const Program& program, uint32_t over);

// The group of `rank` in a communication over the axes `over` of a mesh of
// `extents`: the ranks that share every other coordinate. `color` numbers
// the group (its coordinates along the other axes, row-major), `index` is
// the rank's place in it (its coordinates along `over`, row-major: what
// `to`, `from` and `root` count) and `size` the group's rank count.
struct MeshGroup {
  int64_t color = 0, index = 0, size = 1;
};
MeshGroup meshGroup(const std::vector<int64_t>& extents, uint32_t over, int64_t rank);
// The team rank at place `index` of the group `color` of a communication over `over`.
int64_t meshGroupRank(const std::vector<int64_t>& extents, uint32_t over, int64_t color, int64_t index);

// Calls bind(name, value) for each builtin of `program`'s mesh on `rank`:
// coord(AXIS) and size(AXIS) of every axis, in the mesh's order.
template <typename Bind>
void forEachMeshBuiltin(const Program& program, const std::vector<int64_t>& extents, int64_t rank, Bind&& bind) {
  const std::vector<int64_t> coordinates = meshCoordinates(extents, rank);
  for (size_t axis = 0; axis < program.mesh.size(); ++axis) {
    bind(meshCoordName(program.mesh[axis].name), coordinates[axis]);
    bind(meshSizeName(program.mesh[axis].name), extents[axis]);
  }
}

}  // namespace hostir
