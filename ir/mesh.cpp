#include "ir/mesh.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace hostir {

std::string meshCoordName(std::string_view axis) { return fmt::format("coord({})", axis); }
std::string meshSizeName(std::string_view axis) { return fmt::format("size({})", axis); }
bool isMeshBuiltin(std::string_view function) { return function == "coord" || function == "size"; }
bool isMeshCoordName(std::string_view name) { return name.starts_with("coord("); }

Result<std::vector<int64_t>> meshExtents(const Program& program, const IntLookup& lookup, int64_t world) {
  std::vector<int64_t> extents;
  int64_t product = 1;
  bool overflows = false;
  for (const MeshAxis& axis : program.mesh) {
    auto extent = evaluate(axis.extent, lookup, axis.loc);
    if (!extent) return extent.error();
    if (*extent < 1)
      return Diagnostic{axis.loc,
                        fmt::format("mesh axis '{}' has extent {}; an axis needs at least 1 rank", axis.name, *extent)};
    extents.push_back(*extent);
    overflows |= __builtin_mul_overflow(product, *extent, &product);
  }
  if (program.mesh.empty() || (!overflows && product == world)) return extents;
  std::string named;
  for (size_t a = 0; a < extents.size(); ++a)
    named += fmt::format("{}{} = {}", a ? ", " : "", program.mesh[a].name, extents[a]);
  return Diagnostic{program.meshLoc,
                    fmt::format("the mesh's extents ({}) multiply to {}, not to the {} rank{} of "
                                "the team",
                                named, overflows ? std::string("more than 2^63") : std::to_string(product), world,
                                world == 1 ? "" : "s")};
}

std::vector<int64_t> meshCoordinates(const std::vector<int64_t>& extents, int64_t rank) {
  std::vector<int64_t> coordinates(extents.size());
  for (size_t a = extents.size(); a-- > 0;) {
    coordinates[a] = rank % extents[a];
    rank /= extents[a];
  }
  return coordinates;
}

size_t meshAxisIndex(const Program& program, std::string_view name) {
  for (size_t a = 0; a < program.mesh.size(); ++a)
    if (program.mesh[a].name == name) return a;
  throw std::logic_error(fmt::format("internal error: '{}' is no axis of the mesh", name));
}

Result<uint32_t> meshAxesOf(const Program& program, const Arg& over) {
  // Each name with where it is written (the operand's start when unknown).
  std::vector<std::pair<std::string, SourceLoc>> names;
  const auto where = [&over](const Expr& e) { return e.loc().valid() ? e.loc() : over.loc; };
  if (over.form == Arg::Form::List)
    for (const Expr& item : over.items)
      names.emplace_back(item.isName() ? item.nameValue() : item.toString(), where(item));
  else
    names.emplace_back(over.expr.toString(), where(over.expr));
  std::vector<std::string> axes;
  for (const MeshAxis& axis : program.mesh) axes.push_back(axis.name);
  if (axes.empty())
    return Diagnostic{over.loc, fmt::format("'over={}' needs a mesh, and the program declares none: program p(...) "
                                            "mesh({} = ...) {{",
                                            over.toString(), names.front().first)};
  uint32_t bits = 0;
  for (const auto& [name, loc] : names) {
    const auto at = std::find(axes.begin(), axes.end(), name);
    if (at == axes.end())
      return Diagnostic{
          loc, fmt::format("unknown mesh axis '{}' in 'over'; the mesh's axes are {}", name, fmt::join(axes, ", "))};
    const uint32_t bit = 1u << (at - axes.begin());
    if (bits & bit) return Diagnostic{loc, fmt::format("'over' names mesh axis '{}' twice", name)};
    bits |= bit;
  }
  return bits;
}

std::string meshAxesText(const Program& program, uint32_t over) {
  std::vector<std::string> names;
  for (size_t a = 0; a < program.mesh.size(); ++a)
    if (over & (1u << a)) names.push_back(program.mesh[a].name);
  return names.size() == 1 ? names.front() : fmt::format("({})", fmt::join(names, ", "));
}

MeshGroup meshGroup(const std::vector<int64_t>& extents, uint32_t over, int64_t rank) {
  const std::vector<int64_t> coordinates = meshCoordinates(extents, rank);
  MeshGroup group;
  for (size_t a = 0; a < extents.size(); ++a) {
    if (over & (1u << a)) {
      group.index = group.index * extents[a] + coordinates[a];
      group.size *= extents[a];
    } else {
      group.color = group.color * extents[a] + coordinates[a];
    }
  }
  return group;
}

int64_t meshGroupRank(const std::vector<int64_t>& extents, uint32_t over, int64_t color, int64_t index) {
  std::vector<int64_t> coordinates(extents.size());
  for (size_t a = extents.size(); a-- > 0;) {
    int64_t& from = (over & (1u << a)) ? index : color;
    coordinates[a] = from % extents[a];
    from /= extents[a];
  }
  int64_t rank = 0;
  for (size_t a = 0; a < extents.size(); ++a) rank = rank * extents[a] + coordinates[a];
  return rank;
}

}  // namespace hostir
