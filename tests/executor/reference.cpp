#include "reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>

#include "ir/half.h"

namespace hostir::reftest {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("reference: " + what); }

int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}

int64_t flatten(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape[d]) bad("index out of range");
    flat = flat * shape[d] + index[d];
  }
  return flat;
}

// IEEE binary16, decoded by hand.
double decodeF16(uint16_t bits) {
  int sign = bits >> 15;
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  double v;
  if (exponent == 0x1f)
    v = mantissa ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  else if (exponent == 0)
    v = std::ldexp(static_cast<double>(mantissa), -24);
  else
    v = std::ldexp(static_cast<double>(1024 + mantissa), exponent - 25);
  return sign ? -v : v;
}

// bfloat16: the top half of an f32.
double decodeBF16(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double decode(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::F64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::F16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return decodeF16(b);
    }
    case DType::BF16: {
      uint16_t b;
      std::memcpy(&b, p, 2);
      return decodeBF16(b);
    }
    case DType::I32: {
      int32_t i;
      std::memcpy(&i, p, 4);
      return i;
    }
  }
  bad("unknown dtype");
}

void encode(DType dtype, std::byte* p, double v) {
  switch (dtype) {
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::F64: std::memcpy(p, &v, 8); return;
    case DType::F16: {
      Half h = toHalf(static_cast<float>(v));
      std::memcpy(p, &h.bits, 2);
      return;
    }
    case DType::BF16: {
      BFloat16 h = toBFloat16(static_cast<float>(v));
      std::memcpy(p, &h.bits, 2);
      return;
    }
    case DType::I32: {
      if (v != std::floor(v) || v < INT32_MIN || v > INT32_MAX) bad(fmt::format("{} is no i32 value", v));
      auto i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      return;
    }
  }
}

}  // namespace

std::vector<int64_t> unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

RefTensor::RefTensor(std::vector<int64_t> s, double fill)
    : shape(std::move(s)), data(static_cast<size_t>(product(shape)), fill) {}

double& RefTensor::at(const std::vector<int64_t>& index) {
  if (index.size() != shape.size()) bad("index rank");
  return data[static_cast<size_t>(flatten(index, shape))];
}

double RefTensor::at(const std::vector<int64_t>& index) const { return const_cast<RefTensor*>(this)->at(index); }

std::string shapeString(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

RefTensor toRef(const HostTensor& t) {
  RefTensor r(t.shape);
  size_t size = dtypeSize(t.dtype);
  if (t.data.size() != r.data.size() * size)
    bad(fmt::format("host tensor holds {} bytes, expected {}", t.data.size(), r.data.size() * size));
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] = decode(t.dtype, t.data.data() + i * size);
  return r;
}

HostTensor toHost(const RefTensor& t, DType dtype) {
  HostTensor h;
  h.dtype = dtype;
  h.shape = t.shape;
  size_t size = dtypeSize(dtype);
  h.data.resize(t.data.size() * size);
  for (size_t i = 0; i < t.data.size(); ++i) encode(dtype, h.data.data() + i * size, t.data[i]);
  return h;
}

double roundTo(double v, DType dtype) {
  std::byte buf[8];
  encode(dtype, buf, v);
  return decode(dtype, buf);
}

RefTensor roundTo(const RefTensor& t, DType dtype) {
  return map(t, [dtype](double v) { return roundTo(v, dtype); });
}

RefTensor matmul(const RefTensor& a, const RefTensor& b) {
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
    bad("matmul shapes " + shapeString(a.shape) + " " + shapeString(b.shape));
  int64_t M = a.shape[0], K = a.shape[1], N = b.shape[1];
  RefTensor c({M, N});
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += a.data[static_cast<size_t>(m * K + k)] * b.data[static_cast<size_t>(k * N + n)];
      c.data[static_cast<size_t>(m * N + n)] = s;
    }
  return c;
}

RefTensor linear(const RefTensor& x, const RefTensor& w, const RefTensor* bias) {
  if (x.shape.empty() || w.shape.size() != 2 || w.shape[1] != x.shape.back())
    bad("linear shapes " + shapeString(x.shape) + " " + shapeString(w.shape));
  int64_t K = w.shape[1], N = w.shape[0];
  if (bias && bias->shape != std::vector<int64_t>{N}) bad("linear bias shape " + shapeString(bias->shape));
  int64_t rows = K ? x.numel() / K : product({x.shape.begin(), x.shape.end() - 1});
  std::vector<int64_t> shape = x.shape;
  shape.back() = N;
  RefTensor y(shape);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t n = 0; n < N; ++n) {
      double s = bias ? bias->data[static_cast<size_t>(n)] : 0.0;
      for (int64_t k = 0; k < K; ++k)
        s += x.data[static_cast<size_t>(r * K + k)] * w.data[static_cast<size_t>(n * K + k)];
      y.data[static_cast<size_t>(r * N + n)] = s;
    }
  return y;
}

RefTensor map(const RefTensor& a, const std::function<double(double)>& f) {
  RefTensor r = a;
  for (double& v : r.data) v = f(v);
  return r;
}

RefTensor zip(const RefTensor& a, const RefTensor& b, const std::function<double(double, double)>& f) {
  if (a.shape != b.shape) bad("elementwise shapes " + shapeString(a.shape) + " " + shapeString(b.shape));
  RefTensor r(a.shape);
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] = f(a.data[i], b.data[i]);
  return r;
}

RefTensor add(const RefTensor& a, const RefTensor& b) {
  return zip(a, b, [](double x, double y) { return x + y; });
}

RefTensor broadcast(const RefTensor& a, const RefTensor& b, const std::function<double(double, double)>& f) {
  const size_t lead = a.shape.size() - b.shape.size();
  if (b.shape.size() > a.shape.size()) bad("broadcast: b has more axes than a");
  for (size_t d = 0; d < b.shape.size(); ++d)
    if (b.shape[d] != 1 && b.shape[d] != a.shape[lead + d])
      bad("broadcast shapes " + shapeString(a.shape) + " " + shapeString(b.shape));
  RefTensor r(a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    std::vector<int64_t> index = unflatten(i, a.shape), bIndex(b.shape.size());
    for (size_t d = 0; d < b.shape.size(); ++d) bIndex[d] = b.shape[d] == 1 ? 0 : index[lead + d];
    r.data[static_cast<size_t>(i)] = f(a.data[static_cast<size_t>(i)], b.at(bIndex));
  }
  return r;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// x·Φ(x), Φ the standard normal distribution function.
double gelu(double x) { return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }

namespace {

// Calls f(row, n) with the first element's flat offset of every row along the last axis.
void forEachRow(const RefTensor& t, const std::function<void(size_t, int64_t)>& f) {
  if (t.shape.empty()) bad("a row operation on a 0-d tensor");
  const int64_t n = t.shape.back();
  if (n == 0) return;
  for (int64_t first = 0; first < t.numel(); first += n) f(static_cast<size_t>(first), n);
}

}  // namespace

RefTensor rmsNorm(const RefTensor& x, const RefTensor& w, double eps) {
  if (w.shape != std::vector<int64_t>{x.shape.back()}) bad("rms_norm weight shape");
  RefTensor y(x.shape);
  forEachRow(x, [&](size_t first, int64_t n) {
    double squares = 0;
    for (int64_t i = 0; i < n; ++i)
      squares += x.data[first + static_cast<size_t>(i)] * x.data[first + static_cast<size_t>(i)];
    const double rms = std::sqrt(squares / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
      y.data[first + static_cast<size_t>(i)] =
          x.data[first + static_cast<size_t>(i)] / rms * w.data[static_cast<size_t>(i)];
  });
  return y;
}

RefTensor softmax(const RefTensor& x) {
  RefTensor y(x.shape);
  forEachRow(x, [&](size_t first, int64_t n) {
    double max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) max = std::max(max, x.data[first + static_cast<size_t>(i)]);
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x.data[first + static_cast<size_t>(i)] - max);
    for (int64_t i = 0; i < n; ++i)
      y.data[first + static_cast<size_t>(i)] = std::exp(x.data[first + static_cast<size_t>(i)] - max) / sum;
  });
  return y;
}

RefTensor matmul(const RefTensor& a, const RefTensor& b, bool transA, bool transB) {
  if (a.shape.size() == 3) {
    if (b.shape.size() != 3 || a.shape[0] != b.shape[0]) bad("batched matmul shapes");
    // Batch entry i of t as a matrix.
    auto entry = [](const RefTensor& t, int64_t i) {
      RefTensor e = chunk(t, 0, i, t.shape[0]);
      e.shape.erase(e.shape.begin());
      return e;
    };
    std::vector<RefTensor> products;
    for (int64_t i = 0; i < a.shape[0]; ++i) {
      RefTensor p = matmul(entry(a, i), entry(b, i), transA, transB);
      p.shape.insert(p.shape.begin(), 1);
      products.push_back(p);
    }
    return concat(products, 0);
  }
  auto transposed = [](const RefTensor& t) {
    RefTensor r({t.shape[1], t.shape[0]});
    for (int64_t i = 0; i < t.shape[0]; ++i)
      for (int64_t j = 0; j < t.shape[1]; ++j) r.at({j, i}) = t.at({i, j});
    return r;
  };
  return matmul(transA ? transposed(a) : a, transB ? transposed(b) : b);
}

AttentionResult attention(const RefTensor& q, const RefTensor& k, const RefTensor& v, const AttentionSpec& spec) {
  const int64_t tq = q.shape[0], tk = k.shape[0], h = spec.heads, g = spec.kvHeads, d = q.shape[1] / h;
  if (q.shape[1] != h * d || k.shape != std::vector<int64_t>{tk, g * d} || v.shape != k.shape || h % g != 0)
    bad("attention shapes");
  AttentionResult r{RefTensor(q.shape), RefTensor({tq, h})};
  // Element c of head `head` in row i of a [rows, heads·d] tensor.
  auto at = [d](const RefTensor& t, int64_t i, int64_t head, int64_t c) {
    return t.data[static_cast<size_t>(i * t.shape[1] + head * d + c)];
  };
  for (int64_t head = 0; head < h; ++head) {
    const int64_t kvHead = head * g / h;
    for (int64_t i = 0; i < tq; ++i) {
      // Key row j is seen unless causal and its global position comes after the query's.
      std::vector<int64_t> seen;
      for (int64_t j = 0; j < tk; ++j)
        if (!spec.causal || spec.kOffset + j <= spec.qOffset + i) seen.push_back(j);
      if (seen.empty()) {
        r.lse.at({i, head}) = -INFINITY;  // and zeros in out
        continue;
      }
      std::vector<double> scores;
      for (int64_t j : seen) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c) dot += at(q, i, head, c) * at(k, j, kvHead, c);
        scores.push_back(dot / std::sqrt(static_cast<double>(d)));
      }
      const double max = *std::max_element(scores.begin(), scores.end());
      double sum = 0;
      for (double& score : scores) sum += (score = std::exp(score - max));  // the scores become weights
      for (int64_t c = 0; c < d; ++c) {
        double value = 0;
        for (size_t n = 0; n < seen.size(); ++n) value += scores[n] / sum * at(v, seen[n], kvHead, c);
        r.out.data[static_cast<size_t>(i * h * d + head * d + c)] = value;
      }
      r.lse.at({i, head}) = max + std::log(sum);
    }
  }
  return r;
}

void mergeAttention(RefTensor& o, RefTensor& lse, const RefTensor& part, const RefTensor& partLse) {
  if (part.shape != o.shape || partLse.shape != lse.shape) bad("merge_attention shapes");
  const int64_t heads = lse.shape[1], d = o.shape[1] / heads;
  for (int64_t r = 0; r < o.shape[0]; ++r)
    for (int64_t h = 0; h < heads; ++h) {
      const double a = lse.at({r, h}), b = partLse.at({r, h});
      if (b == -INFINITY) continue;
      if (a == -INFINITY) {
        for (int64_t c = 0; c < d; ++c) o.at({r, h * d + c}) = part.at({r, h * d + c});
        lse.at({r, h}) = b;
        continue;
      }
      const double ea = std::exp(a), eb = std::exp(b);  // the tests' lse values are small
      for (int64_t c = 0; c < d; ++c)
        o.at({r, h * d + c}) = (ea * o.at({r, h * d + c}) + eb * part.at({r, h * d + c})) / (ea + eb);
      lse.at({r, h}) = std::log(ea + eb);
    }
}

namespace {

// The row of `t` (its leading axis at `row`), as a flat offset and length.
std::pair<size_t, size_t> rowOf(const RefTensor& t, int64_t row) {
  const auto length = static_cast<size_t>(t.shape[0] ? t.numel() / t.shape[0] : 0);
  return {static_cast<size_t>(row) * length, length};
}

}  // namespace

RefTensor gatherRows(const RefTensor& x, const RefTensor& idx) {
  std::vector<int64_t> shape = idx.shape;
  shape.insert(shape.end(), x.shape.begin() + 1, x.shape.end());
  RefTensor y(shape);
  const size_t length = rowOf(x, 0).second;
  for (int64_t p = 0; p < idx.numel(); ++p) {
    const auto index = static_cast<int64_t>(idx.data[static_cast<size_t>(p)]);
    if (index == -1) continue;  // a zero row
    if (index < 0 || index >= x.shape[0]) bad(fmt::format("gather_rows: index {} out of range", index));
    for (size_t c = 0; c < length; ++c) y.data[static_cast<size_t>(p) * length + c] = x.data[rowOf(x, index).first + c];
  }
  return y;
}

void scatterAddRows(RefTensor& out, const RefTensor& src, const RefTensor& idx) {
  const size_t length = rowOf(out, 0).second;
  if (src.numel() != idx.numel() * static_cast<int64_t>(length)) bad("scatter_add_rows shapes");
  for (int64_t p = 0; p < idx.numel(); ++p) {
    const auto index = static_cast<int64_t>(idx.data[static_cast<size_t>(p)]);
    if (index == -1) continue;
    if (index < 0 || index >= out.shape[0]) bad(fmt::format("scatter_add_rows: index {} out of range", index));
    for (size_t c = 0; c < length; ++c)
      out.data[rowOf(out, index).first + c] += src.data[static_cast<size_t>(p) * length + c];
  }
}

double castTo(double v, DType dtype) {
  // Significant bits and the frexp exponent of the smallest normal number:
  // below it the spacing stays that of the subnormals.
  int bits = 0, minExponent = 0;
  double maxFinite = 0;
  switch (dtype) {
    case DType::F64: return v;
    case DType::F32: return static_cast<float>(v);  // the hardware rounds once, to nearest even
    case DType::F16: bits = 11, minExponent = -13, maxFinite = 65504; break;
    case DType::BF16: bits = 8, minExponent = -125, maxFinite = std::ldexp(255.0, 120); break;
    case DType::I32: bad("cast to i32");
  }
  if (!std::isfinite(v) || v == 0) return v;
  int exponent = 0;
  std::frexp(std::fabs(v), &exponent);
  const double spacing = std::ldexp(1.0, std::max(exponent, minExponent) - bits);
  const double rounded = std::nearbyint(std::fabs(v) / spacing) * spacing;  // ties to even
  const double magnitude = rounded > maxFinite ? INFINITY : rounded;
  return v < 0 ? -magnitude : magnitude;
}

namespace {

// [begin, end) of chunk `index` of `chunks` along an extent.
std::pair<int64_t, int64_t> chunkRange(int64_t extent, int64_t index, int64_t chunks) {
  if (chunks < 1 || index < 0 || index >= chunks) bad("chunk index");
  int64_t size = (extent + chunks - 1) / chunks;
  int64_t begin = std::min(extent, index * size);
  int64_t end = std::min(extent, begin + size);
  return {begin, end};
}

}  // namespace

RefTensor chunk(const RefTensor& t, int64_t axis, int64_t index, int64_t chunks) {
  if (axis < 0 || axis >= static_cast<int64_t>(t.shape.size())) bad("chunk axis");
  auto [begin, end] = chunkRange(t.shape[static_cast<size_t>(axis)], index, chunks);
  std::vector<int64_t> shape = t.shape;
  shape[static_cast<size_t>(axis)] = end - begin;
  RefTensor r(shape);
  for (int64_t i = 0; i < r.numel(); ++i) {
    std::vector<int64_t> idx = unflatten(i, shape);
    idx[static_cast<size_t>(axis)] += begin;
    r.data[static_cast<size_t>(i)] = t.at(idx);
  }
  return r;
}

void assignChunk(RefTensor& dst, int64_t axis, int64_t index, int64_t chunks, const RefTensor& src) {
  if (axis < 0 || axis >= static_cast<int64_t>(dst.shape.size())) bad("chunk axis");
  auto [begin, end] = chunkRange(dst.shape[static_cast<size_t>(axis)], index, chunks);
  std::vector<int64_t> shape = dst.shape;
  shape[static_cast<size_t>(axis)] = end - begin;
  if (src.shape != shape) bad("assignChunk shape " + shapeString(src.shape) + " into " + shapeString(shape));
  for (int64_t i = 0; i < src.numel(); ++i) {
    std::vector<int64_t> idx = unflatten(i, shape);
    idx[static_cast<size_t>(axis)] += begin;
    dst.at(idx) = src.data[static_cast<size_t>(i)];
  }
}

RefTensor shard(const RefTensor& global, int64_t axis, int64_t rank, int64_t world) {
  if (global.shape[static_cast<size_t>(axis)] % world != 0) bad("shard: extent does not divide");
  return chunk(global, axis, rank, world);
}

RefTensor concat(const std::vector<RefTensor>& parts, int64_t axis) {
  if (parts.empty()) bad("concat of nothing");
  std::vector<int64_t> shape = parts[0].shape;
  int64_t total = 0;
  for (const RefTensor& p : parts) {
    std::vector<int64_t> a = p.shape, b = shape;
    a[static_cast<size_t>(axis)] = b[static_cast<size_t>(axis)] = 0;
    if (a != b) bad("concat shapes");
    total += p.shape[static_cast<size_t>(axis)];
  }
  shape[static_cast<size_t>(axis)] = total;
  RefTensor r(shape);
  int64_t offset = 0;
  for (const RefTensor& p : parts) {
    for (int64_t i = 0; i < p.numel(); ++i) {
      std::vector<int64_t> idx = unflatten(i, p.shape);
      idx[static_cast<size_t>(axis)] += offset;
      r.at(idx) = p.data[static_cast<size_t>(i)];
    }
    offset += p.shape[static_cast<size_t>(axis)];
  }
  return r;
}

RefTensor reduce(const std::vector<RefTensor>& perRank, ReduceOp op) {
  if (perRank.empty()) bad("reduce over no ranks");
  RefTensor r = perRank[0];
  for (size_t k = 1; k < perRank.size(); ++k) {
    if (perRank[k].shape != r.shape) bad("reduce shapes");
    for (size_t i = 0; i < r.data.size(); ++i) {
      double a = r.data[i], b = perRank[k].data[i];
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: r.data[i] = a + b; break;
        case ReduceOp::Prod: r.data[i] = a * b; break;
        case ReduceOp::Min: r.data[i] = b < a ? b : a; break;
        case ReduceOp::Max: r.data[i] = b > a ? b : a; break;
      }
    }
  }
  if (op == ReduceOp::Avg)
    for (double& v : r.data) v /= static_cast<double>(perRank.size());
  return r;
}

RefTensor allgather(const std::vector<RefTensor>& perRank, int64_t axis) { return concat(perRank, axis); }

std::vector<RefTensor> reduceScatter(const std::vector<RefTensor>& perRank, int64_t axis, ReduceOp op) {
  RefTensor all = reduce(perRank, op);
  std::vector<RefTensor> out;
  int64_t world = static_cast<int64_t>(perRank.size());
  for (int64_t r = 0; r < world; ++r) out.push_back(shard(all, axis, r, world));
  return out;
}

std::vector<RefTensor> sendRecv(const std::vector<RefTensor>& perRank, const std::vector<int64_t>& to) {
  if (to.size() != perRank.size()) bad("sendRecv: one destination per rank");
  std::vector<RefTensor> received(perRank.size());
  std::vector<bool> filled(perRank.size(), false);
  for (size_t r = 0; r < perRank.size(); ++r) {
    if (to[r] < 0 || static_cast<size_t>(to[r]) >= perRank.size() || filled[static_cast<size_t>(to[r])])
      bad(fmt::format("sendRecv: destinations are not a permutation (rank {} sends to {})", r, to[r]));
    received[static_cast<size_t>(to[r])] = perRank[r];
    filled[static_cast<size_t>(to[r])] = true;
  }
  return received;
}

const std::vector<std::string>& knownExamples() {
  static const std::vector<std::string> names = {"all_gather",
                                                 "broadcast",
                                                 "events",
                                                 "parallel_block",
                                                 "pipeline_handles",
                                                 "pipeline_with_blocks",
                                                 "reduce_scatter",
                                                 "ring_all_gather_linear",
                                                 "ring_all_gather_linear_overlapped",
                                                 "ring_bidirectional",
                                                 "ring_bidirectional_overlapped",
                                                 "ring_reduce_scatter",
                                                 "ring_reduce_scatter_overlapped",
                                                 "row_parallel_linear",
                                                 "sequence_parallel_mlp"};
  return names;
}

std::map<std::string, RefTensor> exampleReference(const std::string& program,
                                                  const std::map<std::string, RefTensor>& in) {
  auto get = [&](const std::string& name) -> const RefTensor& {
    auto it = in.find(name);
    if (it == in.end()) bad(fmt::format("example '{}' has no input '{}'", program, name));
    return it->second;
  };
  // The ring forms compute the same products as the collectives they decompose.
  const std::set<std::string> linears = {"row_parallel_linear",
                                         "all_gather",
                                         "broadcast",
                                         "pipeline_handles",
                                         "ring_all_gather_linear",
                                         "ring_all_gather_linear_overlapped",
                                         "ring_bidirectional",
                                         "ring_bidirectional_overlapped"};
  if (linears.count(program)) return {{"y", linear(get("x"), get("w"))}};
  if (program == "reduce_scatter" || program == "ring_reduce_scatter" || program == "ring_reduce_scatter_overlapped")
    return {{"y", matmul(get("x"), get("w"))}};
  if (program == "events" || program == "pipeline_with_blocks" || program == "sequence_parallel_mlp")
    return {{"y", linear(linear(get("x"), get("w1")), get("w2"))}};
  if (program == "parallel_block")
    return {{"y", add(linear(linear(get("x"), get("wa")), get("wo")), linear(linear(get("x"), get("w1")), get("w2")))}};
  bad(fmt::format("no reference for example '{}'", program));
}

double tolerance(DType dtype) {
  switch (dtype) {
    case DType::F64: return 1e-10;
    case DType::F32: return 2e-5;
    case DType::F16: return 5e-3;
    case DType::BF16: return 3e-2;
    case DType::I32: return 0;  // indices: exact
  }
  return 0;
}

namespace {

std::string indexString(int64_t flat, const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(unflatten(flat, shape), ", "));
}

}  // namespace

Match compare(const std::string& name, const HostTensor& actual, DType dtype, const RefTensor& expected) {
  Match m;
  if (actual.dtype != dtype) {
    m.ok = false;
    m.message = fmt::format("'{}' is {}, expected {}", name, dtypeName(actual.dtype), dtypeName(dtype));
    return m;
  }
  if (actual.shape != expected.shape) {
    m.ok = false;
    m.message =
        fmt::format("'{}' has shape {}, expected {}", name, shapeString(actual.shape), shapeString(expected.shape));
    return m;
  }
  RefTensor got = toRef(actual);
  // The scale of the finite expected values (an lse of -inf must not make every tolerance inf).
  double sumSquares = 0;
  int64_t finite = 0;
  for (double v : expected.data)
    if (std::isfinite(v)) {
      sumSquares += v * v;
      ++finite;
    }
  double rms = finite ? std::sqrt(sumSquares / static_cast<double>(finite)) : 0.0;
  double tol = tolerance(dtype);
  int64_t worst = -1;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double a = got.data[static_cast<size_t>(i)], e = expected.data[static_cast<size_t>(i)];
    double allowed = tol * (std::abs(e) + rms);
    double ratio;
    if (a == e || (std::isnan(a) && std::isnan(e)))
      ratio = 0;  // also equal infinities, and NaN where NaN is expected
    else if (!std::isfinite(a) || !std::isfinite(e))
      ratio = INFINITY;
    else
      ratio = allowed > 0 ? std::abs(a - e) / allowed : INFINITY;
    if (std::isnan(ratio)) ratio = INFINITY;
    if (worst < 0 || ratio > m.worstRatio) {
      m.worstRatio = ratio;
      worst = i;
    }
  }
  if (m.worstRatio > 1.0) {
    m.ok = false;
    m.message = fmt::format(
        "'{}' {}: worst element {} is {:.10g}, expected {:.10g} ({:.3g} x the {} tolerance {} "
        "relative to |expected| + rms {:.4g})",
        name, shapeString(expected.shape), indexString(worst, expected.shape), got.data[static_cast<size_t>(worst)],
        expected.data[static_cast<size_t>(worst)], m.worstRatio, dtypeName(dtype), tol, rms);
  } else {
    m.message =
        fmt::format("'{}' matches ({} elements, worst {:.3g} of the tolerance)", name, expected.numel(), m.worstRatio);
  }
  return m;
}

Match identical(const std::string& name, const HostTensor& a, const HostTensor& b) {
  Match m;
  if (a.dtype != b.dtype || a.shape != b.shape || a.data.size() != b.data.size()) {
    m.ok = false;
    m.message = fmt::format("'{}': {}{} vs {}{}", name, dtypeName(a.dtype), shapeString(a.shape), dtypeName(b.dtype),
                            shapeString(b.shape));
    return m;
  }
  size_t size = dtypeSize(a.dtype);
  for (size_t i = 0; i < a.data.size() / size; ++i) {
    if (std::memcmp(a.data.data() + i * size, b.data.data() + i * size, size) != 0) {
      m.ok = false;
      m.worstRatio = INFINITY;
      m.message =
          fmt::format("'{}' differs at {}: {:.10g} vs {:.10g}", name, indexString(static_cast<int64_t>(i), a.shape),
                      decode(a.dtype, a.data.data() + i * size), decode(b.dtype, b.data.data() + i * size));
      return m;
    }
  }
  m.message = fmt::format("'{}' is bit-identical", name);
  return m;
}

}  // namespace hostir::reftest
