// Streams and events as checked handles. A handle names an entry of its
// runtime's table; reset marks the runtime dead, so that every handle it
// made is refused from then on instead of reaching a destroyed native
// object. On the CPU backend the entries have no native object and the
// operations do nothing.
#include "hostir/runtime.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

#include "api/backend_choice.h"
#include "api/program_impl.h"
#include "executor/backend_factory.h"
#include "executor/native_streams.h"

namespace hostir::api {

struct RuntimeState {
  struct StreamEntry {
    void* native = nullptr;
    bool external = false;
  };
  std::mutex mutex;
  std::string backend;
  bool alive = true;
  int64_t nextId = 0;
  std::map<int64_t, StreamEntry> streams;
  std::map<int64_t, void*> events;
};

namespace {

bool onCuda(const RuntimeState& state) { return state.backend == "cuda"; }

// A device runtime call; its failure as Error (kind Runtime).
template <typename Call>
auto deviceCall(Call call) {
  try {
    return call();
  } catch (const std::runtime_error& error) {
    throw plainError(ErrorKind::Runtime, error.what());
  }
}

// The state of a handle that must be usable; throws Error (kind Runtime).
RuntimeState& usable(const std::shared_ptr<RuntimeState>& state, int64_t id, std::string_view what) {
  if (!state || id < 0) throw plainError(ErrorKind::Runtime, fmt::format("an empty {} handle was used", what));
  if (!state->alive)
    throw plainError(ErrorKind::Runtime, fmt::format("a {} was used after its runtime was reset", what));
  return *state;
}

}  // namespace

bool Stream::valid() const {
  if (!runtime_) return false;
  std::lock_guard lock(runtime_->mutex);
  return runtime_->alive && runtime_->streams.count(id_) > 0;
}

bool Stream::external() const {
  if (!valid()) return false;
  std::lock_guard lock(runtime_->mutex);
  return runtime_->streams.at(id_).external;
}

void* Stream::nativeHandle() const {
  RuntimeState& state = usable(runtime_, id_, "stream");
  std::lock_guard lock(state.mutex);
  auto entry = state.streams.find(id_);
  if (entry == state.streams.end()) throw plainError(ErrorKind::Runtime, "a destroyed stream was used");
  return entry->second.native;
}

bool Event::valid() const {
  if (!runtime_) return false;
  std::lock_guard lock(runtime_->mutex);
  return runtime_->alive && runtime_->events.count(id_) > 0;
}

Runtime::Runtime(const std::string& backend) : state_(std::make_shared<RuntimeState>()) {
  // One rank of this process, on whatever communicator.
  const BackendKind kind = chooseRunBackend(backend, "auto", TeamPlace{}).kind;
  state_->backend = std::string(kind.name);
}

Runtime::~Runtime() { reset(); }

const std::string& Runtime::backend() const { return state_->backend; }

Stream Runtime::createStream() {
  RuntimeState& state = usable(state_, 0, "runtime");
  std::lock_guard lock(state.mutex);
  RuntimeState::StreamEntry entry;
  if (onCuda(state)) entry.native = deviceCall([] { return native::createStream(); });
  Stream stream;
  stream.runtime_ = state_;
  stream.id_ = state.nextId++;
  state.streams[stream.id_] = entry;
  return stream;
}

Stream Runtime::wrapStream(void* nativeStream) {
  RuntimeState& state = usable(state_, 0, "runtime");
  std::lock_guard lock(state.mutex);
  Stream stream;
  stream.runtime_ = state_;
  stream.id_ = state.nextId++;
  state.streams[stream.id_] = RuntimeState::StreamEntry{nativeStream, true};
  return stream;
}

Event Runtime::createEvent() {
  RuntimeState& state = usable(state_, 0, "runtime");
  std::lock_guard lock(state.mutex);
  void* native = onCuda(state) ? deviceCall([] { return native::createEvent(); }) : nullptr;
  Event event;
  event.runtime_ = state_;
  event.id_ = state.nextId++;
  state.events[event.id_] = native;
  return event;
}

namespace {

void destroyStream(RuntimeState& state, const RuntimeState::StreamEntry& entry) {
  if (onCuda(state) && !entry.external && entry.native) native::destroyStream(entry.native);
}

void destroyEvent(RuntimeState& state, void* event) {
  if (onCuda(state) && event) native::destroyEvent(event);
}

}  // namespace

void Runtime::destroy(Stream& stream) {
  // Idempotent: an empty handle, one already destroyed, or one of a reset runtime is left as it is.
  if (stream.runtime_ != state_ || stream.id_ < 0) return;
  std::lock_guard lock(state_->mutex);
  auto entry = state_->streams.find(stream.id_);
  if (entry == state_->streams.end()) return;
  destroyStream(*state_, entry->second);
  state_->streams.erase(entry);
}

void Runtime::destroy(Event& event) {
  if (event.runtime_ != state_ || event.id_ < 0) return;
  std::lock_guard lock(state_->mutex);
  auto entry = state_->events.find(event.id_);
  if (entry == state_->events.end()) return;
  destroyEvent(*state_, entry->second);
  state_->events.erase(entry);
}

namespace {

// The native handles of a stream and an event of this runtime; throws Error
// (kind Runtime) for a handle of another runtime, a destroyed one, or after reset.
void* streamNative(RuntimeState& state, const std::shared_ptr<RuntimeState>& owner, int64_t id) {
  if (owner.get() != &state) throw plainError(ErrorKind::Runtime, "a stream of another runtime was used");
  auto entry = state.streams.find(id);
  if (entry == state.streams.end()) throw plainError(ErrorKind::Runtime, "a destroyed stream was used");
  return entry->second.native;
}

void* eventNative(RuntimeState& state, const std::shared_ptr<RuntimeState>& owner, int64_t id) {
  if (owner.get() != &state) throw plainError(ErrorKind::Runtime, "an event of another runtime was used");
  auto entry = state.events.find(id);
  if (entry == state.events.end()) throw plainError(ErrorKind::Runtime, "a destroyed event was used");
  return entry->second;
}

}  // namespace

void Runtime::record(Event& event, const Stream& stream) {
  usable(event.runtime_, event.id_, "event");
  usable(stream.runtime_, stream.id_, "stream");
  std::lock_guard lock(state_->mutex);
  void* e = eventNative(*state_, event.runtime_, event.id_);
  void* s = streamNative(*state_, stream.runtime_, stream.id_);
  if (onCuda(*state_)) deviceCall([&] { native::recordEvent(e, s); });
}

void Runtime::wait(const Stream& stream, const Event& event) {
  usable(event.runtime_, event.id_, "event");
  usable(stream.runtime_, stream.id_, "stream");
  std::lock_guard lock(state_->mutex);
  void* e = eventNative(*state_, event.runtime_, event.id_);
  void* s = streamNative(*state_, stream.runtime_, stream.id_);
  if (onCuda(*state_)) deviceCall([&] { native::waitEvent(s, e); });
}

void Runtime::synchronize(const Stream& stream) {
  usable(stream.runtime_, stream.id_, "stream");
  void* s = nullptr;
  {
    std::lock_guard lock(state_->mutex);
    s = streamNative(*state_, stream.runtime_, stream.id_);
  }
  if (onCuda(*state_)) deviceCall([&] { native::synchronizeStream(s); });
}

void Runtime::reset() {
  std::lock_guard lock(state_->mutex);
  if (!state_->alive) return;
  for (const auto& [id, entry] : state_->streams) destroyStream(*state_, entry);
  for (const auto& [id, native] : state_->events) destroyEvent(*state_, native);
  state_->streams.clear();
  state_->events.clear();
  state_->alive = false;
}

int64_t Runtime::liveHandles() const {
  std::lock_guard lock(state_->mutex);
  return static_cast<int64_t>(state_->streams.size() + state_->events.size());
}

}  // namespace hostir::api
