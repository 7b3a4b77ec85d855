#include "comm/reduce.h"

#include <cmath>
#include <stdexcept>

#include "ir/half.h"

namespace hostir {
namespace {

// How a storage type is loaded into the type arithmetic happens in, and stored back.
template <typename Storage>
struct Arithmetic {
  using Compute = Storage;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};
template <>
struct Arithmetic<Half> {
  using Compute = float;
  static float load(Half v) { return toFloat(v); }
  static Half store(float v) { return toHalf(v); }
};
template <>
struct Arithmetic<BFloat16> {
  using Compute = float;
  static float load(BFloat16 v) { return toFloat(v); }
  static BFloat16 store(float v) { return toBFloat16(v); }
};

template <typename Storage, typename Combine>
void combineEach(void* acc, const void* in, size_t count, Combine combine) {
  using A = Arithmetic<Storage>;
  auto* a = static_cast<Storage*>(acc);
  const auto* b = static_cast<const Storage*>(in);
  for (size_t i = 0; i < count; ++i) a[i] = A::store(combine(A::load(a[i]), A::load(b[i])));
}

template <typename Storage>
void reduceTyped(void* acc, const void* in, size_t count, ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg: return combineEach<Storage>(acc, in, count, [](auto x, auto y) { return x + y; });
    case ReduceOp::Prod: return combineEach<Storage>(acc, in, count, [](auto x, auto y) { return x * y; });
    case ReduceOp::Min:
      return combineEach<Storage>(acc, in, count, [](auto x, auto y) { return (x <= y || std::isnan(x)) ? x : y; });
    case ReduceOp::Max:
      return combineEach<Storage>(acc, in, count, [](auto x, auto y) { return (x >= y || std::isnan(x)) ? x : y; });
  }
  throw std::invalid_argument("reduceInto: unknown reduce op");
}

template <typename Storage>
void scaleTyped(void* buf, size_t count, double factor) {
  using A = Arithmetic<Storage>;
  using Compute = typename A::Compute;
  auto* p = static_cast<Storage*>(buf);
  for (size_t i = 0; i < count; ++i) p[i] = A::store(static_cast<Compute>(static_cast<double>(A::load(p[i])) * factor));
}

}  // namespace

void reduceInto(void* acc, const void* in, size_t count, DType dtype, ReduceOp op) {
  switch (dtype) {
    case DType::F32: return reduceTyped<float>(acc, in, count, op);
    case DType::F64: return reduceTyped<double>(acc, in, count, op);
    case DType::F16: return reduceTyped<Half>(acc, in, count, op);
    case DType::BF16: return reduceTyped<BFloat16>(acc, in, count, op);
    case DType::I32: break;  // indices are moved, never reduced (the verifier refuses it)
  }
  throw std::invalid_argument("reduceInto: unknown dtype");
}

void scaleInPlace(void* buf, size_t count, DType dtype, double factor) {
  switch (dtype) {
    case DType::F32: return scaleTyped<float>(buf, count, factor);
    case DType::F64: return scaleTyped<double>(buf, count, factor);
    case DType::F16: return scaleTyped<Half>(buf, count, factor);
    case DType::BF16: return scaleTyped<BFloat16>(buf, count, factor);
    case DType::I32: break;
  }
  throw std::invalid_argument("scaleInPlace: unknown dtype");
}

}  // namespace hostir
