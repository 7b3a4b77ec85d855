// Starting a thread is a request for resources like an allocation: when the
// system refuses it (the process's limits on threads, address space or
// stack size), the error says which thread could not start and why, and
// callers report it as a resource error (exit 1), not as a bug.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

namespace hostir {

// A resource the system would not give: a thread, here.
struct ResourceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// std::thread(body), or ResourceError naming `what` ("rank 3's thread").
template <typename Body>
std::thread startThread(std::string_view what, Body&& body) {
  try {
    return std::thread(std::forward<Body>(body));
  } catch (const std::system_error& e) {
    throw ResourceError(fmt::format(
        "cannot start {}: {} (the process's limits on threads, address space or stack size: ulimit -u, -v, -s)", what,
        e.code().message()));
  }
}

}  // namespace hostir
