#include "executor/race_check_backend.h"


namespace hostir {

struct RaceCheckBackend::CheckedStream : Stream {
  int slotNumber;
  size_t index;              // the analysis' stream number
  Stream* target = nullptr;  // the forwarded backend's stream
  std::vector<VectorClock> recorded;       // clock per recorded position
  std::vector<Event> forwardedEvents;      // the forwarded backend's event per position
  int slot() const override { return slotNumber; }
};

namespace {

// Memory-less buffer for dry runs: views only need its identity and size.
class ShapeOnlyBuffer : public Buffer {
 public:
  explicit ShapeOnlyBuffer(size_t bytes) : bytes_(bytes) {}
  std::byte* data() override { return nullptr; }
  size_t bytes() const override { return bytes_; }

 private:
  size_t bytes_;
};

// The view's box in its buffer's row-major index space. Views keep the
// strides of the tensor they were cut from, so the base extents follow from
// the strides (and the buffer size for the outermost one).
std::pair<Box, Box> boxes(const TensorView& v) {
  Box whole, box;
  size_t rank = v.rank();
  whole.rank = box.rank = rank;
  size_t elements = v.buffer->bytes() / dtypeSize(v.dtype);
  int64_t offset = v.offset;
  for (size_t d = 0; d < rank; ++d) {
    int64_t stride = v.strides[d];
    int64_t extent = d == 0 ? (stride > 0 ? static_cast<int64_t>(elements) / stride : v.shape[0])
                            : (stride > 0 ? v.strides[d - 1] / stride : v.shape[d]);
    int64_t start = stride > 0 ? offset / stride : 0;
    if (stride > 0) offset %= stride;
    whole.lo[d] = 0;
    whole.hi[d] = std::max(extent, start + v.shape[d]);
    box.lo[d] = start;
    box.hi[d] = start + v.shape[d];
  }
  return {whole, box};
}

}  // namespace

RaceCheckBackend::RaceCheckBackend(int64_t poolSize, Backend* forward)
    : poolSize_(poolSize), forward_(forward), analysis_(std::make_unique<RaceAnalysis>(poolSize + 1)) {
  for (int64_t i = 0; i <= poolSize; ++i) {
    auto s = std::make_unique<CheckedStream>();
    s->slotNumber = static_cast<int>(i) - 1;
    s->index = static_cast<size_t>(i);
    streams_.push_back(std::move(s));
  }
}

RaceCheckBackend::~RaceCheckBackend() = default;

RaceCheckBackend::CheckedStream* RaceCheckBackend::checked(Stream* stream) const {
  return static_cast<CheckedStream*>(stream);
}

Stream* RaceCheckBackend::forwarded(Stream* stream) const { return checked(stream)->target; }

void RaceCheckBackend::beginRun() {
  // Every run is checked on its own, from fresh clocks.
  analysis_ = std::make_unique<RaceAnalysis>(static_cast<size_t>(poolSize_ + 1));
  keepAlive_.clear();
  for (auto& s : streams_) {
    s->recorded.clear();
    s->forwardedEvents.clear();
  }
  if (forward_) {
    forward_->beginRun();
    streams_[0]->target = forward_->mainStream();
    for (int64_t slot = 0; slot < poolSize_; ++slot) streams_[static_cast<size_t>(slot + 1)]->target = forward_->workerStream(slot);
  }
  running_ = true;
}

Stream* RaceCheckBackend::mainStream() { return streams_[0].get(); }

Stream* RaceCheckBackend::workerStream(int64_t number) { return streams_[static_cast<size_t>(number % poolSize_ + 1)].get(); }

Event RaceCheckBackend::recordEvent(Stream* stream) {
  CheckedStream* s = checked(stream);
  s->recorded.push_back(analysis_->clock(s->index));
  if (forward_) s->forwardedEvents.push_back(forward_->recordEvent(s->target));
  return Event{stream, s->recorded.size()};
}

void RaceCheckBackend::waitEvent(Stream* waiter, const Event& event) {
  if (event.stream == waiter) return;
  CheckedStream* target = checked(event.stream);
  analysis_->join(checked(waiter)->index, target->recorded[event.position - 1]);
  if (forward_) forward_->waitEvent(forwarded(waiter), target->forwardedEvents[event.position - 1]);
}

void RaceCheckBackend::synchronizeHost() {
  running_ = false;
  if (forward_) forward_->synchronizeHost();
}

size_t RaceCheckBackend::issue(Stream* stream) {
  analysis_->issue(checked(stream)->index);
  return analysis_->races().size();
}

bool RaceCheckBackend::readyToForward(size_t racesBefore) {
  if (!forward_) return false;
  // A racy operation is reported, then issued only once every earlier one has
  // finished: the checked run stays well-defined instead of racing for real.
  if (analysis_->races().size() != racesBefore) forward_->synchronizeHost();
  return true;
}

size_t RaceCheckBackend::bufferId(const TensorView& view) {
  return reinterpret_cast<size_t>(view.buffer.get());
}

void RaceCheckBackend::touch(const TensorView& view, bool write, Stream* stream, bool wholeBuffer) {
  auto [whole, box] = boxes(view);
  size_t id = bufferId(view);
  if (!analysis_->knows(id)) {
    // Allocated before the run: a program input.
    auto name = inputNames_.find(id);
    analysis_->declareBuffer(id, name != inputNames_.end() ? name->second : "an input", whole);
  }
  AccessSite site{current_.kind, current_.loc, checked(stream)->slotNumber, write};
  analysis_->access(id, wholeBuffer ? whole : box, write, checked(stream)->index, site);
}

TensorView RaceCheckBackend::input(DType dtype, const Dims& shape, const std::string& name) {
  TensorView t = TensorView::contiguous(nullptr, dtype, shape);
  t.buffer = std::make_shared<ShapeOnlyBuffer>(t.bytes());
  inputs_.push_back(t.buffer);
  inputNames_[bufferId(t)] = name;
  return t;
}

TensorView RaceCheckBackend::allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) {
  TensorView t;
  if (forward_) {
    t = forward_->allocate(dtype, shape, running_ ? forwarded(stream) : forward_->mainStream(), zero);
  } else {
    t = TensorView::contiguous(nullptr, dtype, shape);
    t.buffer = std::make_shared<ShapeOnlyBuffer>(t.bytes());
  }
  if (!running_) return t;  // before the run: a program input, ready at the start
  keepAlive_.push_back(t.buffer);
  std::string name = current_.result.empty() ? "a temporary" : std::string(current_.result);
  analysis_->declareBuffer(bufferId(t), name, boxes(t).first);
  // Stream-ordered memory: the allocation is a write on its stream.
  issue(stream);
  touch(t, true, stream);
  return t;
}

void RaceCheckBackend::deallocate(const TensorView& tensor, Stream* stream) {
  // Stream-ordered free: every earlier use must be ordered before it.
  size_t racesBefore = issue(stream);
  touch(tensor, true, stream, /*wholeBuffer=*/true);
  if (readyToForward(racesBefore)) forward_->deallocate(tensor, forwarded(stream));
}

void RaceCheckBackend::linear(Stream* stream, const TensorView& x, const TensorView& w, const TensorView* bias,
                              const TensorView& out) {
  size_t racesBefore = issue(stream);
  touch(x, false, stream);
  touch(w, false, stream);
  if (bias) touch(*bias, false, stream);
  touch(out, true, stream);
  if (readyToForward(racesBefore)) forward_->linear(forwarded(stream), x, w, bias, out);
}

void RaceCheckBackend::matmul(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) {
  size_t racesBefore = issue(stream);
  touch(a, false, stream);
  touch(b, false, stream);
  touch(out, true, stream);
  if (readyToForward(racesBefore)) forward_->matmul(forwarded(stream), a, b, out);
}

void RaceCheckBackend::copy(Stream* stream, const TensorView& src, const TensorView& dst) {
  size_t racesBefore = issue(stream);
  touch(src, false, stream);
  touch(dst, true, stream);
  if (readyToForward(racesBefore)) forward_->copy(forwarded(stream), src, dst);
}

void RaceCheckBackend::add(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) {
  size_t racesBefore = issue(stream);
  touch(a, false, stream);
  touch(b, false, stream);
  touch(out, true, stream);
  if (readyToForward(racesBefore)) forward_->add(forwarded(stream), a, b, out);
}

void RaceCheckBackend::collective(Stream* stream, const CollectiveCall& call) {
  size_t racesBefore = issue(stream);
  touch(call.input, false, stream);
  touch(call.output, true, stream);
  if (readyToForward(racesBefore)) forward_->collective(forwarded(stream), call);
}

void RaceCheckBackend::upload(const void* host, const TensorView& dst) {
  if (forward_) forward_->upload(host, dst);
}

void RaceCheckBackend::download(const TensorView& src, void* host) {
  if (forward_) forward_->download(src, host);
}

}  // namespace hostir
