// Inside the library: what an Executable holds, for the in-process and the
// MPI compilation alike.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/prepared_team.h"
#include "api/run_request.h"
#include "hostir/executable.h"

namespace hostir::api {

struct Executable::Impl {
  Program program;
  RunOptions options;
  PreparedRun prepared;  // its request is what the team's ranks read: its address stays put
  std::vector<TensorDecl> decls;
  std::unique_ptr<PreparedTeam> team;
  std::mutex callMutex;       // one call at a time
  std::string closedBecause;  // set: closed, and why

  Impl(const Program& program, const RunOptions& options, PreparedRun prepared);
};

}  // namespace hostir::api
