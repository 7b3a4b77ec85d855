// The CUDA backend's entry points as one table, so that the core library
// can reach the backend without linking it: libhostir_cuda.so (the `cuda`
// component) defines hostir_cuda_plugin(), and executor/cuda_loader.cpp
// loads that library the first time CUDA is asked about. Programs linked
// statically with the backend (the test suites) resolve the table at link
// time instead. Both sides come from one build: the table carries that
// build's version and the sizes of the types it passes, and the loader
// refuses a library whose table differs.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "executor/backend_factory.h"

namespace hostir {

struct CudaPlugin {
  const char* version;        // HOSTIR_VERSION of the build
  size_t backendOptionsSize;  // sizeof(BackendOptions)
  size_t rankBackendSize;     // sizeof(RankBackend)
  std::optional<std::string> (*unavailableReason)();
  int (*deviceCount)();
  std::optional<CudaDeviceFacts> (*deviceFacts)(int device);
  RankBackend (*createBackend)(const BackendOptions& options, Communicator& hostComm);
  // The device runtime's streams and events (executor/native_streams.h).
  void* (*createStream)();
  void (*destroyStream)(void* stream);
  void* (*createEvent)();
  void (*destroyEvent)(void* event);
  void (*recordEvent)(void* event, void* stream);
  void (*waitEvent)(void* stream, void* event);
  void (*synchronizeStream)(void* stream);
};

// The file name of the CUDA component, next to the core library.
inline constexpr const char* kCudaPluginFileName = "libhostir_cuda.so";

}  // namespace hostir

// Defined by the CUDA backend (executor/cuda/cuda_plugin_entry.cpp).
extern "C" const hostir::CudaPlugin* hostir_cuda_plugin();
