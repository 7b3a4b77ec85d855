// Waiting for MPI requests without holding a core. Open MPI progresses a
// communication only inside an MPI call, and its blocking calls poll
// without pause; a rank that waits for a peer still computing would take a
// core from that computation, since a node's ranks and their stream threads
// outnumber its cores. These waits poll with MPI_Test: at once for a few
// microseconds (a peer already there answers within them), then yielding
// the core between polls, then sleeping between polls with pauses that
// grow to a bound, which caps the latency they add to a late peer's
// arrival.
#pragma once

#include <mpi.h>

#include <chrono>

namespace hostir {

struct MpiWaitPolicy {
  std::chrono::microseconds spinFor{20};    // polls back to back
  std::chrono::microseconds yieldFor{200};  // then polls with a yield between
  std::chrono::microseconds firstPause{10};
  std::chrono::microseconds maxPause{100};  // then sleeps, doubling up to this
};

// MPI_Waitall's contract (statuses may be MPI_STATUSES_IGNORE), by polling.
int waitAllPolitely(int count, MPI_Request* requests, MPI_Status* statuses, const MpiWaitPolicy& policy = {});

// MPI_Wait's, for one request.
int waitPolitely(MPI_Request* request, const MpiWaitPolicy& policy = {});

}  // namespace hostir
