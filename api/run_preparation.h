// The step every run takes, whoever asks for it (the command line, the API,
// runOnMpi): the passes applied, the result proved (or, unchecked, checked
// to be proved for this team), and the request's shared fields filled.
// Each caller adds only what it alone has: buffers or .npy files, traces,
// deadlines, test hooks.
#pragma once

#include <string>
#include <string_view>

#include "api/pass_pipeline.h"
#include "api/program_impl.h"
#include "executor/runner.h"

namespace hostir::api {

// How a refusal names the caller's commands and options.
struct RunWords {
  std::string_view run = "run";
  std::string_view check = "check";
  std::string_view unchecked = "checked=false";
};

struct RunPreparation {
  std::string passes;                      // the pipeline, "a,b,c"
  PipelineOptions pipeline;                // its streams are the run's worker pool
  bool checked = true;                     // false: the proof is skipped and communications are matched as they run
  BackendKind backend = BackendKind::Cpu;  // as chooseBackend chose
  CommunicatorChoice communicator = CommunicatorChoice::Auto;
  uint64_t seed = 0;
  int warmup = 0;
  int repeat = 1;
  RunWords words;
};

// `source`'s program verified for `bindings` (the caller's step: it renders
// the failure its way), the passes applied, the result proved for
// bindings.world ranks. Throws Error: Program when a pass fails, Check when
// the proof (or, unchecked, the team the program was proved for) refuses.
RunRequest prepareRunRequest(const Program::Impl& source, const Bindings& bindings, const RunPreparation& how);

}  // namespace hostir::api
