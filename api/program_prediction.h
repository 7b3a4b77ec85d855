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
#include <string>
#include <string_view>
#include <vector>

#include "api/program_impl.h"
#include "model/cost_model.h"
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
  // How much of the shorter part running both together hides: compute +
  // comm - total, within [0, min(compute, comm)]. The variants are other
  // schedules (stripping removes the waits that ordered the streams), so
  // a variant may take longer than the whole program: the whole then hides
  // at most the shorter part. And contention may make the whole take
  // longer than both variants one after the other: it hides nothing.
  double hiddenSeconds() const {
    const double shorter = std::min(computeSeconds, communicationSeconds);
    return std::clamp(computeSeconds + communicationSeconds - seconds(), 0.0, std::max(shorter, 0.0));
  }
  // E = hidden / min(compute, comm), in [0, 1]: 1 hides the shorter part
  // entirely, 0 hides nothing; 0 for a program without one of the parts.
  double overlapEfficiency() const {
    const double shorter = std::min(computeSeconds, communicationSeconds);
    return shorter > 0 ? hiddenSeconds() / shorter : 0;
  }
  // A stripped variant that takes longer than the whole program (E is then 1).
  bool variantSlowerThanWhole() const { return std::max(computeSeconds, communicationSeconds) > seconds(); }
  // The whole program takes longer than its variants one after the other (E is then 0).
  bool slowerThanSerial() const {
    return computeSeconds > 0 && communicationSeconds > 0 && seconds() > computeSeconds + communicationSeconds;
  }
  // What pricing the whole program assumed where the profile had no figure, as sentences.
  std::vector<std::string> assumptions(std::string_view profileName) const {
    std::vector<std::string> sentences;
    for (const PricingAssumption& assumption : assumptionsOf(whole))
      sentences.push_back(describeAssumption(assumption, profileName));
    return sentences;
  }
};

// Predicts `program` (verified, its passes applied) on `machine`, for the
// team and worker pool given. A racy program has no defined timeline, as it
// has no defined result: it is refused as `run` refuses it, with the check's
// report (Error kind Check). Errors are rendered against `source`.
ProgramPrediction predictProgram(const ProgramSource& source, const hostir::Program& program, const Bindings& bindings,
                                 int64_t streams, const MachineProfile& machine);

}  // namespace hostir::api
