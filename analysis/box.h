// Boxes: half-open intervals per dimension of a buffer's row-major index
// space. The race and initialization analyses describe every access as one
// box, because every view the language can form (shard_by_stream of any
// axis, strided ones included) is one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hostir {

inline constexpr size_t kMaxBoxRank = 8;

struct Box {
  std::array<int64_t, kMaxBoxRank> lo{}, hi{};
  size_t rank = 0;
  bool empty() const;
  bool contains(const Box& other) const;
  std::string toString() const;  // "[0:64, 16:32]"
  friend bool operator==(const Box& a, const Box& b);
};
bool overlaps(const Box& a, const Box& b);
Box intersection(const Box& a, const Box& b);

// Appends to `out` the part of `a` outside `b`, as at most 2 * rank disjoint
// boxes (none when `b` covers `a`, `a` itself when they do not overlap).
void subtract(const Box& a, const Box& b, std::vector<Box>& out);

// a ∪ b when that union is one box: equal in every dimension but one, and
// touching or overlapping in that one (or one contains the other).
std::optional<Box> unionBox(const Box& a, const Box& b);

}  // namespace hostir
