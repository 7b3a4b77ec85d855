#include "team_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>

namespace hostir::commtest {

using namespace std::chrono_literals;

std::vector<std::exception_ptr> runTeam(InProcessTeam& team, const std::function<void(Communicator&)>& body,
                                        std::chrono::seconds timeout) {
  std::vector<std::future<void>> ranks;
  for (int r = 0; r < team.size(); ++r)
    ranks.push_back(std::async(std::launch::async, [&team, &body, r] {
      std::unique_ptr<Communicator> comm = team.communicator(r);
      body(*comm);
    }));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool hung = false;
  for (auto& rank : ranks) hung |= rank.wait_until(deadline) != std::future_status::ready;
  if (hung) {
    ADD_FAILURE() << "the team hung; aborting it";
    team.abort("the test timed out");
    for (auto& rank : ranks)
      if (rank.wait_for(10s) != std::future_status::ready) {
        std::fprintf(stderr, "a rank hangs even after abort\n");
        std::_Exit(1);  // a future's destructor would wait forever
      }
  }
  std::vector<std::exception_ptr> thrown;
  for (auto& rank : ranks) {
    try {
      rank.get();
      thrown.push_back(nullptr);
    } catch (...) {
      thrown.push_back(std::current_exception());
    }
  }
  return thrown;
}

std::string commErrorMessage(const std::exception_ptr& thrown) {
  if (!thrown) return "";
  try {
    std::rethrow_exception(thrown);
  } catch (const CommError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected CommError, got: " << e.what();
  } catch (...) {
    ADD_FAILURE() << "expected CommError, got an unknown exception";
  }
  return "";
}

void expectNoneThrew(const std::vector<std::exception_ptr>& thrown) {
  for (size_t r = 0; r < thrown.size(); ++r)
    if (thrown[r]) ADD_FAILURE() << "rank " << r << " threw: " << commErrorMessage(thrown[r]);
}

void reportProblems(const std::vector<std::vector<std::string>>& problemsByRank) {
  for (const auto& rankProblems : problemsByRank) {
    for (size_t i = 0; i < std::min<size_t>(rankProblems.size(), 5); ++i) ADD_FAILURE() << rankProblems[i];
    if (rankProblems.size() > 5) ADD_FAILURE() << "... and " << rankProblems.size() - 5 << " more";
  }
}

}  // namespace hostir::commtest
