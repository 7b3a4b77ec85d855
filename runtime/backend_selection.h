// Where a team's ranks run, worked out once for the tool and the backends
// alike: which ranks share a node (from the launcher's environment), how
// many cores each may use, which CUDA device each drives, and when a node
// has too few devices for its ranks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "comm/communicator.h"

namespace hostir {

// What the launcher (Open MPI, MPICH/Hydra, Slurm) says about this process's
// place on its node; nullopt when no launcher says. Only meaningful for MPI
// ranks: the ranks of an in-process team share one process and its environment.
// The node-local rank: OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID.
std::optional<int64_t> launcherLocalRank();
// The ranks on this node: OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS.
std::optional<int64_t> launcherLocalSize();

// Whether `comm`'s ranks are threads of this process (an in-process team).
bool isInProcessTeam(const Communicator& comm);

// How many of a team's `world` ranks share this node: all of them in process,
// the launcher's local size for MPI ranks, or nullopt when no launcher says.
std::optional<int64_t> ranksOnThisNode(bool inProcess, int64_t world);
std::optional<int64_t> ranksOnThisNode(const Communicator& comm);

// A rank's node-local index: the launcher's local rank for MPI ranks, the
// team rank for in-process ranks or when no launcher says.
int64_t localRank(const Communicator& comm);

// The cores (computations at once) a rank of the CPU backend may use:
// `requested` when positive, else this node's cores divided by its ranks, at
// least 1. Stream threads beyond the rank's share of the cores would be
// time-sliced: every chunk would finish late, and no communication could
// start early.
int resolveCoresPerRank(int requested, int64_t ranksOnNode);

// The CUDA device a rank drives: its local rank modulo the device count.
int deviceForRank(int64_t localRank, int devices);

// NCCL drives one device per rank. When `ranksOnNode` ranks are more than
// this node's `devices`, the reason, as the end of a sentence whose subject
// is the backend: "needs a CUDA device per rank for NCCL: 3 ranks share this
// node's 2 devices"; nullopt when every rank has a device.
std::optional<std::string> deviceShortage(int64_t ranksOnNode, int devices);

// Which communicator carries a rank's collectives (`--communicator`): the
// host team's (MPI or in-process) on the CPU and NCCL on CUDA by default,
// or copy engines (comm/copy_engine_communicator.h), which need ranks that
// are threads of one process and let several of them share a device.
enum class CommunicatorChoice { Auto, Nccl, CopyEngine };

std::optional<CommunicatorChoice> parseCommunicatorChoice(std::string_view name);  // auto, nccl, copy-engine
std::string_view communicatorChoiceName(CommunicatorChoice choice);

// The CUDA backend's communicator: `requested`, where Auto means NCCL
// unless in-process ranks outnumber this node's devices (NCCL cannot put
// two ranks on one device), then copy engines.
CommunicatorChoice cudaCommunicator(CommunicatorChoice requested, bool inProcess, int64_t ranksOnNode, int devices);

// Why `requested` cannot carry this team's collectives on the CUDA backend
// (`cuda`) or the CPU one, as the end of a sentence whose subject is the
// backend ("needs a CUDA device per rank for NCCL: 3 ranks share this
// node's 2 devices"); nullopt when it can.
std::optional<std::string> communicatorProblem(CommunicatorChoice requested, bool cuda, bool inProcess, int64_t world,
                                               int64_t ranksOnNode, int devices);

}  // namespace hostir
