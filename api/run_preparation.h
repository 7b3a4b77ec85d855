// The step every run takes, whoever asks for it (the command line, the API,
// runOnMpi): the run options checked, the passes applied, the result proved
// (or, unchecked, checked to be proved for this team), and the request
// filled from the options. api::RunOptions is the one options type from
// the command line's parsing down to the backend (executor's
// BackendOptions is made here, from it). Each caller adds only what it
// alone has: buffers or .npy files, traces, deadlines, test hooks.
#pragma once

#include <memory>
#include <string_view>

#include "api/command_line.h"
#include "api/pass_pipeline.h"
#include "api/program_impl.h"
#include "executor/runner.h"
#include "hostir/execution.h"
#include "hostir/limits.h"

namespace hostir::api {

// Throws Error (kind Usage) naming the first run option out of its bounds.
void checkRunOptions(const RunOptions& options);

// What each rank's backend is made from (executor's createBackend), for a
// run of `options` on `backend` (chooseBackend's answer) by `team`: one
// place for every run, and for what calibrate measures.
BackendOptions backendOptions(const RunOptions& options, const BackendChoice& backend, const TeamPlace& team);

// What the caller knows of a run besides its options.
struct RunSetting {
  BackendChoice backend;                          // chooseBackend's answer, without a refusal
  TeamPlace team;                                 // the ranks and where they are
  std::shared_ptr<const MachineProfile> machine;  // options.machine, loaded (null: none)
  RunWords words;
};

// `source`'s program verified for `bindings` (the caller's step: it renders
// the failure its way), the passes applied, the result proved for
// bindings.world ranks, the request's every option set from `options`.
// Throws Error: Program when a pass fails, Check when the proof (or,
// unchecked, the team the program was proved for) refuses.
RunRequest prepareRunRequest(const ProgramSource& source, const Bindings& bindings, const RunOptions& options,
                             const RunSetting& setting);

}  // namespace hostir::api
