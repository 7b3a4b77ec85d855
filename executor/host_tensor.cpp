#include "executor/host_tensor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "executor/cpu/cpu_kernels.h"
#include "ir/element.h"
#include "ir/shapes.h"

namespace hostir {
namespace {

TensorView constView(const HostTensor& t) { return viewOf(const_cast<HostTensor&>(t)); }

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t nameHash(const std::string& name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

HostTensor makeHostTensor(DType dtype, const Dims& shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = shape.vector();
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  t.data.resize(static_cast<size_t>(n) * dtypeSize(dtype));
  return t;
}

HostTensorRef refOf(const HostTensor& tensor) { return HostTensorRef{tensor.dtype, tensor.shape, tensor.data.data()}; }

TensorView shardView(const HostTensorRef& global, const TensorSpec& spec, int64_t rank, int64_t world) {
  Dims shape(global.shape);
  int64_t elements = 1;
  for (int64_t e : shape) elements *= e;
  TensorView whole = TensorView::contiguous(
      std::make_shared<BorrowedBuffer>(global.data, static_cast<size_t>(elements) * dtypeSize(global.dtype)),
      global.dtype, shape);
  return spec.shardAxis ? whole.chunk(static_cast<size_t>(*spec.shardAxis), spec.slice(rank), spec.sliceCount(world))
                        : whole;
}

TensorView viewOf(HostTensor& tensor) {
  return TensorView::contiguous(std::make_shared<BorrowedBuffer>(tensor.data.data(), tensor.data.size()), tensor.dtype,
                                Dims(tensor.shape));
}

HostTensor seededShard(uint64_t seed, const TensorSpec& spec, int64_t rank, int64_t world) {
  HostTensor local = makeHostTensor(spec.dtype, spec.localShape);
  const Dims& shape = spec.localShape;
  Dims globalStrides = rowMajorStrides(spec.globalShape);
  int64_t shardBegin = spec.shardAxis ? shardStart(spec.globalShape[static_cast<size_t>(*spec.shardAxis)],
                                                   spec.slice(rank), spec.sliceCount(world))
                                      : 0;
  uint64_t key = splitmix64(seed) ^ nameHash(spec.name);
  // i32 holds indices: -1 (none) or a row of a tensor as long as this one's first axis.
  const int64_t indexEnd = spec.globalShape.size ? spec.globalShape[0] : 1;
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  size_t size = dtypeSize(spec.dtype);
  std::array<int64_t, kMaxTensorRank> index{};
  for (int64_t i = 0; i < n; ++i) {
    int64_t globalFlat = 0;
    for (size_t d = 0; d < shape.size; ++d) {
      int64_t g = index[d] + (spec.shardAxis && static_cast<size_t>(*spec.shardAxis) == d ? shardBegin : 0);
      globalFlat += g * globalStrides[d];
    }
    uint64_t bits = splitmix64(key + static_cast<uint64_t>(globalFlat));
    double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
    double value =
        spec.dtype == DType::I32 ? std::floor(unit * static_cast<double>(indexEnd + 1)) - 1.0 : 2.0 * unit - 1.0;
    storeElement<double>(spec.dtype, local.data.data() + static_cast<size_t>(i) * size, value);
    for (size_t d = shape.size; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return local;
}

HostTensor seededGlobal(uint64_t seed, const TensorSpec& spec) {
  TensorSpec whole = spec;
  whole.localShape = spec.globalShape;
  whole.shardAxis.reset();
  whole.sliceOfRank.clear();
  return seededShard(seed, whole, 0, 1);
}

HostTensor shardOf(const HostTensor& global, const TensorSpec& spec, int64_t rank, int64_t world) {
  if (!spec.shardAxis) return global;
  HostTensor local = makeHostTensor(spec.dtype, spec.localShape);
  cpu::copy(constView(global).chunk(static_cast<size_t>(*spec.shardAxis), spec.slice(rank), spec.sliceCount(world)),
            viewOf(local));
  return local;
}

HostTensor gatherGlobal(Communicator& comm, const HostTensor& local, const TensorSpec& spec) {
  if (!spec.shardAxis) return local;
  HostTensor global = makeHostTensor(spec.dtype, spec.globalShape);
  gatherGlobalInto(comm, local, spec, global.data.data());
  return global;
}

std::vector<HostTensor> gatherCopies(Communicator& comm, const HostTensor& local) {
  const int64_t world = comm.size();
  const size_t count = local.data.size() / dtypeSize(local.dtype);
  HostTensor all = makeHostTensor(local.dtype, Dims{world * static_cast<int64_t>(count)});
  comm.allgather(local.data.data(), all.data.data(), count, local.dtype);
  std::vector<HostTensor> copies;
  if (comm.rank() != 0) return copies;
  for (int64_t r = 0; r < world; ++r) {
    HostTensor copy = local;
    std::copy_n(all.data.begin() + r * static_cast<int64_t>(local.data.size()), local.data.size(), copy.data.begin());
    copies.push_back(std::move(copy));
  }
  return copies;
}

void gatherGlobalInto(Communicator& comm, const HostTensor& local, const TensorSpec& spec, std::byte* global) {
  int64_t world = comm.size();
  int64_t count = 1;
  for (int64_t e : spec.localShape) count *= e;
  HostTensor blocks = makeHostTensor(spec.dtype, Dims{world * count});
  comm.allgather(local.data.data(), blocks.data.data(), static_cast<size_t>(count), spec.dtype);
  if (comm.rank() != 0) return;
  TensorView all = viewOf(blocks);
  TensorView out =
      TensorView::contiguous(std::make_shared<BorrowedBuffer>(
                                 global, static_cast<size_t>(spec.sliceCount(world) * count) * dtypeSize(spec.dtype)),
                             spec.dtype, spec.globalShape);
  for (int64_t r = 0; r < world; ++r) {
    TensorView block = TensorView::contiguous(all.buffer, spec.dtype, spec.localShape);
    block.offset = r * count;
    // Ranks holding the same slice hold the same values: each writes it.
    cpu::copy(block, out.chunk(static_cast<size_t>(*spec.shardAxis), spec.slice(r), spec.sliceCount(world)));
  }
}

}  // namespace hostir
