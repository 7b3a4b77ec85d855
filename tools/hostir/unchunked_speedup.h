// The speedup against the unchunked program that `simulate` and `tune`
// print beside E (docs/cost-model.md, "Overlap efficiency"): E says how
// much of the shorter part a schedule hides, not whether chunking pays;
// the speedup does. The unchunked program is the same program with its
// chunk count at 1; the chunk count is the parameter named S, as every
// chunked program in examples/ and the docs names it.
#pragma once

#include <optional>
#include <string_view>

#include "hostir/execution.h"
#include "hostir/program.h"

namespace hostir::tool {

inline constexpr std::string_view kChunkCountParam = "S";

// Whether the program has a chunk count (a parameter named S).
bool hasChunkCount(const api::Program& program);

// The predicted time of `options` with S bound to 1 (no trace, remarks or
// warnings), or nullopt when that binding fails (S = 1 does not verify).
std::optional<double> unchunkedMs(const api::Program& program, const api::Machine& machine,
                                  api::SimulateOptions options);

}  // namespace hostir::tool
