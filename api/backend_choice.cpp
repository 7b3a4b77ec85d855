#include "api/backend_choice.h"

#include <fmt/format.h>

#include "api/program_impl.h"

namespace hostir::api {

BackendRequest backendRequest(const std::string& backend) {
  if (auto request = parseBackendRequest(backend)) return *request;
  throw plainError(ErrorKind::Usage, fmt::format("backend must be \"auto\", \"cpu\" or \"cuda\", got \"{}\"", backend));
}

CommunicatorChoice communicatorRequest(const std::string& communicator) {
  if (auto choice = parseCommunicatorChoice(communicator)) return *choice;
  throw plainError(ErrorKind::Usage,
                   fmt::format("communicator must be \"auto\", \"nccl\" or \"copy-engine\", got \"{}\"", communicator));
}

BackendChoice chooseBackendFor(const RunOptions& options, const TeamPlace& team) {
  return chooseBackend(backendRequest(options.backend), communicatorRequest(options.communicator), team);
}

BackendChoice chooseRunBackend(const std::string& backend, const std::string& communicator, const TeamPlace& team) {
  BackendChoice choice = chooseBackend(backendRequest(backend), communicatorRequest(communicator), team);
  if (choice.refusal)
    throw plainError(choice.kind == BackendKind::Cuda ? ErrorKind::Runtime : ErrorKind::Usage,
                     "backend " + *choice.refusal);
  return choice;
}

}  // namespace hostir::api
