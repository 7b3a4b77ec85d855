#include "ir/mesh.h"

#include <fmt/format.h>

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

}  // namespace hostir
