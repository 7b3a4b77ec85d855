// The small programs of the operation tests (one or a few operations of
// docs/hostir-language.md section 3 each, the dtype written "$T") with the
// naive reference of every output, shared by the in-process operation tests
// and the MPI runner test.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness.h"
#include "reference.h"

namespace hostir::reftest {

using Inputs = std::map<std::string, RefTensor>;
using Outputs = std::map<std::string, RefTensor>;
// Every output's global value from the global inputs, the params and the team size.
using Expectation = std::function<Outputs(const Inputs&, const Params&, int64_t world)>;

struct OpProgram {
  std::string name;  // the program's name
  std::string text;  // .hir with "$T" for the dtype
  Expectation expect;
  bool assignStreamsSafe = true;  // iterations independent: assign-streams keeps it race-free
  std::set<std::string> exact;    // outputs equal to the reference bit for bit (seeded inputs)
};

// alloc_zero, views, gemms, allreduce_ops, gather_scatter, bcast, sendrecv,
// streams_events, ints, inplace_coll, view_out, coll3d, overlapping_operands,
// all_to_all; the computations elementwise, unary_math, binary_math, rows,
// layer_ops, wide_rows, routing, attention, attention_blocks, gather, matmul_batched,
// cast, overlapping_compute. Each
// is tests/executor/programs/<name>.hir, but allreduce_ops and
// gather_scatter, which op_programs.cpp writes out for every reduce op.
const std::vector<OpProgram>& opPrograms();
const OpProgram& opProgram(const std::string& name);

extern const std::vector<ReduceOp> kOps;
extern const std::vector<DType> kDTypes;
std::string opName(ReduceOp op);

// Rank r's slice of `global` along `axis`, for every rank.
std::vector<RefTensor> shards(const RefTensor& global, int64_t axis, int64_t world);
// The global tensor of an output sharded along `axis` whose every rank holds `local`.
RefTensor replicated(const RefTensor& local, int64_t axis, int64_t world);
RefTensor scaled(const RefTensor& t, double f);
// Small integers in [-3, 3]: every sum, product, min and max of them that
// the tests compute is exact in every dtype.
HostTensor integers(DType dtype, std::vector<int64_t> shape, int salt);

}  // namespace hostir::reftest
