#include "tools/hostir/mpi_team.h"

#include <cstdio>
#include <string>

#include "runtime/backend_selection.h"
#include "tools/hostir/exit_codes.h"

namespace hostir::tool {

MpiTeam startMpi(std::chrono::milliseconds deadline) {
  MpiTeam t;
  t.session = std::make_unique<MpiSession>();
  // Before the communicator exists, a deadline ends the job through MPI_COMM_WORLD.
  t.watchdog = std::make_unique<HostWatchdog>(deadline, [](const std::string& why) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "hostir: rank %d: error: %s\n", rank, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, kProgramError);
  });
  withDeadline(t.watchdog.get(), "setting up MPI", [&] {
    t.comm = std::make_unique<MpiCommunicator>();
    t.ranksOnThisNode = ranksOnThisNode(*t.comm).value_or(t.comm->size());
    // Four beats per deadline: a late one or two never end a healthy job.
    t.heartbeat = std::make_unique<MpiHeartbeat>(MPI_COMM_WORLD, *t.watchdog, deadline / 4,
                                                 t.session->threadLevel() == MPI_THREAD_MULTIPLE);
  });
  return t;
}

}  // namespace hostir::tool
