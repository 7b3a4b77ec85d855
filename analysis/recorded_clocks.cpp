#include "analysis/recorded_clocks.h"

#include <algorithm>

namespace hostir {

void RecordedClocks::reset(size_t width) {
  width_ = width;
  // A full clock every `width` positions costs 8 bytes per position; at
  // least 16 apart so that small pools need few.
  interval_ = std::max<uint64_t>(16, width);
  positions_ = 0;
  last_.assign(width, 0);
  checkpoints_.clear();
  deltaStart_.assign(1, 0);
  deltaComponent_.clear();
  deltaValue_.clear();
}

uint64_t RecordedClocks::record(std::span<const uint64_t> clock) {
  if (positions_ % interval_ == 0) {
    checkpoints_.insert(checkpoints_.end(), clock.begin(), clock.end());
  } else {
    for (size_t s = 0; s < width_; ++s)
      if (clock[s] != last_[s]) {
        deltaComponent_.push_back(static_cast<uint32_t>(s));
        deltaValue_.push_back(clock[s]);
      }
  }
  deltaStart_.push_back(deltaComponent_.size());
  std::copy(clock.begin(), clock.end(), last_.begin());
  return ++positions_;
}

void RecordedClocks::load(uint64_t position, std::vector<uint64_t>& out) const {
  uint64_t index = position - 1;
  uint64_t checkpoint = index / interval_;
  auto full = checkpoints_.begin() + static_cast<std::ptrdiff_t>(checkpoint * width_);
  out.assign(full, full + static_cast<std::ptrdiff_t>(width_));
  for (uint64_t p = checkpoint * interval_ + 1; p <= index; ++p)
    for (uint64_t e = deltaStart_[p]; e < deltaStart_[p + 1]; ++e) out[deltaComponent_[e]] = deltaValue_[e];
}

}  // namespace hostir
