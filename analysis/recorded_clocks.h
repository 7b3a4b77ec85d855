// The vector clocks one stream had at its recorded positions (events, the
// completion of a communication, the target of a synchronize), compactly:
// a full clock every `interval` positions and, in between, only the
// components that changed since the position before. A position costs a few
// bytes however many streams there are (a full clock per event would cost
// 8 KiB each with 1024 streams), and reading one back costs about as much as
// the join that uses it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace hostir {

class RecordedClocks {
 public:
  explicit RecordedClocks(size_t width = 0) { reset(width); }

  // Forgets every position; clocks have `width` components from now on.
  void reset(size_t width);
  // Records `clock` as the next position and returns it (1-based).
  uint64_t record(std::span<const uint64_t> clock);
  uint64_t positions() const { return positions_; }
  // The clock at the last position (empty before the first).
  std::span<const uint64_t> last() const { return last_; }
  // The clock at `position` (1-based, at most positions()), into `out`.
  void load(uint64_t position, std::vector<uint64_t>& out) const;
  // 64-bit words stored, for tests of the bound.
  size_t storedWords() const {
    return checkpoints_.size() + deltaStart_.size() + deltaValue_.size() + (deltaComponent_.size() + 1) / 2;
  }

 private:
  size_t width_ = 0;
  uint64_t interval_ = 16;  // positions per full clock
  uint64_t positions_ = 0;
  std::vector<uint64_t> last_;
  std::vector<uint64_t> checkpoints_;  // the full clock at positions 1, 1 + interval, ...
  // Position p's changes are entries deltaStart_[p - 1] .. deltaStart_[p] - 1.
  std::vector<uint64_t> deltaStart_;
  std::vector<uint32_t> deltaComponent_;
  std::vector<uint64_t> deltaValue_;
};

}  // namespace hostir
