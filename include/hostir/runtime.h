// Streams and events as handles the caller creates and destroys, with the
// rules of a GPU runtime used from a framework:
// - destroy is idempotent; a destroyed or empty handle is refused where it
//   must be used;
// - a stream wrapped from the caller's native handle is never destroyed by
//   hostir (destroy forgets it);
// - after Runtime::reset (or the Runtime's end), every handle it made is
//   refused with Error (kind Runtime), never a crash;
// - without a GPU (the CPU backend) every operation is a harmless no-op on
//   valid handles, so the same code runs on either.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace hostir::api {

class Runtime;
struct RuntimeState;

class Stream {
 public:
  Stream() = default;
  bool valid() const;     // made by a Runtime, not destroyed, runtime not reset
  bool external() const;  // wrapped from the caller's handle
  // The cudaStream_t on the CUDA backend; null on the CPU. Throws Error
  // (kind Runtime) when the handle is not valid.
  void* nativeHandle() const;

 private:
  friend class Runtime;
  std::shared_ptr<RuntimeState> runtime_;
  int64_t id_ = -1;
};

class Event {
 public:
  Event() = default;
  bool valid() const;

 private:
  friend class Runtime;
  std::shared_ptr<RuntimeState> runtime_;
  int64_t id_ = -1;
};

class Runtime {
 public:
  // "auto" (CUDA when a device is usable, else the CPU), "cpu" or "cuda"
  // (Error kind Runtime when no device is usable).
  explicit Runtime(const std::string& backend = "auto");
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // "cpu" or "cuda": what "auto" chose.
  const std::string& backend() const;
  bool hasDevice() const { return backend() == "cuda"; }

  Stream createStream();
  // The caller's stream (a cudaStream_t on CUDA; any value on the CPU); never destroyed by hostir.
  Stream wrapStream(void* nativeStream);
  Event createEvent();
  // Idempotent: a second destroy, or destroying an empty handle, does nothing.
  void destroy(Stream& stream);
  void destroy(Event& event);

  // `event` marks the work issued on `stream` so far.
  void record(Event& event, const Stream& stream);
  // Work issued on `stream` from now on waits for `event`.
  void wait(const Stream& stream, const Event& event);
  // The host waits for all work issued on `stream`.
  void synchronize(const Stream& stream);

  // Destroys every stream and event this runtime created (never wrapped
  // ones); every handle it made is refused from then on. Idempotent.
  void reset();
  // Streams and events alive (created or wrapped, not destroyed).
  int64_t liveHandles() const;

 private:
  std::shared_ptr<RuntimeState> state_;
};

}  // namespace hostir::api
