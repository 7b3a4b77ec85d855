#include "ir/closest_name.h"

#include <algorithm>

namespace hostir {
namespace {

// Optimal string alignment distance: Levenshtein plus swapped neighbours
// ("rnu" for "run").
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates) {
  // Names longer than this are not typos of a command, an option, an
  // operation or an operand (and a long one would make a large table).
  constexpr size_t kLongestTypo = 64;
  if (given.empty() || given.size() > kLongestTypo) return std::nullopt;
  std::optional<std::string> best;
  size_t bestDistance = 0;
  for (const std::string& candidate : candidates) {
    if (candidate.empty()) continue;
    const size_t distance = editDistance(given, candidate);
    const size_t allowed = std::max<size_t>(1, std::max(given.size(), candidate.size()) / 3);
    if (distance > allowed) continue;
    if (!best || distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

}  // namespace hostir
