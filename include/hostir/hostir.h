// The hostir library: parse `.hir` programs, apply passes, check, simulate
// and run them on a team of in-process ranks or an MPI communicator
// (<hostir/mpi.h>, which needs MPI's headers). Every call throws
// hostir::api::Error on failure.
#pragma once

#include "hostir/calibration.h"
#include "hostir/catalog.h"
#include "hostir/defaults.h"
#include "hostir/error.h"
#include "hostir/executable.h"
#include "hostir/execution.h"
#include "hostir/host_buffer.h"
#include "hostir/limits.h"
#include "hostir/machine.h"
#include "hostir/npy.h"
#include "hostir/program.h"
#include "hostir/run_option_table.h"
#include "hostir/runtime.h"
