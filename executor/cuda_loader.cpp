// The CUDA entry points of executor/backend_factory.h and
// executor/native_streams.h, reached through the CUDA component's table
// (executor/cuda_plugin.h). The core library links no CUDA library: the
// table comes from the program itself when it was linked with the backend,
// else from libhostir_cuda.so beside the core, loaded the first time CUDA
// is asked about. Where neither is there, every entry point says why.
#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <variant>

#include "executor/backend_factory.h"
#include "executor/backend_registry.h"
#include "executor/cuda_driver_probe.h"
#include "executor/cuda_plugin.h"
#include "executor/native_streams.h"

// Resolved at link time in programs linked with the CUDA backend, null elsewhere.
extern "C" const hostir::CudaPlugin* hostir_cuda_plugin() __attribute__((weak));

namespace hostir {
namespace {

// The table, or why there is none.
using PluginOrReason = std::variant<const CudaPlugin*, std::string>;

// The folder of the file this code was loaded from: libhostir.so's, or the
// program's when the core is linked into it.
std::filesystem::path coreFolder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaBackendBuilt), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code error;
  const std::filesystem::path file = std::filesystem::weakly_canonical(info.dli_fname, error);
  return (error ? std::filesystem::path(info.dli_fname) : file).parent_path();
}

std::optional<std::string> tableMismatch(const CudaPlugin& plugin, const std::string& path) {
  if (std::string(plugin.version) == HOSTIR_VERSION && plugin.backendOptionsSize == sizeof(BackendOptions) &&
      plugin.rankBackendSize == sizeof(RankBackend))
    return std::nullopt;
  return path + " is from another hostir build (version " + plugin.version + ", this library " HOSTIR_VERSION ")";
}

std::filesystem::path pluginPath() { return coreFolder() / kCudaPluginFileName; }

std::string notInstalled(const std::filesystem::path& path) {
  return "the CUDA backend is not installed: " + path.string() +
         " is missing (install hostir's cuda component beside the core library)";
}

// Unused in a build without the CUDA backend, which has nothing to load.
[[maybe_unused]] PluginOrReason loadPlugin() {
  const std::filesystem::path path = pluginPath();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return notInstalled(path);
  // RTLD_LOCAL: its symbols serve only itself; it finds the core's through
  // its own dependency on libhostir.so. Never unloaded.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return "the CUDA backend cannot be loaded: " + std::string(dlerror());
  auto entry = reinterpret_cast<const CudaPlugin* (*)()>(dlsym(handle, "hostir_cuda_plugin"));
  if (entry == nullptr) return path.string() + " has no hostir_cuda_plugin entry point";
  const CudaPlugin* plugin = entry();
  if (std::optional<std::string> mismatch = tableMismatch(*plugin, path.string())) return *mismatch;
  return plugin;
}

PluginOrReason findPlugin() {
#ifndef HOSTIR_CUDA_BUILT
  return std::string(
      "this hostir was built without the CUDA backend (configure with the CUDA toolkit and "
      "-DHOSTIR_CUDA=ON)");
#else
  if (hostir_cuda_plugin != nullptr) return hostir_cuda_plugin();
  return loadPlugin();
#endif
}

// Loaded once per process, on first use.
const PluginOrReason& cudaPlugin() {
  static const PluginOrReason plugin = findPlugin();
  return plugin;
}

const CudaPlugin* loadedPlugin() {
  const PluginOrReason& plugin = cudaPlugin();
  return std::holds_alternative<const CudaPlugin*>(plugin) ? std::get<const CudaPlugin*>(plugin) : nullptr;
}

// Why CUDA cannot serve, as far as the build, the installation and the
// driver say without loading the component; nullopt when it may.
std::optional<std::string> findReasonBeforeLoading() {
#ifndef HOSTIR_CUDA_BUILT
  return std::get<std::string>(cudaPlugin());
#else
  if (hostir_cuda_plugin == nullptr) {
    std::error_code error;
    const std::filesystem::path path = pluginPath();
    if (!std::filesystem::exists(path, error)) return notInstalled(path);
  }
  return cudaDriverProblem();
#endif
}

// Asked once per process: every run's choice of backend asks it, and the
// installation and the driver do not change under a running process.
const std::optional<std::string>& reasonBeforeLoading() {
  static const std::optional<std::string> reason = findReasonBeforeLoading();
  return reason;
}

// The table, or an error saying why there is none.
const CudaPlugin& requirePlugin() {
  if (const CudaPlugin* plugin = loadedPlugin()) return *plugin;
  throw std::runtime_error(std::get<std::string>(cudaPlugin()));
}

}  // namespace

bool cudaBackendBuilt() {
#ifdef HOSTIR_CUDA_BUILT
  return true;
#else
  return false;
#endif
}

std::optional<std::string> cudaUnavailableBeforeLoading() { return reasonBeforeLoading(); }

std::optional<std::string> cudaUnavailableReason() {
  if (std::optional<std::string> reason = reasonBeforeLoading()) return reason;
  if (const CudaPlugin* plugin = loadedPlugin()) return plugin->unavailableReason();
  return std::get<std::string>(cudaPlugin());
}

int cudaDeviceCount() {
  if (reasonBeforeLoading()) return 0;
  const CudaPlugin* plugin = loadedPlugin();
  return plugin ? plugin->deviceCount() : 0;
}

std::optional<CudaDeviceFacts> cudaDeviceFacts(int device) {
  if (reasonBeforeLoading()) return std::nullopt;
  const CudaPlugin* plugin = loadedPlugin();
  return plugin ? plugin->deviceFacts(device) : std::nullopt;
}

RankBackend createCudaBackend(const BackendOptions& options, Communicator& hostComm) {
  return requirePlugin().createBackend(options, hostComm);
}

const BackendEntry kCudaBackendEntry{
    .name = "cuda",
    .device = true,
    .built = cudaBackendBuilt,
    .builtWithout = "the CUDA toolkit",
    .unavailableBeforeLoading = cudaUnavailableBeforeLoading,
    .unavailable = cudaUnavailableReason,
    .deviceCount = cudaDeviceCount,
    .create = createCudaBackend,
};

namespace native {

// A CPU runtime never makes native streams or events; without the backend
// these say why instead.
void* createStream() { return requirePlugin().createStream(); }
void destroyStream(void* stream) {
  if (const CudaPlugin* plugin = loadedPlugin()) plugin->destroyStream(stream);
}
void* createEvent() { return requirePlugin().createEvent(); }
void destroyEvent(void* event) {
  if (const CudaPlugin* plugin = loadedPlugin()) plugin->destroyEvent(event);
}
void recordEvent(void* event, void* stream) { requirePlugin().recordEvent(event, stream); }
void waitEvent(void* stream, void* event) { requirePlugin().waitEvent(stream, event); }
void synchronizeStream(void* stream) { requirePlugin().synchronizeStream(stream); }

}  // namespace native
}  // namespace hostir
