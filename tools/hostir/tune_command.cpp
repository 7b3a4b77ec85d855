// `hostir tune`: see commands.h.
#include <iostream>

#include "tools/hostir/commands.h"

namespace hostir::tool {

int runTune(const TuneOptions&) {
  std::cerr << "error: tune is not built yet\n";
  return kProgramError;
}

}  // namespace hostir::tool
