#include "tools/hostir/unchunked_speedup.h"

#include <algorithm>
#include <string>

#include "hostir/error.h"

namespace hostir::tool {

bool hasChunkCount(const api::Program& program) {
  const std::vector<std::string> names = program.paramNames();
  return std::find(names.begin(), names.end(), kChunkCountParam) != names.end();
}

std::optional<double> unchunkedMs(const api::Program& program, const api::Machine& machine,
                                  api::SimulateOptions options) {
  options.params[std::string(kChunkCountParam)] = 1;
  options.onRemark = nullptr;
  options.onWarning = nullptr;
  options.tracePath.clear();
  try {
    return api::simulate(program, machine, options).medianMs;
  } catch (const api::Error&) {
    return std::nullopt;
  }
}

}  // namespace hostir::tool
