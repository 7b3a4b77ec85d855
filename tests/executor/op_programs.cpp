#include "op_programs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>

namespace hostir::reftest {

const std::vector<ReduceOp> kOps = {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max, ReduceOp::Avg};
const std::vector<DType> kDTypes = {DType::F32, DType::F64, DType::F16, DType::BF16};

std::string opName(ReduceOp op) { return std::string(reduceOpName(op)); }

namespace {

// allreduce with every op, in place and with out=, without op= and without
// a handle, and on strided views (in place, and from one view into another).
std::string allreduceProgram() {
  std::string s = "program allreduce_ops(M = 12, N = 6) {\n  input x : $T[M, N] shard(0)\n";
  for (ReduceOp op : kOps)
    s += "  output a_" + opName(op) + " : $T[M, N] shard(0)\n  output b_" + opName(op) + " : $T[M, N] shard(0)\n";
  s += "  output dflt : $T[M, N] shard(0)\n  output sin : $T[M, N] shard(0)\n  output sout : $T[M, N] shard(0)\n";
  for (ReduceOp op : kOps) {
    std::string n = opName(op);
    s += "  a_" + n + " = copy(x)\n  ha_" + n + " = allreduce(a_" + n + ", op=" + n + ")\n  wait(ha_" + n + ")\n";
    s += "  b_" + n + " = allocate($T[M / world, N])\n  hb_" + n + " = allreduce(x, out=b_" + n + ", op=" + n +
         ")\n  wait(hb_" + n + ")\n";
  }
  s += R"hir(  dflt = copy(x)
  allreduce(dflt)
  sin = copy(x)
  sv = shard_by_stream(sin, axis=1, index=0, chunks=2)
  hs = allreduce(sv, op=max)
  wait(hs)
  sout = allocate($T[M / world, N], zero=true)
  so = shard_by_stream(sout, axis=1, index=1, chunks=2)
  xs = shard_by_stream(x, axis=1, index=1, chunks=2)
  ho = allreduce(xs, out=so, op=min)
  wait(ho)
}
)hir";
  return s;
}

// allgather and reduce_scatter along axes 0 and 1 (and 2 of a 3-d tensor),
// with the default axis and op, every op, and strided inputs and outputs.
std::string gatherScatterProgram() {
  std::string s = R"hir(program gather_scatter(M = 12, N = 12, A = 2, B = 3, C = 12) {
  input  x  : $T[M, N] shard(0)
  input  z  : $T[M, N] shard(1)
  input  p  : $T[M * world, N] shard(0)
  input  q  : $T[M, N * world] shard(1)
  input  t3 : $T[A, B, C] shard(2)
  output g0 : $T[M, N]
  output g1 : $T[M, N]
  output gd : $T[M, N]
  output gs : $T[M, N]
  output g3 : $T[A, B, C]
  output rd : $T[M, N] shard(0)
  output rs : $T[M, N] shard(0)
)hir";
  for (ReduceOp op : kOps)
    s += "  output r0_" + opName(op) + " : $T[M, N] shard(0)\n  output r1_" + opName(op) + " : $T[M, N] shard(1)\n";
  s += R"hir(  g0 = allocate($T[M, N])
  hg0 = allgather(x, out=g0, axis=0)
  wait(hg0)
  g1 = allocate($T[M, N])
  hg1 = allgather(z, out=g1, axis=1)
  wait(hg1)
  gd = allocate($T[M, N])
  allgather(x, out=gd)
  gs = allocate($T[M, N], zero=true)
  xs = shard_by_stream(x, axis=1, index=1, chunks=2)
  gss = shard_by_stream(gs, axis=1, index=1, chunks=2)
  hgs = allgather(xs, out=gss, axis=0)
  wait(hgs)
  g3 = allocate($T[A, B, C])
  hg3 = allgather(t3, out=g3, axis=2)
  wait(hg3)
  rd = allocate($T[M / world, N])
  reduce_scatter(p, out=rd)
  rs = allocate($T[M / world, N], zero=true)
  ps = shard_by_stream(p, axis=1, index=0, chunks=2)
  rss = shard_by_stream(rs, axis=1, index=0, chunks=2)
  hrs = reduce_scatter(ps, out=rss, axis=0, op=max)
  wait(hrs)
)hir";
  for (ReduceOp op : kOps) {
    std::string n = opName(op);
    s += "  r0_" + n + " = allocate($T[M / world, N])\n  h0_" + n + " = reduce_scatter(p, out=r0_" + n +
         ", axis=0, op=" + n + ")\n  wait(h0_" + n + ")\n";
    s += "  r1_" + n + " = allocate($T[M, N / world])\n  h1_" + n + " = reduce_scatter(q, out=r1_" + n +
         ", axis=1, op=" + n + ")\n  wait(h1_" + n + ")\n";
  }
  s += "}\n";
  return s;
}

}  // namespace

std::vector<RefTensor> shards(const RefTensor& global, int64_t axis, int64_t world) {
  std::vector<RefTensor> out;
  for (int64_t r = 0; r < world; ++r) out.push_back(shard(global, axis, r, world));
  return out;
}

// The global tensor of an output sharded along `axis` whose every rank holds `local`.
RefTensor replicated(const RefTensor& local, int64_t axis, int64_t world) {
  return concat(std::vector<RefTensor>(static_cast<size_t>(world), local), axis);
}

RefTensor scaled(const RefTensor& t, double f) {
  return map(t, [f](double v) { return v * f; });
}

// Small integers in [-3, 3]: every sum, product, min and max of them that
// the tests compute is exact in every dtype.
HostTensor integers(DType dtype, std::vector<int64_t> shape, int salt) {
  RefTensor t(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data[static_cast<size_t>(i)] = static_cast<double>((i * 5 + salt * 3) % 7 - 3);
  return toHost(t, dtype);
}

namespace {

Outputs viewsReference(const Inputs& in, const Params& p, int64_t) {
  int64_t S = p.at("S");
  const RefTensor& u = in.at("u");
  RefTensor v(u.shape);
  for (int64_t i = 0; i < S; ++i) {
    RefTensor vj = chunk(v, 1, i, S);
    assignChunk(vj, 2, 1, 2, chunk(chunk(u, 1, i, S), 2, 1, 2));
    assignChunk(v, 1, i, S, vj);
  }
  return {{"y", in.at("x")}, {"z", scaled(in.at("x"), 2)}, {"v", v}};
}

Outputs gemmsReference(const Inputs& in, const Params&, int64_t world) {
  const RefTensor &x = in.at("x"), &w = in.at("w"), &b = in.at("b"), &v = in.at("v"), &x3 = in.at("x3");
  std::vector<RefTensor> y7;
  for (const RefTensor& x3r : shards(x3, 1, world)) {
    std::vector<int64_t> shape = x3r.shape;
    shape[2] = w.shape[0];
    RefTensor y7r(shape);
    assignChunk(y7r, 1, 1, 2, linear(chunk(x3r, 1, 1, 2), w));
    y7.push_back(y7r);
  }
  RefTensor y12({x.shape[0], w.shape[0]});
  assignChunk(y12, 1, 1, 2, matmul(x, chunk(v, 1, 0, 2)));
  RefTensor y8;
  {
    std::vector<RefTensor> parts;
    for (const RefTensor& xr : shards(x, 0, world)) parts.push_back(matmul(chunk(xr, 1, 1, 2), chunk(v, 0, 1, 2)));
    y8 = concat(parts, 0);
  }
  return {{"y1", linear(x, w)},
          {"y2", linear(x, w, &b)},
          {"y3", matmul(x, v)},
          {"y4", add(linear(x, w), matmul(x, v))},
          {"y5", x},
          {"y6", linear(x3, w, &b)},
          {"y7", concat(y7, 1)},
          {"y8", y8},
          {"y9", linear(in.at("q"), w)},
          {"y10", linear(chunk(x, 1, 1, 2), chunk(w, 1, 1, 2), &b)},
          {"y11", matmul(x, chunk(v, 1, 0, 2))},
          {"y12", y12},
          {"y13", add(chunk(x, 1, 0, 2), chunk(x, 1, 1, 2))}};
}

Outputs allreduceReference(const Inputs& in, const Params&, int64_t world) {
  std::vector<RefTensor> xr = shards(in.at("x"), 0, world);
  Outputs out;
  for (ReduceOp op : kOps) {
    RefTensor all = replicated(reduce(xr, op), 0, world);
    out["a_" + opName(op)] = all;
    out["b_" + opName(op)] = all;
  }
  out["dflt"] = replicated(reduce(xr, ReduceOp::Sum), 0, world);
  std::vector<RefTensor> firstColumns, secondColumns;
  for (const RefTensor& t : xr) {
    firstColumns.push_back(chunk(t, 1, 0, 2));
    secondColumns.push_back(chunk(t, 1, 1, 2));
  }
  RefTensor maxFirst = reduce(firstColumns, ReduceOp::Max), minSecond = reduce(secondColumns, ReduceOp::Min);
  std::vector<RefTensor> sin, sout;
  for (const RefTensor& t : xr) {
    RefTensor a = t;
    assignChunk(a, 1, 0, 2, maxFirst);
    sin.push_back(a);
    RefTensor b(t.shape);
    assignChunk(b, 1, 1, 2, minSecond);
    sout.push_back(b);
  }
  out["sin"] = concat(sin, 0);
  out["sout"] = concat(sout, 0);
  return out;
}

Outputs gatherScatterReference(const Inputs& in, const Params&, int64_t world) {
  const RefTensor &x = in.at("x"), &p = in.at("p"), &q = in.at("q");
  Outputs out;
  out["g0"] = allgather(shards(x, 0, world), 0);
  out["g1"] = allgather(shards(in.at("z"), 1, world), 1);
  out["gd"] = x;
  RefTensor gs(x.shape);
  std::vector<RefTensor> columns;
  for (const RefTensor& xr : shards(x, 0, world)) columns.push_back(chunk(xr, 1, 1, 2));
  assignChunk(gs, 1, 1, 2, allgather(columns, 0));
  out["gs"] = gs;
  out["g3"] = allgather(shards(in.at("t3"), 2, world), 2);
  std::vector<RefTensor> pr = shards(p, 0, world), qr = shards(q, 1, world);
  out["rd"] = concat(reduceScatter(pr, 0, ReduceOp::Sum), 0);
  std::vector<RefTensor> firstColumns;
  for (const RefTensor& t : pr) firstColumns.push_back(chunk(t, 1, 0, 2));
  std::vector<RefTensor> rs;
  for (const RefTensor& part : reduceScatter(firstColumns, 0, ReduceOp::Max)) {
    RefTensor local({part.shape[0], x.shape[1]});
    assignChunk(local, 1, 0, 2, part);
    rs.push_back(local);
  }
  out["rs"] = concat(rs, 0);
  for (ReduceOp op : kOps) {
    out["r0_" + opName(op)] = concat(reduceScatter(pr, 0, op), 0);
    out["r1_" + opName(op)] = concat(reduceScatter(qr, 1, op), 1);
  }
  return out;
}

Outputs allocZeroReference(const Inputs& in, const Params&, int64_t world) {
  std::vector<RefTensor> y;
  for (const RefTensor& xr : shards(in.at("x"), 0, world)) {
    RefTensor yr(xr.shape);
    assignChunk(yr, 0, 0, 2, chunk(xr, 0, 0, 2));
    y.push_back(yr);
  }
  return Outputs{{"y", concat(y, 0)}, {"z", in.at("x")}, {"v", in.at("x")}};
}

Outputs bcastReference(const Inputs& in, const Params& p, int64_t world) {
  int64_t S = p.at("S");
  std::vector<RefTensor> xr = shards(in.at("x"), 0, world);
  RefTensor y(xr[0].shape);
  for (int64_t i = 0; i < S; ++i) assignChunk(y, 0, i, S, chunk(xr[static_cast<size_t>((i * 3 + 1) % world)], 0, i, S));
  std::vector<RefTensor> z;
  for (const RefTensor& t : xr) {
    RefTensor zr = t;
    assignChunk(zr, 1, 1, 2, chunk(xr.back(), 1, 1, 2));
    z.push_back(zr);
  }
  return Outputs{{"y", replicated(y, 0, world)}, {"z", concat(z, 0)}};
}

Outputs sendRecvReference(const Inputs& in, const Params& p, int64_t world) {
  const int64_t S = p.at("S"), K = p.at("K");
  std::vector<RefTensor> xr = shards(in.at("x"), 0, world);
  auto shiftedBy = [&](int64_t k) {
    std::vector<int64_t> to;
    for (int64_t r = 0; r < world; ++r) to.push_back((r + k) % world);
    return to;
  };
  std::vector<RefTensor> strided(xr.size(), RefTensor(xr[0].shape)), uneven = strided;
  for (int64_t i = 0; i < S; ++i) {
    std::vector<RefTensor> columns;
    for (const RefTensor& t : xr) columns.push_back(chunk(t, 1, i, S));
    std::vector<RefTensor> got = sendRecv(columns, shiftedBy(i + 1));
    for (size_t q = 0; q < got.size(); ++q) assignChunk(strided[q], 1, (i + 1) % S, S, got[q]);
  }
  std::vector<RefTensor> blocks;
  for (int64_t r = 0; r < world; ++r) blocks.push_back(chunk(xr[static_cast<size_t>(r)], 1, 0, r + 1));
  std::vector<RefTensor> got = sendRecv(blocks, shiftedBy(1));
  for (size_t q = 0; q < got.size(); ++q)
    for (int64_t row = 0; row < got[q].shape[0]; ++row)
      for (int64_t col = 0; col < got[q].shape[1]; ++col) uneven[q].at({row, col}) = got[q].at({row, col});
  RefTensor ring = concat(sendRecv(xr, shiftedBy(1)), 0);
  return Outputs{{"ring", ring},
                 {"shift", concat(sendRecv(xr, shiftedBy(K)), 0)},
                 {"self", in.at("x")},
                 {"inplace", ring},
                 {"strided", concat(strided, 0)},
                 {"uneven", concat(uneven, 0)}};
}

Outputs streamsEventsReference(const Inputs& in, const Params&, int64_t world) {
  std::vector<RefTensor> y, twice;
  for (const RefTensor& xr : shards(in.at("x"), 0, world)) {
    y.push_back(linear(xr, in.at("w")));
    twice.push_back(scaled(y.back(), 2));
  }
  RefTensor z = reduce(twice, ReduceOp::Sum);
  std::vector<RefTensor> u;
  for (const RefTensor& yr : y) u.push_back(add(z, yr));
  return Outputs{{"y", concat(y, 0)}, {"z", replicated(z, 0, world)}, {"u", concat(u, 0)}};
}

Outputs intsReference(const Inputs& in, const Params& p, int64_t) {
  int64_t S = p.at("S");
  const RefTensor& x = in.at("x");
  int64_t times = 1 + std::max<int64_t>(S, 3) - std::min<int64_t>(S, 2);
  RefTensor a = x;
  for (int64_t j = 1; j < times; ++j) a = add(a, x);
  RefTensor y(x.shape), b(x.shape);
  for (int64_t i = 0; i < S; ++i) assignChunk(y, 0, i, S, chunk(x, 0, S - 1 - i, S));
  for (int64_t n = 0; n < (S + 1) / 2; ++n) assignChunk(b, 0, (2 * n) % S, S, chunk(x, 0, (2 * n) % S, S));
  return Outputs{{"t", chunk(x, 0, 0, S)}, {"a", a}, {"y", y}, {"b", b}};
}

Outputs inplaceCollReference(const Inputs& in, const Params&, int64_t world) {
  return Outputs{{"g", in.at("x")},
                 {"gc", in.at("z")},
                 {"r", concat(reduceScatter(shards(in.at("p"), 0, world), 0, ReduceOp::Sum), 0)}};
}

Outputs viewOutReference(const Inputs& in, const Params&, int64_t) {
  return Outputs{{"y", chunk(in.at("x"), 1, 1, 2)}, {"v", chunk(in.at("x"), 1, 0, 2)}};
}

Outputs coll3dReference(const Inputs& in, const Params&, int64_t world) {
  std::vector<RefTensor> ur = shards(in.at("u"), 2, world);
  std::vector<RefTensor> middles;
  for (const RefTensor& t : ur) middles.push_back(chunk(t, 1, 1, 3));
  RefTensor summed = reduce(middles, ReduceOp::Sum);
  std::vector<RefTensor> s;
  for (RefTensor t : ur) {
    assignChunk(t, 1, 1, 3, summed);
    s.push_back(t);
  }
  return Outputs{{"g", in.at("u")},
                 {"s", concat(s, 2)},
                 {"r", concat(reduceScatter(shards(in.at("v"), 1, world), 2, ReduceOp::Max), 2)}};
}

// Rows 3:5 of `t`'s columns 0:2, written into rows 4:6 by `f` of the old values.
RefTensor shiftedRows(RefTensor t, const std::function<double(double)>& f) {
  const RefTensor old = t;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 2; ++c) t.at({4 + r, c}) = f(old.at({3 + r, c}));
  return t;
}

Outputs overlappingOperandsReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor& b = in.at("b");
  const RefTensor& u = in.at("u");
  return Outputs{{"added", shiftedRows(in.at("x"), [](double e) { return e + e; })},
                 {"copied", shiftedRows(in.at("x"), [](double e) { return e; })},
                 {"doubled", add(in.at("x"), in.at("x"))},
                 {"product", matmul(in.at("a"), b)},
                 {"gram", linear(b, b)},
                 {"biased", linear(in.at("v"), in.at("w"), &u)}};
}

// all_to_all, written out: rank q receives, as its part j along `axis`,
// part q of rank j's tensor.
std::vector<RefTensor> allToAll(const std::vector<RefTensor>& perRank, int64_t axis) {
  const int64_t world = static_cast<int64_t>(perRank.size());
  std::vector<RefTensor> received;
  for (int64_t q = 0; q < world; ++q) {
    std::vector<RefTensor> parts;
    for (const RefTensor& sent : perRank) parts.push_back(chunk(sent, axis, q, world));
    received.push_back(concat(parts, axis));
  }
  return received;
}

Outputs allToAllReference(const Inputs& in, const Params& p, int64_t world) {
  const int64_t S = p.at("S");
  std::vector<RefTensor> xr = shards(in.at("x"), 0, world);
  std::vector<RefTensor> strided;
  for (const RefTensor& t : xr) strided.emplace_back(t.shape);
  for (int64_t i = 0; i < S; ++i) {
    std::vector<RefTensor> columns;
    for (const RefTensor& t : xr) columns.push_back(chunk(t, 1, i, S));
    std::vector<RefTensor> got = allToAll(columns, 0);
    for (size_t q = 0; q < got.size(); ++q) assignChunk(strided[q], 1, i, S, got[q]);
  }
  return Outputs{{"y", concat(allToAll(xr, 0), 0)},
                 {"c", concat(allToAll(shards(in.at("z"), 0, world), 1), 0)},
                 {"b", concat(allToAll(allToAll(xr, 0), 0), 0)},
                 {"s", concat(strided, 0)}};
}

// ---- the computations of section 3 ------------------------------------------------

double relu(double x) { return x < 0 ? 0.0 : x; }

Outputs elementwiseReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &a = in.at("a"), &row = in.at("row");
  auto plus = [](double x, double y) { return x + y; };
  auto minus = [](double x, double y) { return x - y; };
  auto times = [](double x, double y) { return x * y; };
  return Outputs{{"sum", broadcast(a, row, plus)},
                 {"diff", broadcast(a, in.at("col"), minus)},
                 {"prod", broadcast(a, in.at("top"), times)},
                 {"scaled", scaled(a, -0.375)},
                 {"rectified", map(a, relu)},
                 {"swished", map(a, silu)},
                 {"gelus", map(a, gelu)},
                 {"inplace", broadcast(broadcast(a, in.at("s"), times), row, times)},
                 {"strided", broadcast(a, row, times)}};
}

// Each operation as an f64 loop; log, sqrt and rsqrt of the exact e^a,
// which the program holds rounded to its dtype (within the tolerance).
Outputs unaryMathReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor& a = in.at("a");
  const RefTensor e = map(a, [](double x) { return std::exp(x); });
  return Outputs{{"e", e},
                 {"l", a},
                 {"r", map(e, [](double x) { return std::sqrt(x); })},
                 {"q", map(e, [](double x) { return 1 / std::sqrt(x); })},
                 {"g", map(a, [](double x) { return 1 / (1 + std::exp(-x)); })},
                 {"t", map(a, [](double x) { return std::tanh(x); })},
                 {"s", map(a, [](double x) { return std::sin(x); })},
                 {"c", map(a, [](double x) { return std::cos(x); })},
                 {"b", map(a, [](double x) { return std::fabs(x); })},
                 {"n", map(a, [](double x) { return -x; })}};
}

// Each operation as an f64 loop, b broadcast by NumPy's rule; div by the
// exact e^row, which the program holds rounded to its dtype (within the
// tolerance). The comparisons read the inputs as given: exact.
Outputs binaryMathReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &a = in.at("a"), &row = in.at("row"), &col = in.at("col"), &top = in.at("top");
  auto truth = [](bool t) { return t ? 1.0 : 0.0; };
  return Outputs{
      {"q", broadcast(a, map(row, [](double x) { return std::exp(x); }), [](double x, double y) { return x / y; })},
      {"mx", broadcast(a, col, [](double x, double y) { return std::max(x, y); })},
      {"mn", broadcast(a, top, [](double x, double y) { return std::min(x, y); })},
      {"gt_row", broadcast(a, row, [&](double x, double y) { return truth(x > y); })},
      {"ge_self", map(a, [](double) { return 1.0; })},
      {"lt_col", broadcast(a, col, [&](double x, double y) { return truth(x < y); })},
      {"le_top", broadcast(a, top, [&](double x, double y) { return truth(x <= y); })},
      {"eq_copy", map(a, [](double) { return 1.0; })},
      {"ne_row", broadcast(a, row, [&](double x, double y) { return truth(x != y); })}};
}

// `f` folded over `axis` (taken out of the result), starting from `start`.
RefTensor reduceAxis(const RefTensor& x, size_t axis, double start, const std::function<double(double, double)>& f) {
  std::vector<int64_t> shape = x.shape;
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
  RefTensor out(shape, start);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> index = unflatten(i, x.shape);
    index.erase(index.begin() + static_cast<std::ptrdiff_t>(axis));
    out.at(index) = f(out.at(index), x.data[static_cast<size_t>(i)]);
  }
  return out;
}

// The running sum of x along `axis` (x's shape), in f64.
RefTensor cumsumAxis(const RefTensor& x, size_t axis) {
  RefTensor out = x;
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> index = unflatten(i, x.shape);
    if (index[axis] == 0) continue;
    --index[axis];
    out.data[static_cast<size_t>(i)] += out.at(index);
  }
  return out;
}

// Each row: (x - mean) / sqrt(var + eps) * w + bias.
RefTensor layerNorm(const RefTensor& x, const RefTensor& w, const RefTensor& bias, double eps) {
  const int64_t n = x.shape.back();
  RefTensor out = x;
  for (int64_t row = 0; row < x.numel() / n; ++row) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mean += x.data[static_cast<size_t>(row * n + j)] / static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) {
      const double d = x.data[static_cast<size_t>(row * n + j)] - mean;
      var += d * d / static_cast<double>(n);
    }
    for (int64_t j = 0; j < n; ++j) {
      double& v = out.data[static_cast<size_t>(row * n + j)];
      v = (v - mean) / std::sqrt(var + eps) * w.data[static_cast<size_t>(j)] + bias.data[static_cast<size_t>(j)];
    }
  }
  return out;
}

// Rotate-half RoPE on x [T, H·D]: row i at position `first` + i.
RefTensor rope(const RefTensor& x, int64_t heads, int64_t first, double theta) {
  const int64_t width = x.shape[1], d = width / heads;
  RefTensor out = x;
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < d / 2; ++j) {
        const double angle = static_cast<double>(first + i) * std::pow(theta, -2.0 * static_cast<double>(j) / d);
        const double a = x.at({i, h * d + j}), b = x.at({i, h * d + j + d / 2});
        out.at({i, h * d + j}) = a * std::cos(angle) - b * std::sin(angle);
        out.at({i, h * d + j + d / 2}) = b * std::cos(angle) + a * std::sin(angle);
      }
  return out;
}

Outputs layerOpsReference(const Inputs& in, const Params& p, int64_t world) {
  const RefTensor &a = in.at("a"), &x3 = in.at("x3"), &b = in.at("b"), &w = in.at("w"), &bias = in.at("bias");
  const int64_t M = p.at("M"), N = p.at("N");
  const auto larger = [](double x, double y) { return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y); };
  const auto plus = [](double x, double y) { return x + y; };
  const double lowest = -std::numeric_limits<double>::infinity();
  RefTensor masked = a, columns({M, N}), rows({M, N});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      if (!(w.data[static_cast<size_t>(j)] > b.data[static_cast<size_t>(j)])) masked.at({i, j}) = bias.at({j});
      columns.at({i, j}) = static_cast<double>(j);
      rows.at({i, j}) = static_cast<double>(i % (M / world));
    }
  RefTensor flat = a;
  flat.shape = {M * N};
  RefTensor flipped({N, M}), swapped({2, N, M});
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      flipped.at({j, i}) = a.at({i, j});
      for (int64_t h = 0; h < 2; ++h) swapped.at({h, j, i}) = x3.at({h, i, j});
    }
  return Outputs{{"picked", broadcast(a, b, [](double x, double y) { return x > y ? x : y; })},
                 {"masked", masked},
                 {"row_sum", reduceAxis(a, 1, 0.0, plus)},
                 {"row_mean", map(reduceAxis(a, 1, 0.0, plus), [N](double s) { return s / static_cast<double>(N); })},
                 {"row_max", reduceAxis(a, 1, lowest, larger)},
                 {"first_sum", reduceAxis(x3, 0, 0.0, plus)},
                 {"first_max", reduceAxis(x3, 0, lowest, larger)},
                 {"row_cumsum", cumsumAxis(a, 1)},
                 {"first_cumsum", cumsumAxis(x3, 0)},
                 {"normed", layerNorm(a, w, bias, kDefaultLayerNormEps)},
                 {"rotated", rope(a, p.at("H"), 3, 500.0)},
                 {"filled", RefTensor({M, N}, 0.5)},
                 {"columns", columns},
                 {"local_rows", rows},
                 {"flat", flat},
                 {"flipped", flipped},
                 {"swapped", swapped}};
}

// Row e: the row-major positions of the entries equal to e, at most
// `capacity` of them, then -1.
RefTensor bucketOf(const RefTensor& idx, int64_t buckets, int64_t capacity) {
  RefTensor out({buckets, capacity}, -1.0);
  std::vector<int64_t> filled(static_cast<size_t>(buckets), 0);
  for (int64_t p = 0; p < idx.numel(); ++p) {
    const auto e = static_cast<int64_t>(idx.data[static_cast<size_t>(p)]);
    if (e >= 0 && e < buckets && filled[static_cast<size_t>(e)] < capacity)
      out.at({e, filled[static_cast<size_t>(e)]++}) = static_cast<double>(p);
  }
  return out;
}

// Each row's k largest (ties to the lower position), and their positions.
std::pair<RefTensor, RefTensor> topK(const RefTensor& x, int64_t k) {
  const int64_t n = x.shape.back(), rows = x.numel() / n;
  std::vector<int64_t> shape = x.shape;
  shape.back() = k;
  RefTensor values(shape), positions(shape);
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    auto at = [&](int64_t i) { return x.data[static_cast<size_t>(r * n + i)]; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return at(a) > at(b); });
    for (int64_t j = 0; j < k; ++j) {
      values.data[static_cast<size_t>(r * k + j)] = at(order[static_cast<size_t>(j)]);
      positions.data[static_cast<size_t>(r * k + j)] = static_cast<double>(order[static_cast<size_t>(j)]);
    }
  }
  return {values, positions};
}

Outputs routingReference(const Inputs& in, const Params& p, int64_t) {
  const RefTensor& choice = in.at("choice");
  const int64_t T = p.at("T"), K = p.at("K"), E = p.at("E");
  auto [top, picked] = topK(in.at("scores"), 2);
  const RefTensor weights = softmax(top);
  return Outputs{{"top", top},
                 {"picked", picked},
                 {"weights", weights},
                 {"shares", weights},
                 {"routed", bucketOf(picked, E, T)},
                 {"tight", bucketOf(choice, E, 2)},
                 {"roomy", bucketOf(choice, E, T * K)},
                 {"flat", bucketOf(chunk(choice, 0, 0, 2), E, 3)}};
}

Outputs rowsReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &x = in.at("x"), &w = in.at("w");
  RefTensor half(x.shape);
  const RefTensor right = chunk(x, 1, 1, 2);
  assignChunk(half, 1, 1, 2, rmsNorm(right, chunk(w, 0, 1, 2), kDefaultRmsNormEps));
  assignChunk(half, 1, 0, 2, softmax(right));
  return Outputs{{"normed", rmsNorm(x, w, kDefaultRmsNormEps)},
                 {"normed_eps", rmsNorm(x, w, 0.5)},
                 {"probs", softmax(x)},
                 {"probs3", softmax(in.at("x3"))},
                 {"half", half},
                 {"inplace", softmax(x)}};
}

Outputs wideRowsReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &x = in.at("x"), &w = in.at("w"), &bias = in.at("bias");
  RefTensor half(x.shape);
  const RefTensor right = chunk(x, 1, 1, 2);
  assignChunk(half, 1, 1, 2, layerNorm(right, chunk(w, 0, 1, 2), chunk(bias, 0, 1, 2), kDefaultLayerNormEps));
  assignChunk(half, 1, 0, 2, rope(right, 2, 7, 10000.0));
  return Outputs{{"normed", layerNorm(x, w, bias, kDefaultLayerNormEps)},
                 {"normed_inplace", layerNorm(x, w, bias, kDefaultLayerNormEps)},
                 {"rotated", rope(x, 4, 5, 10000.0)},
                 {"rotated_one", rope(x, 1, 1000, 500.0)},
                 {"rotated_inplace", rope(x, 4, 5, 10000.0)},
                 {"half", half}};
}

// The global query rows are at positions 0, 1, ... (rank r's start at r · T / world).
// merged is the causal attention's two halves of keys, each with its lse
// kept in f32, folded together.
Outputs attentionReference(const Inputs& in, const Params& p, int64_t) {
  const int64_t H = p.at("H"), G = p.at("G"), S = p.at("S");
  const RefTensor &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
  AttentionResult gqa = attention(q, k, v, {H, G});
  AttentionResult causal = attention(q, k, v, {H, G, true, 0, 2});
  AttentionResult merged = attention(q, chunk(k, 0, 0, 2), chunk(v, 0, 0, 2), {H, G, true, 0, 2});
  AttentionResult part = attention(q, chunk(k, 0, 1, 2), chunk(v, 0, 1, 2), {H, G, true, 0, 2 + (S + 1) / 2});
  merged.lse = roundTo(merged.lse, DType::F32);
  mergeAttention(merged.out, merged.lse, part.out, roundTo(part.lse, DType::F32));
  return Outputs{{"mha", attention(q, in.at("kf"), in.at("vf"), {H, H}).out},
                 {"gqa", gqa.out},
                 {"gqa_lse", gqa.lse},
                 {"causal", causal.out},
                 {"causal_lse", causal.lse},
                 {"mqa", attention(q, in.at("k1"), in.at("v1"), {H, 1, true, 0, 0}).out},
                 {"merged", merged.out},
                 {"merged_lse", merged.lse}};
}

Outputs attentionBlocksReference(const Inputs& in, const Params& p, int64_t) {
  const int64_t H = p.at("H");
  AttentionResult full = attention(in.at("q"), in.at("k"), in.at("v"), {H, 1});
  AttentionResult causal = attention(in.at("q"), in.at("k"), in.at("v"), {H, 1, true, p.at("P"), 0});
  return Outputs{{"full", full.out},
                 {"full_lse", full.lse},
                 {"causal", causal.out},
                 {"causal_lse", causal.lse},
                 {"prefix", attention(in.at("q"), in.at("k"), in.at("v"), {H, 1, true, 0, 0}).out}};
}

Outputs gatherReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &x = in.at("x"), &idx = in.at("idx");
  RefTensor g = gatherRows(x, idx);
  std::vector<int64_t> wideShape = g.shape;
  wideShape.back() *= 2;
  RefTensor wide(wideShape);
  assignChunk(wide, 2, 1, 2, g);
  RefTensor s = x;
  scatterAddRows(s, in.at("src"), in.at("rows"));
  return Outputs{{"g", g}, {"g3", gatherRows(in.at("x3"), idx)}, {"wide", wide}, {"s", s}, {"indices", idx}};
}

Outputs matmulBatchedReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &a = in.at("a"), &b = in.at("b"), &at = in.at("at"), &bt = in.at("bt");
  RefTensor into({a.shape[0], 2 * b.shape[1]});
  assignChunk(into, 1, 1, 2, matmul(a, b));
  return Outputs{{"ta", matmul(at, b, true, false)},
                 {"tb", matmul(a, bt, false, true)},
                 {"tab", matmul(at, bt, true, true)},
                 {"batched", matmul(in.at("a3"), in.at("b3"), false, false)},
                 {"batched_t", matmul(in.at("at3"), in.at("bt3"), true, true)},
                 {"into", into}};
}

// x holds values of the program's dtype: through f64 and back it is unchanged.
Outputs castReference(const Inputs& in, const Params&, int64_t) {
  const RefTensor &x = in.at("x"), &wide = in.at("wide");
  auto to = [](const RefTensor& t, DType dtype) { return map(t, [dtype](double v) { return castTo(v, dtype); }); };
  return Outputs{{"to_f32", to(x, DType::F32)},
                 {"to_f16", to(x, DType::F16)},
                 {"to_bf16", to(x, DType::BF16)},
                 {"to_f64", x},
                 {"back", x},
                 {"wide_f16", to(wide, DType::F16)},
                 {"wide_bf16", to(wide, DType::BF16)},
                 {"wide_f32", to(wide, DType::F32)}};
}

Outputs overlappingComputeReference(const Inputs& in, const Params& p, int64_t) {
  const RefTensor &x = in.at("x"), &q = in.at("q"), &k = in.at("k"), &v = in.at("v");
  const int64_t H = p.at("H");
  RefTensor scattered = x;
  scatterAddRows(scattered, chunk(x, 0, 0, 3), in.at("idx"));
  AttentionResult merged = attention(q, k, v, {H, H});
  const AttentionResult part = merged;
  mergeAttention(merged.out, merged.lse, part.out, part.lse);
  return Outputs{{"shifted", shiftedRows(x, gelu)},
                 {"rowwise", rmsNorm(softmax(x), in.at("w"), kDefaultRmsNormEps)},
                 {"broadcast", broadcast(x, chunk(x, 0, 0, 10), [](double a, double b) { return a + b; })},
                 {"attended", attention(q, k, v, {H, H}).out},
                 {"scattered", scattered},
                 {"merged", merged.out},
                 {"merged_lse", merged.lse}};
}

// The program tests/executor/programs/<name>.hir.
std::string program(const std::string& name) {
  return readText(sourceDir() + "/tests/executor/programs/" + name + ".hir");
}

}  // namespace

const std::vector<OpProgram>& opPrograms() {
  static const std::vector<OpProgram> all = {
      {"alloc_zero", program("alloc_zero"), allocZeroReference, true, {"y", "z", "v"}},
      {"views", program("views"), viewsReference, true, {"y", "v"}},
      {"gemms", program("gemms"), gemmsReference, true, {"y5"}},
      {"allreduce_ops",
       allreduceProgram(),
       allreduceReference,
       true,
       {"a_min", "a_max", "b_min", "b_max", "sin", "sout"}},
      {"gather_scatter",
       gatherScatterProgram(),
       gatherScatterReference,
       true,
       {"g0", "g1", "gd", "gs", "g3", "rs", "r0_min", "r0_max", "r1_min", "r1_max"}},
      {"bcast", program("bcast"), bcastReference, true, {"y", "z"}},
      {"sendrecv",
       program("sendrecv"),
       sendRecvReference,
       true,
       {"ring", "shift", "self", "inplace", "strided", "uneven"}},
      {"streams_events", program("streams_events"), streamsEventsReference, false, {}},
      {"ints", program("ints"), intsReference, false, {"t", "y", "b"}},
      {"inplace_coll", program("inplace_coll"), inplaceCollReference, true, {"g", "gc"}},
      {"view_out", program("view_out"), viewOutReference, true, {"y", "v"}},
      {"coll3d", program("coll3d"), coll3dReference, true, {"g", "r"}},
      {"overlapping_operands",
       program("overlapping_operands"),
       overlappingOperandsReference,
       true,
       {"added", "copied", "doubled"}},
      {"all_to_all", program("all_to_all"), allToAllReference, true, {"y", "c", "b", "s"}},
      {"elementwise", program("elementwise"), elementwiseReference, true, {"rectified"}},
      {"unary_math", program("unary_math"), unaryMathReference, true, {"b", "n"}},
      {"binary_math",
       program("binary_math"),
       binaryMathReference,
       true,
       {"mx", "mn", "gt_row", "ge_self", "lt_col", "le_top", "eq_copy", "ne_row"}},
      {"rows", program("rows"), rowsReference, true, {}},
      {"layer_ops",
       program("layer_ops"),
       layerOpsReference,
       true,
       {"picked", "masked", "row_max", "first_max", "filled", "columns", "local_rows", "flat", "flipped", "swapped"}},
      {"wide_rows", program("wide_rows"), wideRowsReference, true, {}},
      {"routing", program("routing"), routingReference, true, {"top", "picked", "routed", "tight", "roomy", "flat"}},
      {"attention", program("attention"), attentionReference, true, {}},
      {"attention_blocks", program("attention_blocks"), attentionBlocksReference, true, {}},
      {"gather", program("gather"), gatherReference, true, {"g", "g3", "wide", "indices"}},
      {"matmul_batched", program("matmul_batched"), matmulBatchedReference, true, {}},
      {"cast",
       program("cast"),
       castReference,
       true,
       {"to_f32", "to_f16", "to_bf16", "to_f64", "back", "wide_f16", "wide_bf16", "wide_f32"}},
      {"overlapping_compute", program("overlapping_compute"), overlappingComputeReference, true, {}},
  };
  return all;
}

const OpProgram& opProgram(const std::string& name) {
  for (const OpProgram& p : opPrograms())
    if (p.name == name) return p;
  throw std::invalid_argument("no operation program '" + name + "'");
}

}  // namespace hostir::reftest
