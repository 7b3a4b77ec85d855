// The CPU backend's elementwise computations on strided views: add, sub and
// mul (b broadcast to a's shape) and the other binary operations, relu,
// silu, gelu and the other unary ones, scale, cast and where. f32
// runs as f32 through the vector loops of executor/cpu/vector_loops.h, f16
// and bf16 are computed in f32, f64 in f64; GemmKind::ReferenceF64 (the
// serial reference) computes every one of them in f64 with <cmath>.
#include "executor/cpu/cpu_kernels.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "executor/cpu/fast_math.h"
#include "executor/cpu/strided_rows.h"
#include "executor/cpu/vector_loops.h"
#include "ir/half.h"

namespace hostir::cpu {
namespace {

// Whether `dtype` under `mode` computes in f64 (else in f32).
bool inF64(GemmKind mode, DType dtype) { return mode == GemmKind::ReferenceF64 || dtype == DType::F64; }

// `b` seen with a's shape by NumPy's rule: axes aligned from the last, a
// stride of 0 along each axis b lacks or holds once.
TensorView broadcastTo(const TensorView& b, const Dims& shape) {
  TensorView v = b;
  v.shape = shape;
  v.strides.size = shape.size;
  const size_t lead = shape.size - b.rank();
  for (size_t d = 0; d < shape.size; ++d) v.strides[d] = d < lead || b.shape[d - lead] == 1 ? 0 : b.strides[d - lead];
  return v;
}

// out = f(a, b) over rows of the common shape, in `Compute` (float or
// double). Contiguous f32 rows, b contiguous or one broadcast element, go
// through the vector loop `op`; the rest element by element.
template <typename Compute, typename F>
void binaryRows(const TensorView& a, const TensorView& b, const TensorView& out, std::optional<vec::Binary> op, F f) {
  const DType dtype = a.dtype;
  const auto size = static_cast<int64_t>(dtypeSize(dtype));
  forEachRow<3>({&a, &b, &out}, [&](auto ptrs, int64_t n, auto inner) {
    if constexpr (std::is_same_v<Compute, float>) {
      if (op && dtype == DType::F32 && inner[0] == 1 && inner[2] == 1 && (inner[1] == 1 || inner[1] == 0)) {
        vec::binary(*op, reinterpret_cast<const float*>(ptrs[0]), reinterpret_cast<const float*>(ptrs[1]), inner[1],
                    reinterpret_cast<float*>(ptrs[2]), n);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const Compute v =
          f(load<Compute>(dtype, ptrs[0] + i * inner[0] * size), load<Compute>(dtype, ptrs[1] + i * inner[1] * size));
      store<Compute>(dtype, ptrs[2] + i * inner[2] * size, v);
    }
  });
}

// out = f(x) over rows, in `Compute`; contiguous f32 rows go through the
// vector loop `op` (with `by` for scale) when there is one.
template <typename Compute, typename F>
void unaryRows(const TensorView& x, const TensorView& out, std::optional<vec::Unary> op, float by, F f) {
  const DType dtype = x.dtype;
  const auto size = static_cast<int64_t>(dtypeSize(dtype));
  forEachRow<2>({&x, &out}, [&](auto ptrs, int64_t n, auto inner) {
    if constexpr (std::is_same_v<Compute, float>) {
      if (op && dtype == DType::F32 && inner[0] == 1 && inner[1] == 1) {
        vec::unary(*op, reinterpret_cast<const float*>(ptrs[0]), reinterpret_cast<float*>(ptrs[1]), n, by);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      store<Compute>(dtype, ptrs[1] + i * inner[1] * size, f(load<Compute>(dtype, ptrs[0] + i * inner[0] * size)));
  });
}

// A binary computation whose operand positions `O` name a, b and out; `f`
// is generic over float and double, `op` its vector loop.
template <typename O, typename F>
void binary(GemmKind mode, const KernelCall& call, std::optional<vec::Binary> op, F f) {
  const TensorView& a = call.operand(O::a);
  const TensorView b = broadcastTo(call.operand(O::b), a.shape);
  if (inF64(mode, a.dtype))
    binaryRows<double>(a, b, call.operand(O::out), op, f);
  else
    binaryRows<float>(a, b, call.operand(O::out), op, f);
}

// A unary computation: `op` its vector loop (f32 views), `f32` for other
// f32 compute, `f64` for f64.
template <typename O, typename F32, typename F64>
void unary(GemmKind mode, const KernelCall& call, std::optional<vec::Unary> op, float by, F32 f32, F64 f64) {
  const TensorView& x = call.operand(O::x);
  if (inF64(mode, x.dtype))
    unaryRows<double>(x, call.operand(O::out), op, by, f64);
  else
    unaryRows<float>(x, call.operand(O::out), op, by, f32);
}

// relu(NaN) is NaN: the comparison is false for it.
template <typename T>
T reluOf(T x) {
  return x < T(0) ? T(0) : x;
}

// The nearest f32 to `v` when it is exact, else the f32 next to it toward
// zero with its last bit set (round to odd): rounding that to f16 or bf16
// (fewer bits) is then v rounded once to nearest even.
float roundToOdd(double v) {
  const auto f = static_cast<float>(v);
  if (!std::isfinite(v) || static_cast<double>(f) == v) return f;
  uint32_t bits = floatBits(f);
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) --bits;  // toward zero (the same sign)
  return bitsFloat(bits | 1u);
}

// A contiguous row between f32 and f16 or bf16 through the vector loops;
// false for the other pairs.
bool castRow(DType from, const std::byte* x, DType to, std::byte* out, int64_t n) {
  const auto* f32In = reinterpret_cast<const float*>(x);
  const auto* bitsIn = reinterpret_cast<const uint16_t*>(x);
  if (from == DType::F32 && to == DType::F16)
    vec::toHalf(f32In, reinterpret_cast<uint16_t*>(out), n);
  else if (from == DType::F32 && to == DType::BF16)
    vec::toBFloat16(f32In, reinterpret_cast<uint16_t*>(out), n);
  else if (from == DType::F16 && to == DType::F32)
    vec::fromHalf(bitsIn, reinterpret_cast<float*>(out), n);
  else if (from == DType::BF16 && to == DType::F32)
    vec::fromBFloat16(bitsIn, reinterpret_cast<float*>(out), n);
  else
    return false;
  return true;
}

// ---- the Unary and Binary families: one struct per operation ----------------
// Each gives its f32 and f64 functions and, where one exists, its vector
// loop for contiguous f32 rows (vector_loops.h).

struct Relu {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Relu;
  static float f32(float x) { return reluOf(x); }
  static double f64(double x) { return reluOf(x); }
};
struct Silu {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Silu;
  static float f32(float x) { return fastSilu(x); }
  static double f64(double x) { return x / (1.0 + std::exp(-x)); }
};
struct Gelu {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Gelu;
  static float f32(float x) { return fastGelu(x); }
  static double f64(double x) { return x * 0.5 * std::erfc(-x * M_SQRT1_2); }
};

struct Exp {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Exp;
  static float f32(float x) { return std::exp(x); }
  static double f64(double x) { return std::exp(x); }
};
struct Log {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Log;
  static float f32(float x) { return std::log(x); }
  static double f64(double x) { return std::log(x); }
};
struct Sqrt {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Sqrt;
  static float f32(float x) { return std::sqrt(x); }
  static double f64(double x) { return std::sqrt(x); }
};
struct Rsqrt {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Rsqrt;
  static float f32(float x) { return 1.0f / std::sqrt(x); }
  static double f64(double x) { return 1.0 / std::sqrt(x); }
};
struct Sigmoid {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Sigmoid;
  static float f32(float x) { return 1.0f / (1.0f + std::exp(-x)); }
  static double f64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
};
struct Tanh {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Tanh;
  static float f32(float x) { return std::tanh(x); }
  static double f64(double x) { return std::tanh(x); }
};
struct Sin {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Sin;
  static float f32(float x) { return std::sin(x); }
  static double f64(double x) { return std::sin(x); }
};
struct Cos {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Cos;
  static float f32(float x) { return std::cos(x); }
  static double f64(double x) { return std::cos(x); }
};
struct Abs {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Abs;
  static float f32(float x) { return std::fabs(x); }
  static double f64(double x) { return std::fabs(x); }
};
struct Neg {
  static constexpr std::optional<vec::Unary> kVector = vec::Unary::Neg;
  static float f32(float x) { return -x; }
  static double f64(double x) { return -x; }
};

template <typename Op>
void unaryKernel(GemmKind mode, const KernelCall& call) {
  unary<operands::Unary>(
      mode, call, Op::kVector, 0.0f, [](float x) { return Op::f32(x); }, [](double x) { return Op::f64(x); });
}

struct Sum {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Add;
  template <typename T>
  static T of(T a, T b) {
    return a + b;
  }
};
struct Difference {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Sub;
  template <typename T>
  static T of(T a, T b) {
    return a - b;
  }
};
struct Product {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Mul;
  template <typename T>
  static T of(T a, T b) {
    return a * b;
  }
};

struct Div {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Div;
  template <typename T>
  static T of(T a, T b) {
    return a / b;
  }
};
struct Maximum {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Max;
  template <typename T>
  static T of(T a, T b) {
    return a != a || b != b ? a + b : (a > b ? a : b);
  }
};
struct Minimum {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Min;
  template <typename T>
  static T of(T a, T b) {
    return a != a || b != b ? a + b : (a < b ? a : b);
  }
};
struct Gt {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Gt;
  template <typename T>
  static T of(T a, T b) {
    return a > b ? T(1) : T(0);
  }
};
struct Ge {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Ge;
  template <typename T>
  static T of(T a, T b) {
    return a >= b ? T(1) : T(0);
  }
};
struct Lt {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Lt;
  template <typename T>
  static T of(T a, T b) {
    return a < b ? T(1) : T(0);
  }
};
struct Le {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Le;
  template <typename T>
  static T of(T a, T b) {
    return a <= b ? T(1) : T(0);
  }
};
struct Eq {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Eq;
  template <typename T>
  static T of(T a, T b) {
    return a == b ? T(1) : T(0);
  }
};
struct Ne {
  static constexpr std::optional<vec::Binary> kVector = vec::Binary::Ne;
  template <typename T>
  static T of(T a, T b) {
    return a != b ? T(1) : T(0);
  }
};

template <typename Op>
void binaryKernel(GemmKind mode, const KernelCall& call) {
  binary<operands::Add>(mode, call, Op::kVector, [](auto a, auto b) { return Op::of(a, b); });
}

using Kernel = void (*)(GemmKind, const KernelCall&);

// The families' operations, each checked at compile time to hold exactly
// the rows of ir/op_list.h of its family.
constexpr std::pair<OpKind, Kernel> kUnaryEntries[] = {
    {OpKind::Relu, unaryKernel<Relu>},   {OpKind::Silu, unaryKernel<Silu>},       {OpKind::Gelu, unaryKernel<Gelu>},
    {OpKind::Exp, unaryKernel<Exp>},     {OpKind::Log, unaryKernel<Log>},         {OpKind::Sqrt, unaryKernel<Sqrt>},
    {OpKind::Rsqrt, unaryKernel<Rsqrt>}, {OpKind::Sigmoid, unaryKernel<Sigmoid>}, {OpKind::Tanh, unaryKernel<Tanh>},
    {OpKind::Sin, unaryKernel<Sin>},     {OpKind::Cos, unaryKernel<Cos>},         {OpKind::Abs, unaryKernel<Abs>},
    {OpKind::Neg, unaryKernel<Neg>},
};
constexpr std::pair<OpKind, Kernel> kBinaryEntries[] = {
    {OpKind::Add, binaryKernel<Sum>},         {OpKind::Sub, binaryKernel<Difference>},
    {OpKind::Mul, binaryKernel<Product>},     {OpKind::Div, binaryKernel<Div>},
    {OpKind::Maximum, binaryKernel<Maximum>}, {OpKind::Minimum, binaryKernel<Minimum>},
    {OpKind::Gt, binaryKernel<Gt>},           {OpKind::Ge, binaryKernel<Ge>},
    {OpKind::Lt, binaryKernel<Lt>},           {OpKind::Le, binaryKernel<Le>},
    {OpKind::Eq, binaryKernel<Eq>},           {OpKind::Ne, binaryKernel<Ne>},
};
constexpr OpTable<Kernel> kUnary = opTable(kUnaryEntries);
constexpr OpTable<Kernel> kBinary = opTable(kBinaryEntries);
static_assert(coversExactly(kUnary, KernelFamily::Unary), "a CPU kernel for every unary operation, and only those");
static_assert(coversExactly(kBinary, KernelFamily::Binary), "a CPU kernel for every binary operation, and only those");

}  // namespace

template <>
void familyKernel<KernelFamily::Unary>(GemmKind mode, const KernelCall& call) {
  kUnary[opIndex(call.kind)](mode, call);
}

template <>
void familyKernel<KernelFamily::Binary>(GemmKind mode, const KernelCall& call) {
  kBinary[opIndex(call.kind)](mode, call);
}

// The Unary family (y = f(x)) and the Binary family (y = f(a, b), b
// broadcast to a's shape) are their familyKernel (cpu_kernels.h), each by
// its table of operations in cpu_elementwise.cpp.
template <>
void familyKernel<KernelFamily::Scale>(GemmKind mode, const KernelCall& call) {
  const double by = call.scalars[operands::Scale::by];
  const auto byF32 = static_cast<float>(by);
  // The factor applies exactly. One that f32 would round (1e-45 to a
  // denormal, 3.5e38 to inf) multiplies in f64, where the product of an
  // f32 element and it is rounded once, to the tensor's dtype.
  const auto inF64 = [by](double x) { return by * x; };
  if (static_cast<double>(byF32) != by) {
    using O = operands::Scale;
    unaryRows<double>(call.operand(O::x), call.operand(O::out), vec::Unary::Scale, byF32, inF64);
    return;
  }
  unary<operands::Scale>(
      mode, call, vec::Unary::Scale, byF32, [byF32](float x) { return byF32 * x; }, inF64);
}

// Between f32, f16, bf16 and f64, rounding to nearest even once (f64 to f16
// and bf16 too: never through a rounded f32).
template <>
void familyKernel<KernelFamily::Cast>(GemmKind, const KernelCall& call) {
  using O = operands::Cast;
  const TensorView& x = call.operand(O::x);
  const TensorView& out = call.operand(O::out);
  const auto inSize = static_cast<int64_t>(dtypeSize(x.dtype));
  const auto outSize = static_cast<int64_t>(dtypeSize(out.dtype));
  const bool narrowsF64 = x.dtype == DType::F64 && (out.dtype == DType::F16 || out.dtype == DType::BF16);
  forEachRow<2>({&x, &out}, [&](auto ptrs, int64_t n, auto inner) {
    if (inner[0] == 1 && inner[1] == 1 && castRow(x.dtype, ptrs[0], out.dtype, ptrs[1], n)) return;
    for (int64_t i = 0; i < n; ++i) {
      const double v = load<double>(x.dtype, ptrs[0] + i * inner[0] * inSize);
      std::byte* to = ptrs[1] + i * inner[1] * outSize;
      if (narrowsF64)
        store<float>(out.dtype, to, roundToOdd(v));
      else
        store<double>(out.dtype, to, v);
    }
  });
}

// out = a where c is not zero, else b (c and b broadcast to a's shape; c of any dtype).
template <>
void familyKernel<KernelFamily::Where>(GemmKind, const KernelCall& call) {
  using O = operands::Where;
  const TensorView& a = call.operand(O::a);
  const TensorView c = broadcastTo(call.operand(O::c), a.shape);
  const TensorView b = broadcastTo(call.operand(O::b), a.shape);
  const TensorView& out = call.operand(O::out);
  const auto size = static_cast<int64_t>(dtypeSize(a.dtype));
  const auto conditionSize = static_cast<int64_t>(dtypeSize(c.dtype));
  const bool allF32 = a.dtype == DType::F32 && c.dtype == DType::F32;
  forEachRow<4>({&a, &c, &b, &out}, [&](auto ptrs, int64_t n, auto inner) {
    if (allF32 && inner[0] == 1 && inner[1] == 1 && inner[2] == 1 && inner[3] == 1) {
      vec::select(reinterpret_cast<const float*>(ptrs[1]), reinterpret_cast<const float*>(ptrs[0]),
                  reinterpret_cast<const float*>(ptrs[2]), reinterpret_cast<float*>(ptrs[3]), n);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      // NaN is not zero, so it selects a (NumPy's truth of NaN).
      const bool chooseA = load<double>(c.dtype, ptrs[1] + i * inner[1] * conditionSize) != 0.0;
      const std::byte* from = chooseA ? ptrs[0] + i * inner[0] * size : ptrs[2] + i * inner[2] * size;
      std::memcpy(ptrs[3] + i * inner[3] * size, from, static_cast<size_t>(size));
    }
  });
}

}  // namespace hostir::cpu
