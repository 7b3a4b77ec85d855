// A rank's recorded trace (runtime/trace.h) read back as slices, for
// `hostir calibrate`, which times single operations on the device from it:
// a run's wall time cannot tell two concurrent loops apart.
#pragma once

#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "runtime/trace.h"

namespace hostir {

struct RecordedSlice {
  int thread = 0;        // the Chrome trace thread: 0 is the host, then the main stream, then the workers
  std::string name;      // the operation ("linear", "allreduce") or the host step
  std::string category;  // compute, memory, communication, sync or host
  double startMicros = 0;
  double durationMicros = 0;
  double endMicros() const { return startMicros + durationMicros; }
};

// The complete ("X") slices of a stopped recording, in recorded order; an
// error when it cannot be read or parsed.
Result<std::vector<RecordedSlice>, std::string> recordedSlices(const TraceRecorder& recorder);

}  // namespace hostir
