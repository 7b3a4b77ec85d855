// Which CUDA devices this process can use, and which one a rank drives.
#pragma once

#include <optional>
#include <string>

#include "comm/communicator.h"

namespace hostir::cuda {

// The number of devices the CUDA runtime reports, 0 when it reports an
// error (no driver, no device) or this build has no code for the devices.
int usableDeviceCount();

// Why no device is usable ("no usable CUDA device: ..."), or nullopt.
std::optional<std::string> deviceProblem();

// The rank's node-local index: the launcher's local rank
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID) for MPI
// ranks, the team rank for in-process ranks (they share this process and
// its environment) or when no launcher says.
int localRank(const Communicator& hostComm);

// How many ranks of the team share this node: the launcher's local size
// (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS) for MPI ranks, the team
// size for in-process ranks; nullopt when no launcher says.
std::optional<int> localRankCount(const Communicator& hostComm);

// The device a rank drives: its local rank modulo the device count.
int deviceForRank(const Communicator& hostComm);

}  // namespace hostir::cuda
