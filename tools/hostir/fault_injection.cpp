#include "tools/hostir/fault_injection.h"

#include <fmt/format.h>

#include <charconv>
#include <csignal>
#include <vector>

namespace hostir::tool {
namespace {

std::vector<std::string> splitColons(const std::string& text) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(':', begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

bool parseInt(const std::string& text, int& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty() && value >= 0;
}

}  // namespace

ToolResult<FaultInjection> FaultInjection::parse(const std::string& spec) {
  const ToolError bad{kUsageError,
                      fmt::format("error: --inject-fault expects ACTION:RANK:POINT with ACTION stop or kill and POINT "
                                  "setup, run:K, running:K or exit, got '{}'\n",
                                  spec)};
  std::vector<std::string> parts = splitColons(spec);
  if (parts.size() < 3) return bad;
  FaultInjection fault;
  if (parts[0] == "stop")
    fault.action = Action::Stop;
  else if (parts[0] == "kill")
    fault.action = Action::Kill;
  else
    return bad;
  if (!parseInt(parts[1], fault.rank)) return bad;
  if (parts[2] == "setup" && parts.size() == 3)
    fault.point = Point::Setup;
  else if (parts[2] == "exit" && parts.size() == 3)
    fault.point = Point::Exit;
  else if (parts[2] == "run" && parts.size() == 4 && parseInt(parts[3], fault.run))
    fault.point = Point::Run;
  else if (parts[2] == "running" && parts.size() == 4 && parseInt(parts[3], fault.run))
    fault.point = Point::Running;
  else
    return bad;
  return fault;
}

void FaultInjection::at(int thisRank, Point here, int thisRun) const {
  if (thisRank != rank || here != point || ((here == Point::Run || here == Point::Running) && thisRun != run)) return;
  std::raise(action == Action::Stop ? SIGSTOP : SIGKILL);
}

}  // namespace hostir::tool
