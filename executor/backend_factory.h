// Chooses and creates a rank's backend, through the registry of backends
// (executor/backend_registry.h). The CPU backend is always built; the CUDA
// backend only when the toolkit was found (HOSTIR_CUDA), and this file's
// callers never need to know which: the CUDA side lives entirely in
// executor/cuda/, reached through executor/cuda_loader.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "executor/delay_injection.h"
#include "executor/rank_failure.h"
#include "hostir/defaults.h"
#include "ir/ir.h"
#include "runtime/backend.h"
#include "runtime/backend_selection.h"

namespace hostir {

class TraceRecorder;  // runtime/trace.h

// A backend, by the name it is registered under. Cpu and Cuda name the two
// this project ships, for the code that must know which one it runs on.
struct BackendKind {
  std::string_view name = "cpu";
  static const BackendKind Cpu;
  static const BackendKind Cuda;
  friend bool operator==(BackendKind a, BackendKind b) { return a.name == b.name; }
};
inline constexpr BackendKind BackendKind::Cpu{"cpu"};
inline constexpr BackendKind BackendKind::Cuda{"cuda"};

// The CPU backend's own knobs, as plain data; other backends ignore them.
struct CpuOptions {
  bool reference = false;  // one stream, f64-accumulating GEMMs
  DelayInjection delays;
  int coresPerRank = 0;  // computations at once per rank, resolved (0: no limit)
};

// Everything a rank's backend is made from: which backend, and its knobs.
// One struct from the run's request (executor/runner.h) down to
// createBackend; the backends' own option structs are built from it there.
struct BackendOptions {
  BackendKind kind = BackendKind::Cpu;  // as chooseBackend chose
  int64_t streams = kDefaultStreams;    // the worker stream pool
  CommunicatorChoice communicator = CommunicatorChoice::Auto;
  std::chrono::milliseconds commTimeout = kDefaultCommTimeout;
  // CUDA: the caller's cudaStream_t that becomes the main stream, never
  // destroyed by hostir (one rank per process); ignored by the CPU backend.
  void* externalMainStream = nullptr;
  TraceRecorder* trace = nullptr;  // streams and host issue, while recording (set per rank by the runner)
  bool graph = false;              // CUDA: the first run is captured into a graph that later runs replay
  CpuOptions cpu;
  // The text this rank aborts its team with when work on one of its
  // streams fails (set per rank by the runner from RunRequest::describeFailure).
  DescribeFailure describeFailure;
};

// A backend with the communicator its collectives use. For the CPU that is
// the host communicator itself unless copy engines are asked for; CUDA
// brings its own (NCCL or copy engines), bootstrapped through the host
// communicator, which still serves host-side I/O.
struct RankBackend {
  std::unique_ptr<Communicator> deviceComm;  // null: collectives use the host communicator
  std::unique_ptr<Backend> backend;
};

RankBackend createBackend(const BackendOptions& options, Communicator& hostComm);

// Loads the libraries `program` needs on this backend (OpenBLAS for the
// CPU's GEMMs and attention) into the process, with the GEMM buffers of
// `ranks` ranks, before the ranks' threads start: OpenBLAS cannot fail
// gracefully when the address space runs out while it loads (libgfortran
// exits) or maps a buffer (it retries for ever), and threads started
// meanwhile take address space between a check and the mapping. A failure
// here is left for the rank that needs the library to report.
void loadBackendLibraries(const BackendOptions& options, const Program& program, int64_t ranks);

// Whether this build has the CUDA backend (the toolkit was found).
bool cudaBackendBuilt();

// Why the CUDA backend cannot run here (not built, no driver, no device),
// or nullopt when it can.
std::optional<std::string> cudaUnavailableReason();

// The same, as far as the build, the installation and the CUDA driver tell
// without loading the CUDA component (cuBLAS, NCCL); nullopt when a device
// may serve. For answers that must stay cheap, such as --version.
std::optional<std::string> cudaUnavailableBeforeLoading();

// Whether `name` is what `--backend` (or the API's `backend`) may ask for:
// "auto" or a registered backend's name.
bool isBackendRequest(std::string_view name);

// Where a team's ranks are, as the choice of backend needs it.
struct TeamPlace {
  bool inProcess = true;    // threads of this process (not mpirun)
  int64_t world = 1;        // the team's ranks
  int64_t ranksOnNode = 1;  // those on this node
};

// The backend a run uses. `refusal`, when set, says why the request cannot
// run here, as what follows "backend " in a sentence ("cuda: no CUDA device
// is visible", "cpu cannot use the nccl communicator, ...") about `kind`.
struct BackendChoice {
  BackendKind kind = BackendKind::Cpu;
  CommunicatorChoice communicator = CommunicatorChoice::Auto;  // as asked for
  std::optional<std::string> refusal;
};

// The one place a run's backend is chosen, for the command line, the API
// and calibrate alike. `requested` is "auto" or a registered name (see
// isBackendRequest). Auto: the first registered backend that can run here
// and whose devices `communicator` can serve this team on (the CPU last).
BackendChoice chooseBackend(std::string_view requested, CommunicatorChoice communicator, const TeamPlace& team);

// The CUDA devices this process can use (0 without the CUDA backend).
int cudaDeviceCount();

// What a profile says of the GPU it was measured on.
struct CudaDeviceFacts {
  std::string name;         // "NVIDIA H100 80GB HBM3"
  int multiprocessors = 0;  // SMs
  uint64_t memoryBytes = 0;
  int major = 0, minor = 0;  // compute capability
};
// Device `device`'s facts; nullopt without the CUDA backend or that device.
std::optional<CudaDeviceFacts> cudaDeviceFacts(int device);

// Implemented through the CUDA plugin (executor/cuda_loader.cpp); without
// it (a build or an installation without CUDA) it throws the reason.
RankBackend createCudaBackend(const BackendOptions& options, Communicator& hostComm);

}  // namespace hostir
