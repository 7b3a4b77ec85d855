// Checks Communicator::split on any team, as the mesh axes of a program
// use it: the same checks run on in-process teams and under mpirun.
#pragma once

#include <string>
#include <vector>

#include "comm/communicator.h"

namespace hostir::commtest {

// Lays `world` out as a row-major mesh of `columns` columns (the last axis
// varies fastest, as a program's mesh) and splits it along both axes, then
// checks each group's members, sizes and ranks (by allgathers of world
// ranks), a split whose keys reverse the order, and every collective on each
// group against the reference of collective_checks.h. Returns the problems
// this rank found; it always makes every call, so ranks stay matched.
std::vector<std::string> checkMeshGroups(Communicator& world, int columns);

}  // namespace hostir::commtest
