#include "api/program_file.h"

#include "ir/bounded_file.h"

namespace hostir {

static_assert(kMaxProgramFileBytes % (uint64_t{1} << 20) == 0, "the messages state the limit in whole MiB");

Result<std::string> readProgramFile(const std::string& path) {
  return readBoundedFile(path, kMaxProgramFileBytes, "program");
}

}  // namespace hostir
