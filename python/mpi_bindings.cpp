// _hostir_mpi: the part of the Python module that needs MPI, imported only
// for hostir.compile(..., launcher="mpi") or comm=, so that `import hostir`
// never loads MPI. It initializes MPI when nobody has (with
// MPI_THREAD_MULTIPLE: hostir issues communications from stream threads),
// and hands _hostir's Executable the function that prepares this process's
// rank of the team (api::compileOnMpi) as a capsule.
#include <mpi.h>
#include <pybind11/pybind11.h>

#include <hostir/hostir.h>
#include <hostir/mpi.h>

#include <cstdint>
#include <string>

namespace py = pybind11;
using namespace pybind11::literals;
namespace api = hostir::api;

namespace {

// The communicator a handle names: MPI_COMM_WORLD for 0, else an
// mpi4py communicator's handle (MPI._handleof), which Open MPI makes a pointer.
MPI_Comm communicator(std::intptr_t handle) {
  return handle == 0 ? MPI_COMM_WORLD : reinterpret_cast<MPI_Comm>(handle);  // NOLINT(performance-no-int-to-ptr)
}

api::Executable* compileOnComm(std::intptr_t comm, const api::Program& program, const api::RunOptions& options) {
  return new api::Executable(api::compileOnMpi(communicator(comm), program, options));
}

// Whether this call initialized MPI (the caller finalizes it at exit then).
bool initialize() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) throw std::runtime_error("MPI was finalized already; hostir cannot run on it");
  if (initialized) return false;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  return true;
}

void finalize() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

// This process's rank and the size of the communicator `handle` names.
py::tuple rankAndSize(std::intptr_t handle) {
  int rank = 0, size = 0;
  MPI_Comm_rank(communicator(handle), &rank);
  MPI_Comm_size(communicator(handle), &size);
  return py::make_tuple(rank, size);
}

}  // namespace

PYBIND11_MODULE(_hostir_mpi, m) {
  m.doc() = "hostir on an MPI job's ranks; hostir.compile(..., launcher='mpi') uses it.";
  m.def("initialize", &initialize);
  m.def("finalize", &finalize);
  m.def("rank_and_size", &rankAndSize, "comm"_a);
  m.attr("compile") = py::capsule(reinterpret_cast<void*>(&compileOnComm), "hostir.mpi_compile");
}
