// Running on an MPI communicator the caller owns. Include it only where MPI
// is used: it includes <mpi.h>.
#pragma once

#include <mpi.h>

#include <map>
#include <string>

#include "hostir/calibration.h"
#include "hostir/executable.h"
#include "hostir/execution.h"

namespace hostir::api {

// Collective over `comm`: every rank of it calls runOnMpi with the same
// program and options. MPI must be initialized, with MPI_THREAD_MULTIPLE
// (communications are issued from stream threads); hostir works on a
// duplicate of `comm` and never finalizes MPI. `inputs` are global tensors,
// as for run(); `outputs` are written on rank 0 of `comm`, and a replicated
// output (declared without shard) on any rank that gives a buffer for it,
// that rank's own copy. A rank that
// fails aborts the team, so that none waits for ever on it; the error is
// thrown on the failing rank, and the others' runs fail too.
// The executable of runOnMpi: prepared once on `comm` (collective, as
// runOnMpi), and every call of its run() collective over `comm` too. The
// executable works on a duplicate of `comm`, which it keeps until closed.
Executable compileOnMpi(MPI_Comm comm, const Program& program, const RunOptions& options = {});

// compileOnMpi and one call of the executable.
RunStats runOnMpi(MPI_Comm comm, const Program& program, const std::map<std::string, HostBuffer>& inputs,
                  const std::map<std::string, HostBuffer>& outputs, const RunOptions& options = {});

// calibrate() on `comm`'s ranks, collective over it (MPI initialized as for
// compileOnMpi). Every rank returns its own figures; rank 0's are the
// team's profile, and only rank 0 calls options.onProgress and onWarning.
Calibration calibrateOnMpi(MPI_Comm comm, const CalibrateOptions& options = {});

}  // namespace hostir::api
