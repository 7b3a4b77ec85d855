// A testing aid for the multi-rank fault tests (`--inject-fault`, hidden
// from --help): one rank stops (SIGSTOP, as a hung node does) or dies
// (SIGKILL) at a chosen point of `hostir run`, so the tests can show that
// every other rank ends with a reason instead of waiting for ever, without
// relying on when an outside `kill` happens to land.
#pragma once

#include <optional>
#include <string>

#include "tools/hostir/exit_codes.h"

namespace hostir::tool {

struct FaultInjection {
  enum class Action { Stop, Kill };
  enum class Point {
    Setup,    // before the ranks agree to start
    Run,      // before the barrier that starts run `run` (0-based, warm-ups included)
    Running,  // just after that barrier: the other ranks go on into the run's communications
    Exit,     // before the barrier that ends the job
  };
  Action action = Action::Stop;
  int rank = 0;
  Point point = Point::Setup;
  int run = 0;

  // "stop:1:run:2", "stop:1:running:0", "kill:0:setup", "stop:1:exit".
  static ToolResult<FaultInjection> parse(const std::string& spec);  // a usage error when malformed

  // Stops or kills this process when `rank`, `point` (and `run`) match.
  void at(int thisRank, Point here, int thisRun = 0) const;
};

}  // namespace hostir::tool
