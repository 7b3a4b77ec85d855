// A PassContext for tests, with executor's checkRaces as the race check,
// as the `hostir` tool builds it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/verifier.h"
#include "passes/pass.h"
#include "passes/race_oracle.h"

namespace hostir::testing {

// The context `hostir opt --set ... --ranks world --streams streams` gives
// the passes; remarks go to `remarks` when given. `program` must bind.
inline PassContext raceCheckedContext(const Program& program, const Bindings& bindings = {}, int64_t streams = 4,
                                      std::vector<Remark>* remarks = nullptr) {
  PassContext context;
  context.bindings = bindings;
  auto params = bindParams(program, bindings);
  EXPECT_TRUE(params.ok()) << params.error().message;
  if (params) context.raceCheck = raceOracle(*params, bindings.world, streams);
  context.streams = streams;
  if (remarks) context.remarks = [remarks](const Remark& r) { remarks->push_back(r); };
  return context;
}

}  // namespace hostir::testing
