#include "api/backend_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "api/program_impl.h"
#include "executor/backend_registry.h"

namespace hostir::api {

void checkBackendRequest(const std::string& backend) {
  if (isBackendRequest(backend)) return;
  std::vector<std::string> names = backendNames();
  std::sort(names.begin() + 1, names.end());  // "auto" first, then by name
  const std::string last = names.back();
  names.pop_back();
  throw plainError(ErrorKind::Usage, fmt::format("backend must be \"{}\" or \"{}\", got \"{}\"",
                                                 fmt::join(names, "\", \""), last, backend));
}

CommunicatorChoice communicatorRequest(const std::string& communicator) {
  if (auto choice = parseCommunicatorChoice(communicator)) return *choice;
  throw plainError(ErrorKind::Usage,
                   fmt::format("communicator must be \"auto\", \"nccl\" or \"copy-engine\", got \"{}\"", communicator));
}

BackendChoice chooseBackendFor(const RunOptions& options, const TeamPlace& team) {
  checkBackendRequest(options.backend);
  return chooseBackend(options.backend, communicatorRequest(options.communicator), team);
}

BackendChoice chooseRunBackend(const std::string& backend, const std::string& communicator, const TeamPlace& team) {
  checkBackendRequest(backend);
  BackendChoice choice = chooseBackend(backend, communicatorRequest(communicator), team);
  if (choice.refusal)
    throw plainError(backendEntry(choice.kind).device ? ErrorKind::Runtime : ErrorKind::Usage,
                     "backend " + *choice.refusal);
  return choice;
}

}  // namespace hostir::api
