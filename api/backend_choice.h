// The backend an API call runs on: the names the API takes, checked, and
// executor's chooseBackend (the one place the choice is made), its refusal
// as an Error.
#pragma once

#include <string>

#include "executor/backend_factory.h"

namespace hostir::api {

// "auto", "cpu" or "cuda"; anything else is Error kind Usage.
BackendRequest backendRequest(const std::string& backend);
// "auto", "nccl" or "copy-engine"; anything else is Error kind Usage.
CommunicatorChoice communicatorRequest(const std::string& communicator);

// The backend `team` runs on; a refusal is Error kind Runtime for CUDA (the
// machine cannot) and Usage for the CPU (the request cannot be met anywhere).
BackendChoice chooseRunBackend(const std::string& backend, const std::string& communicator, const TeamPlace& team);

}  // namespace hostir::api
