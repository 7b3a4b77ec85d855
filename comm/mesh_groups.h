// A team's communicators for the groups of a device mesh (ir/mesh.h): one
// split of the team per set of axes the program's communications name,
// made once and kept, in the same order on every rank, as splits must be.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace hostir {

class MeshGroups {
 public:
  // Splits `team` into the groups over each set of axes in `overs` (bit a
  // for axis a of a mesh of `extents`), unless it holds them already.
  // Collective: every rank of the team calls it with the same arguments.
  void use(Communicator& team, const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs);
  // This rank's communicator over `over`: the team itself for 0.
  Communicator& of(Communicator& team, uint32_t over) const;

 private:
  std::vector<int64_t> extents_;
  std::map<uint32_t, std::unique_ptr<Communicator>> groups_;
};

}  // namespace hostir
