#include "tools/hostir/did_you_mean.h"

#include "ir/closest_name.h"

namespace hostir::tool {

std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates) {
  return hostir::closestName(given, candidates);
}

}  // namespace hostir::tool
