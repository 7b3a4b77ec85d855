#include "hostir/host_buffer.h"

#include <cstring>

#include "api/dtype_conversion.h"
#include "api/output_comparison.h"

namespace hostir::api {

std::string toString(DType dtype) { return std::string(dtypeName(internalDType(dtype))); }

int64_t elementBytes(DType dtype) { return static_cast<int64_t>(dtypeSize(internalDType(dtype))); }

int64_t HostBuffer::elements() const {
  int64_t n = 1;
  for (int64_t extent : shape) n *= extent;
  return n;
}

HostArray HostArray::zeros(DType dtype, std::vector<int64_t> shape) {
  HostArray array{dtype, std::move(shape), {}};
  array.data.resize(static_cast<size_t>(HostBuffer{dtype, array.shape, nullptr}.bytes()));
  return array;
}

HostBuffer HostArray::buffer() { return HostBuffer{dtype, shape, data.data()}; }

namespace {

std::map<std::string, HostTensor> copied(const std::map<std::string, HostBuffer>& buffers) {
  std::map<std::string, HostTensor> tensors;
  for (const auto& [name, buffer] : buffers) {
    HostTensor& t = tensors[name];
    t.dtype = internalDType(buffer.dtype);
    t.shape = buffer.shape;
    t.data.resize(static_cast<size_t>(buffer.bytes()));
    if (!t.data.empty()) std::memcpy(t.data.data(), buffer.data, t.data.size());
  }
  return tensors;
}

}  // namespace

OutputComparison compareOutputs(const std::map<std::string, HostBuffer>& actual,
                                const std::map<std::string, HostBuffer>& reference) {
  Comparison c = hostir::compareOutputs(copied(actual), copied(reference));
  return OutputComparison{c.ok, c.report};
}

}  // namespace hostir::api
