// The team a `hostir` command runs on: MPI's ranks under mpirun (an
// api::MpiLaunch: the session, a deadline on every blocking step of the
// host, heartbeats), else threads of this process. Shared by `run` and
// `calibrate`.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>

#include "api/command_line.h"

namespace hostir::tool {

struct Team {
  std::unique_ptr<api::MpiLaunch> mpi;  // null: in-process ranks
  int64_t world = 1;
  int rank = 0;
  int64_t ranksOnThisNode = 1;

  bool leader() const { return rank == 0; }

  // MPI's team when mpirun started this process (`deadline` bounds every
  // blocking step of the host), else `ranks` in-process ranks.
  static Team start(int64_t ranks, std::chrono::milliseconds deadline);

  // Runs `work`, this rank's own, beating to the peers meanwhile (under
  // mpirun; in process there is no one to tell).
  template <typename Work>
  auto whileBeating(Work&& work) {
    using Value = decltype(work());
    if (!mpi) return work();
    if constexpr (std::is_void_v<Value>) {
      mpi->whileBeating(work);
    } else {
      std::optional<Value> value;
      mpi->whileBeating([&] { value.emplace(work()); });
      return std::move(*value);
    }
  }
};

}  // namespace hostir::tool
