// Program plumbing shared by the executor tests: parsing, verifying and
// transforming programs, the global inputs a run sees, and running a
// request with a time limit so that a hang fails a test instead of blocking
// the suite.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/runner.h"
#include "ir/ir.h"
#include "reference.h"

namespace hostir::reftest {

using Params = std::map<std::string, int64_t>;

std::string sourceDir();
std::string readText(const std::string& path);
std::string examplePath(const std::string& name);

// Parses `text` or throws std::runtime_error with the rendered diagnostic.
Program parseOrThrow(const std::string& text, const std::string& file = "test.hir");

// Limits this process's address space to what it uses now plus 64 MiB:
// less than one OpenBLAS work buffer (128 MiB). For a forked child.
void limitAddressSpaceToUsedPlus64MiB();
Program loadExample(const std::string& name);
// Substitutes every "$T" in `text` with the dtype's name.
std::string withDType(std::string text, DType dtype);

// The program after assign-streams (throws when the pass fails), proved
// for `world` ranks with the default params and `set` bound, as `hostir
// run --passes assign-streams` proves it for its team.
Program assignStreams(Program program, int64_t world = 1, const std::map<std::string, int64_t>& set = {});

// Every param's value with `overrides` applied (throws on an unknown name).
Params bindAll(const Program& program, const Params& overrides);
// verifyProgram for `world` ranks: nullopt when the program is valid.
Status verifyFor(const Program& program, const Params& overrides, int64_t world);

// The specs an Evaluator derives for rank 0 of `world`.
std::vector<TensorSpec> inputSpecs(const Program& program, const Params& params, int64_t world);
std::vector<TensorSpec> outputSpecs(const Program& program, const Params& params, int64_t world);

// The global inputs a run with `seed` sees (seededGlobal of each spec),
// except those in `given`, which are taken as they are.
std::map<std::string, HostTensor> globalInputs(const Program& program, const Params& params, int64_t world,
                                               uint64_t seed, const std::map<std::string, HostTensor>& given = {});
std::map<std::string, RefTensor> toRef(const std::map<std::string, HostTensor>& tensors);

RunRequest makeRequest(const Program& program, const Params& params, uint64_t seed, int64_t streams);

// runInProcess on a thread of its own; nullopt when it has not returned
// after `limit` (the thread is then abandoned, never joined).
std::optional<Result<RunResult>> runWithin(const RunRequest& request, int64_t world,
                                           std::chrono::milliseconds limit = std::chrono::seconds(60));

// A short description of a configuration, for failure messages.
std::string describe(const std::string& program, const Params& params, int64_t world, bool assigned, int64_t streams);

}  // namespace hostir::reftest
