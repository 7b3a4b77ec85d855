// "did you mean ...": the valid name closest to a mistyped one, for the
// parser's messages about unknown operations and operands and the command
// line's about unknown commands and options (api::closestName, include/hostir/catalog.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hostir {

// The candidate fewest single-character edits (insertions, deletions,
// substitutions, swaps of neighbours) away from `given`, when that is close
// enough to be a typo: at most a third of the longer name's length, and at
// least one edit. Ties go to the earlier candidate; nullopt when none is close.
std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace hostir
