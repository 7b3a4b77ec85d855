// The backend an API call runs on: the names the API takes, checked, and
// executor's chooseBackend (the one place the choice is made), its refusal
// as an Error.
#pragma once

#include <string>

#include "executor/backend_factory.h"
#include "hostir/execution.h"

namespace hostir::api {

// "auto" or a registered backend's name ("cpu", "cuda"); anything else is
// Error kind Usage.
void checkBackendRequest(const std::string& backend);
// "auto", "nccl" or "copy-engine"; anything else is Error kind Usage.
CommunicatorChoice communicatorRequest(const std::string& communicator);

// The backend `team` runs `options` on (its backend and communicator names
// checked: Error kind Usage), with chooseBackend's refusal, if any, for the
// caller to phrase with its own option names.
BackendChoice chooseBackendFor(const RunOptions& options, const TeamPlace& team);

// The backend `team` runs on; a refusal is Error kind Runtime for a device
// backend (the machine cannot) and Usage for the CPU (the request cannot be
// met anywhere).
BackendChoice chooseRunBackend(const std::string& backend, const std::string& communicator, const TeamPlace& team);

}  // namespace hostir::api
