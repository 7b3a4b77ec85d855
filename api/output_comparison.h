// `hostir run --check`: every output of the run against the serial
// reference's, within a tolerance per dtype.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

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

// Every rank's copy of replicated output `name` (rank order) against rank
// 0's, within the dtype's tolerance: what names the output, the ranks that
// differ and the first differing element; nullopt when all agree.
std::optional<std::string> compareCopies(const std::string& name, const std::vector<HostTensor>& copies);

}  // namespace hostir
