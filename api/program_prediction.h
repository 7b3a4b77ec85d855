// What `simulate` prints and `tune` compares for a program after its
// passes: the whole program's predicted time, and the times of its
// compute-only and communication-only variants (the program after
// strip-communication and strip-compute, as the overlap benchmark measures
// them), from which the exposed communication and the overlap efficiency
// follow. One definition, so that the API and the commands agree on every
// figure.
#pragma once

#include <algorithm>
#include <cstdint>

#include "api/program_impl.h"
#include "model/machine_profile.h"
#include "model/simulation.h"

namespace hostir::api {

struct ProgramPrediction {
  Simulation whole;
  double computeSeconds = 0;
  double communicationSeconds = 0;

  double seconds() const { return whole.seconds(); }
  // The time the program spends beyond its compute: communication overlap did not hide.
  double exposedCommunicationSeconds() const { return std::max(0.0, seconds() - computeSeconds); }
  // E = (compute + comm - total) / min(compute, comm): 1 hides the shorter part entirely, 0 hides nothing.
  double overlapEfficiency() const {
    const double shorter = std::min(computeSeconds, communicationSeconds);
    return shorter > 0 ? (computeSeconds + communicationSeconds - seconds()) / shorter : 0;
  }
};

// Predicts `program` (verified, its passes applied) on `machine`, for the
// team and worker pool given. A racy program has no defined timeline, as it
// has no defined result: it is refused as `run` refuses it, with the check's
// report (Error kind Check). Errors are rendered against `source`.
ProgramPrediction predictProgram(const ProgramSource& source, const hostir::Program& program, const Bindings& bindings,
                                 int64_t streams, const MachineProfile& machine);

}  // namespace hostir::api
