// `hostir run --check`: every output of the run against the serial
// reference's, within a tolerance per dtype.
#pragma once

#include <map>
#include <string>

#include "executor/host_tensor.h"

namespace hostir {

// Checks every output against the reference outputs within the dtype's
// tolerance; the message names the worst element.
struct Comparison {
  bool ok = true;
  std::string report;
};
Comparison compareOutputs(const std::map<std::string, HostTensor>& actual,
                          const std::map<std::string, HostTensor>& reference);

}  // namespace hostir
