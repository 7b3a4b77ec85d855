#include "comm/mesh_groups.h"

#include <fmt/format.h>

#include "ir/mesh.h"

namespace hostir {

void MeshGroups::use(Communicator& team, const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) {
  if (extents != extents_) groups_.clear();
  extents_ = extents;
  for (uint32_t over : overs) {
    if (over == 0 || groups_.count(over)) continue;
    const MeshGroup group = meshGroup(extents, over, team.rank());
    groups_[over] = team.split(static_cast<int>(group.color), static_cast<int>(group.index));
  }
}

Communicator& MeshGroups::of(Communicator& team, uint32_t over) const {
  if (over == 0) return team;
  const auto group = groups_.find(over);
  if (group == groups_.end())
    throw CommError(fmt::format("internal error: no communicator was split for mesh axes {:#x}", over));
  return *group->second;
}

}  // namespace hostir
