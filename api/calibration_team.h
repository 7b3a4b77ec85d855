// Inside the library: the team a calibration measures on, in process
// (api/calibration.cpp) or on MPI (api/mpi_run.cpp), and the one
// calibration both make.
#pragma once

#include <functional>
#include <string>

#include "calibration/calibration.h"
#include "hostir/calibration.h"

namespace hostir::api {

struct CalibrationTeam {
  int64_t world = 1;
  int64_t ranksOnThisNode = 1;
  bool inProcess = true;
  bool leader = true;                   // this process reports (rank 0 under MPI)
  std::string description;              // "an in-process team", "an MPI team (Open MPI v4.1.4)"
  TeamRunner runTeam;                   // one run on the whole team
  HostWatchdog* watchdog = nullptr;     // MPI: the deadline of every blocking step
  std::function<double(double)> agree;  // MPI: rank 0's value on every rank; empty in process
  std::function<void()> barrier;        // MPI: every rank here; empty in process
};

// Checks the options and the backend (Error, before anything collective:
// every rank finds the same), then measures on `team`.
Calibration calibrateOnTeam(const CalibrateOptions& options, const CalibrationTeam& team);

}  // namespace hostir::api
