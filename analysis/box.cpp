#include "analysis/box.h"

#include <fmt/format.h>

#include <algorithm>

namespace hostir {

bool Box::empty() const {
  for (size_t d = 0; d < rank; ++d)
    if (lo[d] >= hi[d]) return true;
  return false;
}

bool Box::contains(const Box& other) const {
  for (size_t d = 0; d < rank; ++d)
    if (other.lo[d] < lo[d] || other.hi[d] > hi[d]) return false;
  return true;
}

std::string Box::toString() const {
  std::vector<std::string> dims;
  for (size_t d = 0; d < rank; ++d) dims.push_back(fmt::format("{}:{}", lo[d], hi[d]));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

bool operator==(const Box& a, const Box& b) {
  if (a.rank != b.rank) return false;
  for (size_t d = 0; d < a.rank; ++d)
    if (a.lo[d] != b.lo[d] || a.hi[d] != b.hi[d]) return false;
  return true;
}

bool overlaps(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.rank; ++d)
    if (std::max(a.lo[d], b.lo[d]) >= std::min(a.hi[d], b.hi[d])) return false;
  return true;
}

Box intersection(const Box& a, const Box& b) {
  Box r = a;
  for (size_t d = 0; d < a.rank; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::min(a.hi[d], b.hi[d]);
  }
  return r;
}

void subtract(const Box& a, const Box& b, std::vector<Box>& out) {
  if (a.empty()) return;
  if (!overlaps(a, b)) {
    out.push_back(a);
    return;
  }
  // Peel off the slabs of `a` below and above `b` one dimension at a time;
  // what remains after the last dimension lies inside `b`.
  Box rest = a;
  for (size_t d = 0; d < a.rank; ++d) {
    if (rest.lo[d] < b.lo[d]) {
      Box below = rest;
      below.hi[d] = b.lo[d];
      out.push_back(below);
      rest.lo[d] = b.lo[d];
    }
    if (rest.hi[d] > b.hi[d]) {
      Box above = rest;
      above.lo[d] = b.hi[d];
      out.push_back(above);
      rest.hi[d] = b.hi[d];
    }
  }
}

std::optional<Box> unionBox(const Box& a, const Box& b) {
  if (a.rank != b.rank) return std::nullopt;
  if (a.contains(b)) return a;
  if (b.contains(a)) return b;
  size_t differing = a.rank;
  for (size_t d = 0; d < a.rank; ++d) {
    if (a.lo[d] == b.lo[d] && a.hi[d] == b.hi[d]) continue;
    if (differing != a.rank) return std::nullopt;  // a second dimension differs
    differing = d;
  }
  if (differing == a.rank) return a;  // equal
  size_t d = differing;
  if (std::max(a.lo[d], b.lo[d]) > std::min(a.hi[d], b.hi[d])) return std::nullopt;  // a gap between them
  Box u = a;
  u.lo[d] = std::min(a.lo[d], b.lo[d]);
  u.hi[d] = std::max(a.hi[d], b.hi[d]);
  return u;
}

}  // namespace hostir
