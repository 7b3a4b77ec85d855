// The CPU backend's kernels against the machine's own baselines, one
// kernel on one thread as a stream runs it (executor/cpu/cpu_kernels.h):
//
//   BM_Copy         memmove through cpu::copy: the copy bandwidth `hostir
//                   calibrate` measures (bytes read + written per second)
//   BM_Elementwise  every unary and binary operation (the binary ones also
//                   with b broadcast over rows), scale and cast f32 -> f16,
//                   counted the same way: the goal is at least half of
//                   BM_Copy's GB/s
//   BM_Rows         softmax and rms_norm over rows of 4096, counted the same way
//   BM_RowOps       layer_norm, rope, sum, max, cumsum, where, top_k and fill
//                   on rows of 4096, counted the same way
//   BM_Transpose    a [1024, 4096] f32 tensor copied with its axes swapped
//   BM_Sgemm        OpenBLAS sgemm, square: the GEMM rate
//   BM_Attention    attention, 8 heads of 64, causal or not, FLOPs as the
//                   cost model counts them (4 · attended pairs · H·D): the
//                   goal is at least half of BM_Sgemm's GFLOP/s for T >= 512
//
// Every benchmark reports bytes_per_second (GB/s) or GFLOP/s as counters:
//   cpu_kernels_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "executor/cpu/blas_buffers.h"
#include "executor/cpu/blas_library.h"
#include "executor/cpu/cpu_gemm.h"
#include "executor/cpu/cpu_kernels.h"

namespace {

using namespace hostir;

// A contiguous host tensor of uniform values in [lo, hi) (f16 zero-filled),
// with its view.
struct Tensor {
  std::vector<std::byte> bytes;
  TensorView view;

  Tensor(DType dtype, const Dims& shape, float lo = -2.0f, float hi = 2.0f, unsigned seed = 7) {
    view = TensorView::contiguous(nullptr, dtype, shape);
    bytes.resize(view.bytes());
    view.buffer = std::make_shared<BorrowedBuffer>(bytes.data(), bytes.size());
    if (dtype != DType::F32) return;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(lo, hi);
    auto* values = reinterpret_cast<float*>(bytes.data());
    for (int64_t i = 0; i < view.numel(); ++i) values[i] = uniform(rng);
  }
};

// Runs `call` under the benchmark's loop, counting `bytes` moved or `flops` per run.
void runTimed(benchmark::State& state, const KernelCall& call, double bytes, double flops) {
  cpu::blasLibrary();  // loaded once, outside the timing
  for (auto _ : state) cpu::runKernel(cpu::GemmKind::Blas, call);
  if (bytes > 0) state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
  if (flops > 0)
    state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Copy(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor src(DType::F32, Dims{n}), dst(DType::F32, Dims{n});
  for (auto _ : state) cpu::copy(src.view, dst.view);
  state.SetBytesProcessed(2 * n * 4 * state.iterations());
}
BENCHMARK(BM_Copy)->Arg(1 << 16)->Arg(1 << 22);

// The elementwise kernels on n f32 elements ([n / 1024, 1024]), by the
// layout of their operands.
enum class Form { Unary, Binary, BinaryBroadcast, Scale, CastToF16 };

void BM_Elementwise(benchmark::State& state, OpKind kind, Form form) {
  const int64_t n = state.range(0), cols = 1024;
  // log, sqrt and rsqrt on positive values: the common case, not NaN.
  const bool positive = kind == OpKind::Log || kind == OpKind::Sqrt || kind == OpKind::Rsqrt;
  Tensor a(DType::F32, Dims{n / cols, cols}, positive ? 0.01f : -2.0f, 2.0f);
  Tensor b(DType::F32, Dims{n / cols, cols}, -2.0f, 2.0f, 11), row(DType::F32, Dims{cols}, -2.0f, 2.0f, 11);
  Tensor out(form == Form::CastToF16 ? DType::F16 : DType::F32, Dims{n / cols, cols});
  KernelCall call{kind};
  double bytes = 8.0 * static_cast<double>(n);  // read x, write y
  switch (form) {
    case Form::Unary:
      call.operands[operands::Unary::x] = &a.view;
      call.operands[operands::Unary::out] = &out.view;
      break;
    case Form::Binary:
    case Form::BinaryBroadcast:
      call.operands[operands::Add::a] = &a.view;
      call.operands[operands::Add::b] = form == Form::Binary ? &b.view : &row.view;
      call.operands[operands::Add::out] = &out.view;
      if (form == Form::Binary) bytes = 12.0 * static_cast<double>(n);  // and read b
      break;
    case Form::Scale:
      call.operands[operands::Scale::x] = &a.view;
      call.operands[operands::Scale::out] = &out.view;
      call.scalars[operands::Scale::by] = 0.125;
      break;
    case Form::CastToF16:
      call.operands[operands::Cast::x] = &a.view;
      call.operands[operands::Cast::out] = &out.view;
      bytes = 6.0 * static_cast<double>(n);
      break;
  }
  runTimed(state, call, bytes, 0);
}
#define HOSTIR_ELEMENTWISE(name, kind, form) \
  BENCHMARK_CAPTURE(BM_Elementwise, name, OpKind::kind, Form::form)->Arg(1 << 16)->Arg(1 << 22)
HOSTIR_ELEMENTWISE(relu, Relu, Unary);
HOSTIR_ELEMENTWISE(silu, Silu, Unary);
HOSTIR_ELEMENTWISE(gelu, Gelu, Unary);
HOSTIR_ELEMENTWISE(exp, Exp, Unary);
HOSTIR_ELEMENTWISE(log, Log, Unary);
HOSTIR_ELEMENTWISE(sqrt, Sqrt, Unary);
HOSTIR_ELEMENTWISE(rsqrt, Rsqrt, Unary);
HOSTIR_ELEMENTWISE(sigmoid, Sigmoid, Unary);
HOSTIR_ELEMENTWISE(tanh, Tanh, Unary);
HOSTIR_ELEMENTWISE(sin, Sin, Unary);
HOSTIR_ELEMENTWISE(cos, Cos, Unary);
HOSTIR_ELEMENTWISE(abs, Abs, Unary);
HOSTIR_ELEMENTWISE(neg, Neg, Unary);
HOSTIR_ELEMENTWISE(add, Add, Binary);
HOSTIR_ELEMENTWISE(sub, Sub, Binary);
HOSTIR_ELEMENTWISE(mul, Mul, Binary);
HOSTIR_ELEMENTWISE(div, Div, Binary);
HOSTIR_ELEMENTWISE(maximum, Maximum, Binary);
HOSTIR_ELEMENTWISE(minimum, Minimum, Binary);
HOSTIR_ELEMENTWISE(gt, Gt, Binary);
HOSTIR_ELEMENTWISE(ge, Ge, Binary);
HOSTIR_ELEMENTWISE(lt, Lt, Binary);
HOSTIR_ELEMENTWISE(le, Le, Binary);
HOSTIR_ELEMENTWISE(eq, Eq, Binary);
HOSTIR_ELEMENTWISE(ne, Ne, Binary);
HOSTIR_ELEMENTWISE(mul_broadcast, Mul, BinaryBroadcast);
HOSTIR_ELEMENTWISE(div_broadcast, Div, BinaryBroadcast);
HOSTIR_ELEMENTWISE(maximum_broadcast, Maximum, BinaryBroadcast);
HOSTIR_ELEMENTWISE(gt_broadcast, Gt, BinaryBroadcast);
HOSTIR_ELEMENTWISE(scale, Scale, Scale);
HOSTIR_ELEMENTWISE(cast_to_f16, Cast, CastToF16);
#undef HOSTIR_ELEMENTWISE

void BM_Rows(benchmark::State& state, bool norm) {
  const int64_t rows = state.range(0), cols = 4096;
  Tensor x(DType::F32, Dims{rows, cols}), w(DType::F32, Dims{cols}), out(DType::F32, Dims{rows, cols});
  KernelCall call{norm ? OpKind::RmsNorm : OpKind::Softmax};
  call.operands[0] = &x.view;
  if (norm) {
    call.operands[operands::RmsNorm::w] = &w.view;
    call.operands[operands::RmsNorm::out] = &out.view;
    call.scalars[operands::RmsNorm::eps] = kDefaultRmsNormEps;
  } else {
    call.operands[operands::Unary::out] = &out.view;
  }
  runTimed(state, call, 8.0 * static_cast<double>(rows * cols), 0);
}
BENCHMARK_CAPTURE(BM_Rows, softmax, false)->Arg(16)->Arg(1024);
BENCHMARK_CAPTURE(BM_Rows, rms_norm, true)->Arg(16)->Arg(1024);

// The layers' other kernels on rows of 4096 f32, in bytes read plus
// written, as BM_Rows: the normalizations, rotations, reductions along the
// last axis, selects, top-k and constants.
enum class RowOp { LayerNorm, Rope, Sum, Max, Cumsum, Where, TopK8, Fill };

void BM_RowOps(benchmark::State& state, RowOp op) {
  const int64_t rows = state.range(0), cols = 4096, n = rows * cols;
  Tensor x(DType::F32, Dims{rows, cols}), y(DType::F32, Dims{rows, cols}, -2.0f, 2.0f, 11);
  Tensor c(DType::F32, Dims{rows, cols}, 0.0f, 2.0f, 13), out(DType::F32, Dims{rows, cols});
  Tensor w(DType::F32, Dims{cols}), b(DType::F32, Dims{cols}), sums(DType::F32, Dims{rows});
  Tensor top(DType::F32, Dims{rows, 8}), indices(DType::I32, Dims{rows, 8});
  const double bytes = 4.0 * static_cast<double>(n);  // one pass over x
  switch (op) {
    case RowOp::LayerNorm: {
      using O = operands::LayerNorm;
      KernelCall call{OpKind::LayerNorm};
      call.operands[O::x] = &x.view, call.operands[O::w] = &w.view, call.operands[O::b] = &b.view;
      call.operands[O::out] = &out.view, call.scalars[O::eps] = kDefaultLayerNormEps;
      return runTimed(state, call, 2 * bytes, 0);
    }
    case RowOp::Rope: {  // 32 heads of 128, positions 0 to rows - 1
      using O = operands::Rope;
      KernelCall call{OpKind::Rope};
      call.operands[O::x] = &x.view, call.operands[O::out] = &out.view;
      call.integers[O::heads] = 32, call.scalars[O::theta] = kDefaultRopeTheta;
      return runTimed(state, call, 2 * bytes, 0);
    }
    case RowOp::Sum:
    case RowOp::Max: {
      using O = operands::Reduce;
      KernelCall call{op == RowOp::Sum ? OpKind::Sum : OpKind::Max};
      call.operands[O::x] = &x.view, call.operands[O::out] = &sums.view, call.integers[O::axis] = 1;
      return runTimed(state, call, bytes + 4.0 * static_cast<double>(rows), 0);
    }
    case RowOp::Cumsum: {
      using O = operands::Cumsum;
      KernelCall call{OpKind::Cumsum};
      call.operands[O::x] = &x.view, call.operands[O::out] = &out.view, call.integers[O::axis] = 1;
      return runTimed(state, call, 2 * bytes, 0);
    }
    case RowOp::Where: {
      using O = operands::Where;
      KernelCall call{OpKind::Where};
      call.operands[O::c] = &c.view, call.operands[O::a] = &x.view, call.operands[O::b] = &y.view;
      call.operands[O::out] = &out.view;
      return runTimed(state, call, 4 * bytes, 0);
    }
    case RowOp::TopK8: {
      using O = operands::TopK;
      KernelCall call{OpKind::TopK};
      call.operands[O::x] = &x.view, call.operands[O::out] = &top.view, call.operands[O::indices] = &indices.view;
      call.integers[O::k] = 8;
      return runTimed(state, call, bytes + 64.0 * static_cast<double>(rows), 0);
    }
    case RowOp::Fill: {
      using O = operands::Fill;
      KernelCall call{OpKind::Fill};
      call.operands[O::type] = &out.view, call.scalars[O::value] = 0.5;
      return runTimed(state, call, bytes, 0);
    }
  }
}
// transpose: a copy from x seen with its axes swapped ([1024, 4096] read
// as [4096, 1024]), as the transpose operation issues it; f32, or bf16 with
// the same shape (half the bytes).
void BM_Transpose(benchmark::State& state, DType dtype) {
  const int64_t rows = state.range(0), cols = 4096;
  Tensor x(dtype, Dims{rows, cols}), out(dtype, Dims{cols, rows});
  TensorView swapped = x.view;
  swapped.shape = Dims{cols, rows};
  swapped.strides = Dims{1, cols};
  for (auto _ : state) cpu::copy(swapped, out.view);
  state.SetBytesProcessed(2 * static_cast<int64_t>(dtypeSize(dtype)) * rows * cols * state.iterations());
}
BENCHMARK_CAPTURE(BM_Transpose, f32, DType::F32)->Arg(1024);
BENCHMARK_CAPTURE(BM_Transpose, bf16, DType::BF16)->Arg(1024);

BENCHMARK_CAPTURE(BM_RowOps, layer_norm, RowOp::LayerNorm)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, rope, RowOp::Rope)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, sum, RowOp::Sum)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, max, RowOp::Max)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, cumsum, RowOp::Cumsum)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, where, RowOp::Where)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, top_k_8, RowOp::TopK8)->Arg(1024);
BENCHMARK_CAPTURE(BM_RowOps, fill, RowOp::Fill)->Arg(1024);

void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a(DType::F32, Dims{n, n}), b(DType::F32, Dims{n, n}), c(DType::F32, Dims{n, n});
  KernelCall call{OpKind::Matmul};
  call.operands[operands::Matmul::a] = &a.view;
  call.operands[operands::Matmul::b] = &b.view;
  call.operands[operands::Matmul::out] = &c.view;
  runTimed(state, call, 0, 2.0 * static_cast<double>(n * n * n));
}
BENCHMARK(BM_Sgemm)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_Attention(benchmark::State& state) {
  using O = operands::Attention;
  const int64_t t = state.range(0), heads = 8, d = 64;
  const bool causal = state.range(1) != 0;
  Tensor q(DType::F32, Dims{t, heads * d}), k(DType::F32, Dims{t, heads * d}), v(DType::F32, Dims{t, heads * d});
  Tensor out(DType::F32, Dims{t, heads * d}), lse(DType::F32, Dims{t, heads});
  KernelCall call{OpKind::Attention};
  call.operands[O::q] = &q.view;
  call.operands[O::k] = &k.view;
  call.operands[O::v] = &v.view;
  call.operands[O::out] = &out.view;
  call.operands[O::lse] = &lse.view;
  call.scalars[O::heads] = static_cast<double>(heads);
  call.scalars[O::kv_heads] = static_cast<double>(heads);
  call.integers[O::heads] = heads;
  call.integers[O::kv_heads] = heads;
  call.scalars[O::causal] = causal ? 1.0 : 0.0;
  const double pairs = causal ? static_cast<double>(t) * static_cast<double>(t + 1) / 2 : static_cast<double>(t * t);
  runTimed(state, call, 0, 4.0 * pairs * static_cast<double>(heads * d));
}
BENCHMARK(BM_Attention)
    ->ArgNames({"T", "causal"})
    ->ArgsProduct({{256, 512, 1024, 2048}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
