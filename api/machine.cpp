#include "hostir/machine.h"

#include "api/machine_impl.h"
#include "api/pass_pipeline.h"
#include "api/program_impl.h"

namespace hostir::api {

Machine Machine::load(const std::string& nameOrPath) {
  if (nameOrPath.empty()) throw plainError(ErrorKind::Usage, "simulate needs a machine profile");
  return Machine(std::make_shared<const Impl>(Impl{loadMachine(nameOrPath)}));
}

Machine::Machine(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {
  if (!impl_ || !impl_->profile)
    throw plainError(ErrorKind::Usage, "a Machine is made by Machine::load, not from null");
}

const std::string& Machine::name() const { return impl_->profile->name; }

}  // namespace hostir::api
