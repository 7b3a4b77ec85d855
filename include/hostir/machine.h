// A machine profile, read and checked once: what simulate() prices a
// program on. Loading it once matters to a caller that simulates many
// times (`hostir tune`): one error for a bad profile rather than one per
// call, one parse, and a profile given as a pipe (`--machine <(...)`) that
// can be read only once.
#pragma once

#include <memory>
#include <string>

namespace hostir::api {

class Machine {
 public:
  // A shipped profile's name ("h100-nvlink", see machineProfiles()) or a
  // profile file, as `hostir calibrate` writes. Throws Error: kind Usage
  // when `nameOrPath` is empty, Program when it cannot be read or parsed.
  static Machine load(const std::string& nameOrPath);

  // The profile's "name" (a file's, not its path).
  const std::string& name() const;

  struct Impl;
  explicit Machine(std::shared_ptr<const Impl> impl);
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace hostir::api
