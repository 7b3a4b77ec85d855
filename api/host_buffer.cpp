#include "hostir/host_buffer.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>

#include "hostir/error.h"

#include "api/dtype_conversion.h"
#include "api/output_comparison.h"
#include "api/program_impl.h"

namespace hostir::api {

std::string toString(DType dtype) { return std::string(dtypeName(internalDType(dtype))); }

int64_t elementBytes(DType dtype) { return static_cast<int64_t>(dtypeSize(internalDType(dtype))); }

int64_t HostBuffer::elements() const {
  for (int64_t extent : shape)
    if (extent < 0)
      throw plainError(ErrorKind::Usage, fmt::format("a host buffer's shape has a negative extent ({})", extent));
  for (int64_t extent : shape)
    if (extent == 0) return 0;
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (n > std::numeric_limits<int64_t>::max() / extent)
      throw plainError(
          ErrorKind::Usage,
          fmt::format("a host buffer's shape [{}] has more elements than an int64 counts", fmt::join(shape, ", ")));
    n *= extent;
  }
  return n;
}

int64_t HostBuffer::bytes() const {
  const int64_t n = elements();
  const int64_t size = elementBytes(dtype);
  if (n > std::numeric_limits<int64_t>::max() / size)
    throw plainError(ErrorKind::Usage, fmt::format("a host buffer's shape [{}] has more bytes than an int64 counts",
                                                   fmt::join(shape, ", ")));
  return n * size;
}

HostArray HostArray::zeros(DType dtype, std::vector<int64_t> shape) {
  HostArray array{dtype, std::move(shape), {}};
  const int64_t bytes = HostBuffer{dtype, array.shape, nullptr}.bytes();
  try {
    array.data.resize(static_cast<size_t>(bytes));
    return array;
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {  // more than a vector can hold
  }
  throw plainError(ErrorKind::Runtime, fmt::format("out of memory for a host array of {} bytes", bytes));
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
