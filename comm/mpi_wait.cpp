#include "comm/mpi_wait.h"

#include <algorithm>
#include <thread>

namespace hostir {

int waitAllPolitely(int count, MPI_Request* requests, MPI_Status* statuses, const MpiWaitPolicy& policy) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::chrono::microseconds pause = policy.firstPause;
  for (;;) {
    int done = 0;
    const int status = MPI_Testall(count, requests, &done, statuses);
    if (status != MPI_SUCCESS || done) return status;
    const Clock::duration waited = Clock::now() - start;
    if (waited < policy.spinFor) continue;
    if (waited < policy.yieldFor) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, policy.maxPause);
  }
}

int waitPolitely(MPI_Request* request, const MpiWaitPolicy& policy) {
  return waitAllPolitely(1, request, MPI_STATUSES_IGNORE, policy);
}

}  // namespace hostir
