// A testing aid every backend may honour: random sleeps before tasks and
// communications, to shake out orderings that only luck provides.
#pragma once

#include <cstdint>

namespace hostir {

struct DelayInjection {
  uint32_t maxMicros = 0;  // 0: off
  uint64_t seed = 0;
};

}  // namespace hostir
