// MpiLaunch: the MPI job of the command line (api/command_line.h) over
// comm/'s session, communicator, watchdog and heartbeats.
#include <cstdio>
#include <string>

#include "api/command_line.h"
#include "comm/host_watchdog.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_heartbeat.h"
#include "executor/runner.h"
#include "runtime/backend_selection.h"

namespace hostir::api {

struct MpiLaunch::Impl {
  std::unique_ptr<MpiSession> session;
  std::unique_ptr<HostWatchdog> watchdog;
  // Beats while this rank works on its own (destroyed before the watchdog it tells).
  std::unique_ptr<MpiHeartbeat> heartbeat;
  std::unique_ptr<MpiCommunicator> comm;
  int64_t ranksOnThisNode = 1;
};

bool MpiLaunch::launchedByMpirun() { return MpiSession::launchedByMpirun(); }

MpiLaunch::MpiLaunch(std::chrono::milliseconds deadline) : impl_(std::make_unique<Impl>()) {
  Impl& t = *impl_;
  t.session = std::make_unique<MpiSession>();
  // Before the communicator exists, a deadline ends the job through MPI_COMM_WORLD.
  t.watchdog = std::make_unique<HostWatchdog>(deadline, [](const std::string& why) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "hostir: rank %d: error: %s\n", rank, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  });
  withDeadline(t.watchdog.get(), "setting up MPI", [&] {
    t.comm = std::make_unique<MpiCommunicator>();
    t.ranksOnThisNode = hostir::ranksOnThisNode(*t.comm).value_or(t.comm->size());
    // Four beats per deadline: a late one or two never end a healthy job.
    t.heartbeat = std::make_unique<MpiHeartbeat>(MPI_COMM_WORLD, *t.watchdog, deadline / 4,
                                                 t.session->threadLevel() == MPI_THREAD_MULTIPLE);
  });
}

MpiLaunch::~MpiLaunch() = default;

int MpiLaunch::rank() const { return impl_->comm->rank(); }
int64_t MpiLaunch::world() const { return impl_->comm->size(); }
int64_t MpiLaunch::ranksOnThisNode() const { return impl_->ranksOnThisNode; }
HostWatchdog* MpiLaunch::watchdog() const { return impl_->watchdog.get(); }

void MpiLaunch::whileBeating(const std::function<void()>& work) {
  MpiHeartbeat::Beating beating = impl_->heartbeat->beat();
  work();
}

void MpiLaunch::barrier(std::string_view step) {
  withDeadline(impl_->watchdog.get(), std::string(step), [&] { impl_->comm->barrier(); });
}

bool MpiLaunch::anyRank(bool mine, std::string_view step) {
  return withDeadline(impl_->watchdog.get(), std::string(step), [&] { return anyRankFailed(*impl_->comm, mine); });
}

double MpiLaunch::fromRank0(double value, std::string_view step) {
  withDeadline(impl_->watchdog.get(), std::string(step),
               [&] { impl_->comm->broadcast(&value, 1, hostir::DType::F64, 0); });
  return value;
}

std::vector<double> MpiLaunch::allgather(const std::vector<double>& row, std::string_view step) {
  std::vector<double> table(row.size() * static_cast<size_t>(impl_->comm->size()));
  withDeadline(impl_->watchdog.get(), std::string(step),
               [&] { impl_->comm->allgather(row.data(), table.data(), row.size(), hostir::DType::F64); });
  return table;
}

}  // namespace hostir::api
