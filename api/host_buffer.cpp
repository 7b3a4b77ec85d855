#include "hostir/host_buffer.h"

#include "api/dtype_conversion.h"

namespace hostir::api {

std::string toString(DType dtype) { return std::string(dtypeName(internalDType(dtype))); }

int64_t elementBytes(DType dtype) { return static_cast<int64_t>(dtypeSize(internalDType(dtype))); }

int64_t HostBuffer::elements() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

}  // namespace hostir::api
