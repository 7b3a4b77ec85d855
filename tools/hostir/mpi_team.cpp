#include "tools/hostir/mpi_team.h"

namespace hostir::tool {

Team Team::start(int64_t ranks, std::chrono::milliseconds deadline) {
  Team team;
  if (api::MpiLaunch::launchedByMpirun()) team.mpi = std::make_unique<api::MpiLaunch>(deadline);
  team.world = team.mpi ? team.mpi->world() : ranks;
  team.rank = team.mpi ? team.mpi->rank() : 0;
  team.ranksOnThisNode = team.mpi ? team.mpi->ranksOnThisNode() : ranks;
  return team;
}

}  // namespace hostir::tool
