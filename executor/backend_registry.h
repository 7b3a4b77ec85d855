// The backends this build knows, by name: what `--backend` (and the API's
// `backend`) names, the order in which `auto` tries them, and how each is
// asked whether it can run here and made for a rank. A new backend is a
// folder of its own and one entry in backend_registry.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "executor/backend_factory.h"

namespace hostir {

struct BackendEntry {
  std::string_view name;  // "cpu", "cuda"
  // It computes on devices: the communicators' rules for devices apply
  // (nccl, copy engines between devices), and a graph can capture its work.
  bool device = false;
  // Whether this build has it, and what it was built without otherwise
  // ("the CUDA toolkit").
  bool (*built)() = nullptr;
  std::string_view builtWithout;
  // Why it cannot run here, as far as can be told cheaply, without loading
  // its libraries (--version, a CPU run); nullopt: it may. Null: always may.
  std::optional<std::string> (*unavailableBeforeLoading)() = nullptr;
  // Why it cannot run here, loading its libraries when needed; nullopt: it
  // can. Null: always can.
  std::optional<std::string> (*unavailable)() = nullptr;
  // The devices this process can use (device backends; null: none).
  int (*deviceCount)() = nullptr;
  RankBackend (*create)(const BackendOptions& options, Communicator& hostComm) = nullptr;
  // Loads what the program needs before the ranks' threads start (null: nothing).
  void (*loadLibraries)(const BackendOptions& options, const Program& program, int64_t ranks) = nullptr;
};

// Every backend, in the order `auto` prefers them: devices first, the CPU,
// which can always run, last.
std::span<const BackendEntry* const> registeredBackends();
// The backend named `name`; null when none is.
const BackendEntry* findBackend(std::string_view name);
// The entry of a chosen backend (always registered).
const BackendEntry& backendEntry(BackendKind kind);
// The kind of the backend registered as `name` (its name held by the
// registry, not by `name`); std::logic_error when none is.
BackendKind registeredKind(std::string_view name);
// "auto" and every backend's name, for the command line's choices and messages.
std::vector<std::string> backendNames();

// The entries, defined beside each backend.
extern const BackendEntry kCpuBackendEntry;   // executor/cpu/cpu_backend_entry.cpp
extern const BackendEntry kCudaBackendEntry;  // executor/cuda_loader.cpp

}  // namespace hostir
