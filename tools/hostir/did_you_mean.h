// "did you mean ...": the valid name closest to a mistyped one, for the
// command line's messages about unknown commands and options. The one
// implementation is the library's (ir/closest_name.h), which the parser's
// messages about unknown operations use too.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hostir::tool {

// ir/closest_name.h's closestName: the candidate fewest single-character
// edits away from `given`, when close enough to be a typo; nullopt otherwise.
std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace hostir::tool
