// Creates a rank's backend. The CPU backend is always built; the CUDA
// backend only when the toolkit was found (HOSTIR_CUDA), and this file's
// callers never need to know which: the CUDA side lives entirely in
// executor/cuda/ (or its CPU-only stand-in, chosen by CMake).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "executor/backend.h"
#include "executor/cpu/cpu_stream.h"
#include "executor/trace.h"

namespace hostir {

enum class BackendKind { Cpu, Cuda };

struct BackendOptions {
  int64_t streams = 4;
  bool reference = false;  // CPU only: one stream, f64-accumulating GEMMs
  cpu::DelayInjection delays;
  std::chrono::milliseconds commTimeout{std::chrono::minutes(5)};
  TraceRecorder* trace = nullptr;  // CPU only: streams and host issue, while recording
  int computeSlots = 0;            // CPU only: computations at once per rank (0: no limit)
};

// A backend with the communicator its collectives use. For the CPU that is
// the host communicator itself; CUDA brings its own (NCCL), bootstrapped
// through the host communicator, which still serves host-side I/O.
struct RankBackend {
  std::unique_ptr<Communicator> deviceComm;  // null: collectives use the host communicator
  std::unique_ptr<Backend> backend;
};

RankBackend createBackend(BackendKind kind, const BackendOptions& options, Communicator& hostComm);

// Why the CUDA backend cannot run here (not built, no driver, no device),
// or nullopt when it can.
std::optional<std::string> cudaUnavailableReason();

// The CUDA devices this process can use (0 without the CUDA backend).
int cudaDeviceCount();

// Implemented by executor/cuda/ when the CUDA backend is built, and by
// executor/no_cuda_backend.cpp otherwise.
RankBackend createCudaBackend(const BackendOptions& options, Communicator& hostComm);

}  // namespace hostir
