// What an api::Machine holds: the profile it read, shared with the
// pipelines that price with it.
#pragma once

#include <memory>

#include "hostir/machine.h"
#include "model/machine_profile.h"

namespace hostir::api {

struct Machine::Impl {
  std::shared_ptr<const MachineProfile> profile;  // never null
};

}  // namespace hostir::api
