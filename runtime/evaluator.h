// The evaluator: interprets a verified Program on one rank. Host control
// flow and integers run here; every tensor operation and communication is
// issued on the current stream through the Backend, so the CPU and CUDA
// backends share all of it. The program is compiled once into a flat list
// of instructions with resolved value slots (runtime/compiled_program.h),
// so a run does no name lookups; each operation's issue rule lives in
// runtime/issue_*.cpp (runtime/issue_rules.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "runtime/backend.h"

namespace hostir {

class CompiledProgram;

// The rank-local view of the program's inputs and outputs.
struct TensorSpec {
  std::string name;
  DType dtype;
  Dims localShape;
  Dims globalShape;
  std::optional<int64_t> shardAxis;
  // The sharded axis splits into sliceCount(world) equal slices, of which
  // rank r holds slice(r): slice r of world, or, sharded over a mesh axis,
  // slice coord(axis) of size(axis) (ranks that differ only in other
  // coordinates hold the same slice).
  std::vector<int64_t> sliceOfRank;  // empty: over the whole team
  int64_t slice(int64_t rank) const { return sliceOfRank.empty() ? rank : sliceOfRank[static_cast<size_t>(rank)]; }
  int64_t sliceCount(int64_t world) const { return sliceOfRank.empty() ? world : slices; }
  int64_t slices = 0;
};

class Evaluator {
 public:
  // `program` must have passed verifyProgram with the same params and world.
  Evaluator(const Program& program, const std::map<std::string, int64_t>& params, int64_t rank, int64_t world);
  ~Evaluator();
  Evaluator(Evaluator&&) noexcept;

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  // The extents of the program's mesh on this team; empty without a mesh.
  const std::vector<int64_t>& meshExtents() const;

  // Issues the whole program with these input tensors (by name), waits for
  // every stream, and returns the output tensors by name. Memory the
  // backend cannot provide (std::bad_alloc) throws DiagnosticError at the
  // statement: "cannot allocate 4.00 TiB for 't'"; work already issued
  // stays queued on the streams.
  std::map<std::string, TensorView> run(Backend& backend, const std::map<std::string, TensorView>& inputs);

  // Operations issued by the last run (host-side count, for overhead figures).
  uint64_t issuedOperations() const { return issued_; }

 private:
  std::shared_ptr<const CompiledProgram> compiled_;
  int64_t rank_;
  int64_t world_;
  uint64_t issued_ = 0;
};

}  // namespace hostir
