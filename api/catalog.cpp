#include "hostir/catalog.h"

#include "executor/backend_registry.h"
#include "ir/closest_name.h"
#include "model/machine_profile.h"
#include "passes/pass_manager.h"

namespace hostir::api {

std::vector<PassDescription> passes() {
  std::vector<PassDescription> out;
  for (const PassInfo& info : registeredPasses()) out.push_back({std::string(info.name), std::string(info.summary)});
  return out;
}

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const PassInfo& info : registeredPasses()) names.emplace_back(info.name);
  return names;
}

std::vector<std::string> splitPipeline(std::string_view pipeline) { return hostir::splitPipeline(pipeline); }

std::vector<std::string> machineProfiles() { return shippedMachineProfiles(); }

std::vector<BackendDescription> backends() {
  std::vector<BackendDescription> out;
  for (const BackendEntry* entry : registeredBackends()) {
    BackendDescription d;
    d.name = entry->name;
    d.built = entry->built();
    if (!d.built) d.builtWithout = entry->builtWithout;
    if (d.built && entry->unavailableBeforeLoading) d.unusable = entry->unavailableBeforeLoading();
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> backendNames() { return hostir::backendNames(); }

std::optional<std::string> closestName(std::string_view given, const std::vector<std::string>& candidates) {
  return hostir::closestName(given, candidates);
}

}  // namespace hostir::api
