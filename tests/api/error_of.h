// errorOf(call): the hostir::api::Error that `call` throws; fails the test
// when it throws none.
#pragma once

#include <gtest/gtest.h>

#include "hostir/error.h"

namespace hostir::api::testing {

template <typename Call>
Error errorOf(Call call) {
  try {
    call();
  } catch (const Error& error) {
    return error;
  }
  ADD_FAILURE() << "no hostir::api::Error was thrown";
  return Error(ErrorKind::Usage, "", "");
}

}  // namespace hostir::api::testing
