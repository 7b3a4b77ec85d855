#include "executor/cuda/cuda_kernels.cuh"

#include <cstdint>
#include <type_traits>

#include "executor/cuda/cuda_device.cuh"

namespace hostir::cuda {
namespace {

using namespace device;

template <typename T>
__global__ void copyKernel(T* dst, const T* src, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(layout, i, offsets);
    dst[offsets[0]] = src[offsets[1]];
  }
}

template <typename T>
__global__ void zeroKernel(T* dst, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[1];
    offsetsOf(layout, i, offsets);
    dst[offsets[0]] = T(0);
  }
}

// ---- elementwise computations ----------------------------------------------------

struct Difference {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x - y;
  }
};

struct DivOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x / y;
  }
};
struct MaximumOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x != x || y != y ? x + y : (x > y ? x : y);
  }
};
struct MinimumOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x != x || y != y ? x + y : (x < y ? x : y);
  }
};
struct GtOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x > y ? A(1) : A(0);
  }
};
struct GeOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x >= y ? A(1) : A(0);
  }
};
struct LtOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x < y ? A(1) : A(0);
  }
};
struct LeOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x <= y ? A(1) : A(0);
  }
};
struct EqOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x == y ? A(1) : A(0);
  }
};
struct NeOf {
  template <typename A>
  __device__ A operator()(A x, A y) const {
    return x != y ? A(1) : A(0);
  }
};
struct Relu {
  template <typename A>
  __device__ A operator()(A x) const {
    return x > A(0) ? x : A(0);
  }
};
struct Silu {
  template <typename A>
  __device__ A operator()(A x) const {
    return x / (A(1) + expOf(-x));
  }
};
// The exact form x·Φ(x) = x/2 · (1 + erf(x/√2)).
struct Gelu {
  template <typename A>
  __device__ A operator()(A x) const {
    return A(0.5) * x * (A(1) + erfOf(x * A(0.70710678118654752440)));
  }
};
struct ExpOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return expOf(x);
  }
};
struct LogOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return logOf(x);
  }
};
struct SqrtOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return sqrtOf(x);
  }
};
struct RsqrtOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return A(1) / sqrtOf(x);
  }
};
struct SigmoidOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return A(1) / (A(1) + expOf(-x));
  }
};
struct TanhOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return tanhOf(x);
  }
};
struct SinOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return sinOf(x);
  }
};
struct CosOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return cosOf(x);
  }
};
struct AbsOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return fabsOf(x);
  }
};
struct NegOf {
  template <typename A>
  __device__ A operator()(A x) const {
    return -x;
  }
};
// The factor applies exactly: a factor that the compute type would round
// (1e-45 to a denormal, 3.5e38 to inf in f32) multiplies in f64, and the
// product is rounded once.
struct ScaleBy {
  double factor;
  bool exactInFloat;  // factor == (double)(float)factor
  template <typename A>
  __device__ A operator()(A x) const {
    if (sizeof(A) < sizeof(double) && !exactInFloat) return static_cast<A>(static_cast<double>(x) * factor);
    return x * static_cast<A>(factor);
  }
};

// out = op(a, b); operands 0, 1, 2 of the layout are out, a, b.
template <typename T, typename Op>
__global__ void binaryKernel(T* out, const T* a, const T* b, ElementwiseLayout layout, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[3];
    offsetsOf(layout, i, offsets);
    narrow(op(widen(a[offsets[1]]), widen(b[offsets[2]])), &out[offsets[0]]);
  }
}

// out = op(x); operands 0, 1 of the layout are out, x.
template <typename T, typename Op>
__global__ void unaryKernel(T* out, const T* x, ElementwiseLayout layout, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(layout, i, offsets);
    narrow(op(widen(x[offsets[1]])), &out[offsets[0]]);
  }
}

// out = a where c is not zero, else b; operands 0..3 of the layout are
// out, c, a, b. c has any dtype; NaN is not zero.
__device__ __forceinline__ bool nonZero(int32_t v) { return v != 0; }
template <typename C>
__device__ __forceinline__ bool nonZero(C v) {
  return widen(v) != 0;
}
template <typename C, typename T>
__global__ void whereKernel(T* out, const C* c, const T* a, const T* b, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[4];
    offsetsOf(layout, i, offsets);
    out[offsets[0]] = nonZero(c[offsets[1]]) ? a[offsets[2]] : b[offsets[3]];
  }
}

// Conversions, rounding once to nearest even: f64 goes straight to the
// narrower type (through f32 it could round twice); the other types widen
// exactly to f32 first.
__device__ __forceinline__ void convert(double v, double* out) { *out = v; }
__device__ __forceinline__ void convert(double v, float* out) { *out = __double2float_rn(v); }
__device__ __forceinline__ void convert(double v, __half* out) { *out = __double2half(v); }
__device__ __forceinline__ void convert(double v, __nv_bfloat16* out) { *out = __double2bfloat16(v); }
__device__ __forceinline__ void convert(float v, double* out) { *out = static_cast<double>(v); }
template <typename Out>
__device__ __forceinline__ void convert(float v, Out* out) {
  narrow(v, out);
}

template <typename In, typename Out>
__global__ void castKernel(Out* out, const In* x, ElementwiseLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < layout.numel; i += step) {
    int64_t offsets[2];
    offsetsOf(layout, i, offsets);
    convert(widen(x[offsets[1]]), &out[offsets[0]]);
  }
}

// ---- launchers -------------------------------------------------------------------

template <typename T>
cudaError_t copyAs(void* dst, const void* src, const ElementwiseLayout& layout, cudaStream_t stream) {
  copyKernel<T>
      <<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(dst), static_cast<const T*>(src), layout);
  return cudaGetLastError();
}

template <typename T>
cudaError_t zeroAs(void* dst, const ElementwiseLayout& layout, cudaStream_t stream) {
  zeroKernel<T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(static_cast<T*>(dst), layout);
  return cudaGetLastError();
}

// out = op(a, b) for every floating dtype: an ElementwiseLaunch.
template <typename Op>
cudaError_t launchBinary(const ElementwiseOperands& operands, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(operands.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    binaryKernel<T, Op><<<blocksFor(layout.numel), kThreads, 0, stream>>>(
        static_cast<T*>(operands.out), static_cast<const T*>(operands.inputs[0]),
        static_cast<const T*>(operands.inputs[1]), layout, Op{});
    return cudaGetLastError();
  });
}

// out = op(x), `op` made from the operands (scale's factor).
template <typename Op>
cudaError_t launchUnary(const ElementwiseOperands& operands, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  Op op;
  if constexpr (std::is_same_v<Op, ScaleBy>) {
    op.factor = operands.parameter;
    op.exactInFloat = static_cast<double>(static_cast<float>(op.factor)) == op.factor;
  }
  return byFloatType(operands.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    unaryKernel<T, Op><<<blocksFor(layout.numel), kThreads, 0, stream>>>(
        static_cast<T*>(operands.out), static_cast<const T*>(operands.inputs[0]), layout, op);
    return cudaGetLastError();
  });
}

// out = x converted from operands.inputDtype to operands.dtype.
cudaError_t launchCast(const ElementwiseOperands& operands, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byFloatType(operands.inputDtype, [&](auto inTag) {
    using In = typename decltype(inTag)::type;
    return byFloatType(operands.dtype, [&](auto outTag) {
      using Out = typename decltype(outTag)::type;
      castKernel<In, Out><<<blocksFor(layout.numel), kThreads, 0, stream>>>(
          static_cast<Out*>(operands.out), static_cast<const In*>(operands.inputs[0]), layout);
      return cudaGetLastError();
    });
  });
}

// out = where(c, a, b): c of operands.inputDtype, the rest of operands.dtype.
cudaError_t launchWhere(const ElementwiseOperands& operands, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  return byAnyType(operands.inputDtype, [&](auto conditionTag) {
    using C = typename decltype(conditionTag)::type;
    return byFloatType(operands.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      whereKernel<C, T><<<blocksFor(layout.numel), kThreads, 0, stream>>>(
          static_cast<T*>(operands.out), static_cast<const C*>(operands.inputs[0]),
          static_cast<const T*>(operands.inputs[1]), static_cast<const T*>(operands.inputs[2]), layout);
      return cudaGetLastError();
    });
  });
}

// The elementwise computations, by their op table name.
struct NamedKernel {
  std::string_view name;
  ElementwiseLaunch launch;
};
constexpr NamedKernel kElementwiseKernels[] = {
    {"add", launchBinary<SumOf>},    {"sub", launchBinary<Difference>},    {"mul", launchBinary<ProductOf>},
    {"div", launchBinary<DivOf>},    {"maximum", launchBinary<MaximumOf>}, {"minimum", launchBinary<MinimumOf>},
    {"gt", launchBinary<GtOf>},      {"ge", launchBinary<GeOf>},           {"lt", launchBinary<LtOf>},
    {"le", launchBinary<LeOf>},      {"eq", launchBinary<EqOf>},           {"ne", launchBinary<NeOf>},
    {"relu", launchUnary<Relu>},     {"silu", launchUnary<Silu>},          {"gelu", launchUnary<Gelu>},
    {"exp", launchUnary<ExpOf>},     {"log", launchUnary<LogOf>},          {"sqrt", launchUnary<SqrtOf>},
    {"rsqrt", launchUnary<RsqrtOf>}, {"sigmoid", launchUnary<SigmoidOf>},  {"tanh", launchUnary<TanhOf>},
    {"sin", launchUnary<SinOf>},     {"cos", launchUnary<CosOf>},          {"abs", launchUnary<AbsOf>},
    {"neg", launchUnary<NegOf>},     {"scale", launchUnary<ScaleBy>},      {"cast", launchCast},
    {"where", launchWhere},
};

// ---- the copy-engine communicator's reductions -----------------------------------

template <typename T, typename Op>
__global__ void reduceKernel(T* acc, const T* in, int64_t count, Op op) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step)
    narrow(op(widen(acc[i]), widen(in[i])), &acc[i]);
}

template <typename T>
__global__ void scaleKernel(T* data, int64_t count, double factor) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const double scaled = static_cast<double>(widen(data[i])) * factor;
    narrow(static_cast<Arithmetic<T>>(scaled), &data[i]);
  }
}

template <typename T>
cudaError_t reduceAs(DeviceReduction op, void* acc, const void* in, int64_t count, cudaStream_t stream) {
  auto* a = static_cast<T*>(acc);
  auto* b = static_cast<const T*>(in);
  const unsigned blocks = blocksFor(count);
  switch (op) {
    case DeviceReduction::Sum: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, SumOf{}); break;
    case DeviceReduction::Prod: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, ProductOf{}); break;
    case DeviceReduction::Min: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, MinOf{}); break;
    case DeviceReduction::Max: reduceKernel<<<blocks, kThreads, 0, stream>>>(a, b, count, MaxOf{}); break;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchCopy(void* dst, const void* src, size_t elementSize, const ElementwiseLayout& layout,
                       cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  // Copies move bits: only the element size matters.
  switch (elementSize) {
    case 2: return copyAs<uint16_t>(dst, src, layout, stream);
    case 4: return copyAs<uint32_t>(dst, src, layout, stream);
    case 8: return copyAs<uint64_t>(dst, src, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launchZero(void* dst, size_t elementSize, const ElementwiseLayout& layout, cudaStream_t stream) {
  if (layout.numel == 0) return cudaSuccess;
  clearEarlierError();
  switch (elementSize) {  // +0.0 is all zero bits in every dtype
    case 2: return zeroAs<uint16_t>(dst, layout, stream);
    case 4: return zeroAs<uint32_t>(dst, layout, stream);
    case 8: return zeroAs<uint64_t>(dst, layout, stream);
    default: return cudaErrorInvalidValue;
  }
}

ElementwiseLaunch elementwiseKernel(std::string_view name) {
  for (const NamedKernel& kernel : kElementwiseKernels)
    if (kernel.name == name) return kernel.launch;
  return nullptr;
}

cudaError_t launchReduce(DType dtype, DeviceReduction op, void* acc, const void* in, size_t count,
                         cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  clearEarlierError();
  const auto n = static_cast<int64_t>(count);
  return byFloatType(dtype, [&](auto tag) { return reduceAs<typename decltype(tag)::type>(op, acc, in, n, stream); });
}

cudaError_t launchScale(DType dtype, void* data, size_t count, double factor, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  clearEarlierError();
  const auto n = static_cast<int64_t>(count);
  return byFloatType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    scaleKernel<T><<<blocksFor(n), kThreads, 0, stream>>>(static_cast<T*>(data), n, factor);
    return cudaGetLastError();
  });
}

}  // namespace hostir::cuda
