#include "executor/backend_registry.h"

#include <array>
#include <stdexcept>

namespace hostir {
namespace {

// One line per backend, in the order `auto` prefers them.
constexpr std::array<const BackendEntry*, 2> kRegistry{&kCudaBackendEntry, &kCpuBackendEntry};

}  // namespace

std::span<const BackendEntry* const> registeredBackends() { return kRegistry; }

const BackendEntry* findBackend(std::string_view name) {
  for (const BackendEntry* entry : kRegistry)
    if (entry->name == name) return entry;
  return nullptr;
}

const BackendEntry& backendEntry(BackendKind kind) {
  if (const BackendEntry* entry = findBackend(kind.name)) return *entry;
  throw std::logic_error("no backend is registered as '" + std::string(kind.name) + "'");
}

BackendKind registeredKind(std::string_view name) { return BackendKind{backendEntry(BackendKind{name}).name}; }

std::vector<std::string> backendNames() {
  std::vector<std::string> names{"auto"};
  for (const BackendEntry* entry : kRegistry) names.emplace_back(entry->name);
  return names;
}

}  // namespace hostir
