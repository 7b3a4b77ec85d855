// Runs a body on every rank of an in-process team, one thread per rank,
// under a deadline, and collects what each rank threw: the harness of the
// in-process and copy-engine communicator tests.
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "comm/in_process_communicator.h"

namespace hostir::commtest {

// Runs body(communicator of rank r) on one thread per rank and returns what
// each rank threw (null where it returned). A team still running after
// `timeout` fails the test and is aborted to set it free.
std::vector<std::exception_ptr> runTeam(InProcessTeam& team, const std::function<void(Communicator&)>& body,
                                        std::chrono::seconds timeout = std::chrono::seconds(120));

// The message of a CommError, "" for none, and a test failure for anything else.
std::string commErrorMessage(const std::exception_ptr& thrown);

void expectNoneThrew(const std::vector<std::exception_ptr>& thrown);

// Reports the first few problems each rank found as test failures.
void reportProblems(const std::vector<std::vector<std::string>>& problemsByRank);

}  // namespace hostir::commtest
