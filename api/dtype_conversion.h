// The public DType (include/hostir/host_buffer.h) and the IR's (ir/dtype.h)
// name the same element types; these convert between them, so that
// names and sizes come from the IR alone.
#pragma once

#include <fmt/format.h>

#include "api/program_impl.h"
#include "hostir/host_buffer.h"
#include "ir/dtype.h"

namespace hostir::api {

// A value outside the enum (a cast integer) is Error kind Usage.
inline hostir::DType internalDType(DType dtype) {
  switch (dtype) {
    case DType::F32: return hostir::DType::F32;
    case DType::F16: return hostir::DType::F16;
    case DType::BF16: return hostir::DType::BF16;
    case DType::F64: return hostir::DType::F64;
    case DType::I32: return hostir::DType::I32;
  }
  throw plainError(ErrorKind::Usage,
                   fmt::format("{} is not a DType (f32, f16, bf16, f64 or i32)", static_cast<int>(dtype)));
}

inline DType publicDType(hostir::DType dtype) {
  switch (dtype) {
    case hostir::DType::F32: return DType::F32;
    case hostir::DType::F16: return DType::F16;
    case hostir::DType::BF16: return DType::BF16;
    case hostir::DType::F64: return DType::F64;
    case hostir::DType::I32: return DType::I32;
  }
  return DType::F32;
}

}  // namespace hostir::api
