#include "analysis/race_check_backend.h"

#include <algorithm>

#include "analysis/recorded_clocks.h"

namespace hostir {

struct RaceCheckBackend::CheckedStream : Stream {
  int slotNumber;
  size_t index;                        // the analysis' stream number
  Stream* target = nullptr;            // the forwarded backend's stream
  RecordedClocks recorded;             // the stream's clock at each recorded position
  std::vector<Event> forwardedEvents;  // the forwarded backend's event per position
  int slot() const override { return slotNumber; }
};

namespace {

// Memory-less buffer for dry runs: views only need its identity and size.
// When the last view of it is gone it adds its identity to `dead`, so that
// the checker drops the buffer's state before the address can name another.
class ShapeOnlyBuffer : public Buffer {
 public:
  ShapeOnlyBuffer(size_t bytes, std::shared_ptr<std::vector<size_t>> dead) : bytes_(bytes), dead_(std::move(dead)) {}
  ~ShapeOnlyBuffer() override { dead_->push_back(reinterpret_cast<size_t>(static_cast<Buffer*>(this))); }
  std::byte* data() override { return nullptr; }
  size_t bytes() const override { return bytes_; }

 private:
  size_t bytes_;
  std::shared_ptr<std::vector<size_t>> dead_;
};

// The whole buffer and the view as boxes of the buffer's index space, for a
// view cut from the buffer by chunks (its strides the buffer's).
std::pair<Box, Box> chunkBoxes(const TensorView& v) {
  const ViewPlacement placement = placementOf(v);
  Box whole, box;
  whole.rank = box.rank = v.rank();
  for (size_t d = 0; d < v.rank(); ++d) {
    whole.lo[d] = 0;
    whole.hi[d] = placement.baseExtent[d];
    box.lo[d] = placement.start[d];
    box.hi[d] = placement.start[d] + v.shape[d];
  }
  return {whole, box};
}

// The box of `base`'s index space (row-major) that holds the elements
// [first, first + count) of its buffer: exact when the range is whole rows
// of some dim (a reshape of a tensor or of a chunk along its first axis);
// otherwise the smallest box around it, which can only report more.
Box rangeBox(const Dims& base, int64_t first, int64_t count) {
  Box box;
  box.rank = base.size;
  const Dims strides = rowMajorStrides(base);
  const int64_t last = first + std::max<int64_t>(count, 1) - 1;
  size_t d = 0;
  for (; d < base.size && first / strides[d] == last / strides[d]; ++d) {
    box.lo[d] = (first / strides[d]) % base[d];
    box.hi[d] = box.lo[d] + 1;
  }
  if (d < base.size) {
    box.lo[d] = (first / strides[d]) % base[d];
    box.hi[d] = (last / strides[d]) % base[d] + 1;
    for (size_t inner = d + 1; inner < base.size; ++inner) {
      box.lo[inner] = 0;
      box.hi[inner] = base[inner];
    }
  }
  if (count == 0 && base.size) box.hi[0] = box.lo[0];
  return box;
}

}  // namespace

std::pair<Box, Box> RaceCheckBackend::boxes(const TensorView& v) const {
  auto base = baseShapes_.find(bufferId(v));
  // A view cut by chunks keeps its buffer's strides; a reshaped one has its own.
  if (base == baseShapes_.end() || (base->second.size == v.rank() && v.strides == rowMajorStrides(base->second)))
    return chunkBoxes(v);
  // A reshaped view: contiguous elements from its offset on.
  Box whole;
  whole.rank = base->second.size;
  for (size_t d = 0; d < whole.rank; ++d) {
    whole.lo[d] = 0;
    whole.hi[d] = base->second[d];
  }
  return {whole, rangeBox(base->second, v.offset, v.numel())};
}

RaceCheckBackend::RaceCheckBackend(int64_t poolSize, Backend* forward, RaceCheckOptions options)
    : poolSize_(poolSize),
      forward_(forward),
      options_(options),
      analysis_(std::make_unique<RaceAnalysis>(poolSize + 1)),
      deadBuffers_(std::make_shared<std::vector<size_t>>()) {
  for (int64_t i = 0; i <= poolSize; ++i) {
    auto s = std::make_unique<CheckedStream>();
    s->recorded.reset(static_cast<size_t>(poolSize + 1));
    s->slotNumber = static_cast<int>(i) - 1;
    s->index = static_cast<size_t>(i);
    streams_.push_back(std::move(s));
  }
  if (options_.trackInitialization) initialization_ = std::make_unique<InitializationAnalysis>();
}

RaceCheckBackend::~RaceCheckBackend() = default;

RaceCheckBackend::CheckedStream* RaceCheckBackend::checked(Stream* stream) const {
  return static_cast<CheckedStream*>(stream);
}

Stream* RaceCheckBackend::forwarded(Stream* stream) const { return checked(stream)->target; }

void RaceCheckBackend::beginRun() {
  // Every run is checked on its own, from fresh clocks.
  analysis_ = std::make_unique<RaceAnalysis>(static_cast<size_t>(poolSize_ + 1));
  if (options_.trackInitialization) initialization_ = std::make_unique<InitializationAnalysis>();
  keepAlive_.clear();
  for (auto& s : streams_) {
    s->recorded.reset(static_cast<size_t>(poolSize_ + 1));
    s->forwardedEvents.clear();
  }
  if (forward_) {
    forward_->beginRun();
    streams_[0]->target = forward_->mainStream();
    for (int64_t slot = 0; slot < poolSize_; ++slot)
      streams_[static_cast<size_t>(slot + 1)]->target = forward_->workerStream(slot);
  }
  running_ = true;
}

Stream* RaceCheckBackend::mainStream() { return streams_[0].get(); }

Stream* RaceCheckBackend::workerStream(int64_t number) {
  return streams_[static_cast<size_t>(number % poolSize_ + 1)].get();
}

Event RaceCheckBackend::recordEvent(Stream* stream) {
  CheckedStream* s = checked(stream);
  const VectorClock& now = analysis_->clock(s->index);
  // A dry run records each clock once: recording again with nothing issued
  // or joined in between (a synchronize per iteration) names the same position.
  bool unchanged =
      !forward_ && s->recorded.positions() > 0 && std::equal(now.begin(), now.end(), s->recorded.last().begin());
  if (!unchanged) {
    s->recorded.record(now);
    if (forward_) s->forwardedEvents.push_back(forward_->recordEvent(s->target));
  }
  return Event{stream, s->recorded.positions()};
}

void RaceCheckBackend::waitEvent(Stream* waiter, const Event& event) {
  if (event.stream == waiter) return;
  CheckedStream* target = checked(event.stream);
  target->recorded.load(event.position, joined_);
  analysis_->join(checked(waiter)->index, joined_);
  if (forward_) forward_->waitEvent(forwarded(waiter), target->forwardedEvents[event.position - 1]);
}

void RaceCheckBackend::synchronizeHost() {
  running_ = false;
  if (forward_) forward_->synchronizeHost();
}

void RaceCheckBackend::forgetDeadBuffers() {
  if (deadBuffers_->empty()) return;
  for (size_t id : *deadBuffers_) {
    analysis_->forgetBuffer(id);
    if (initialization_) initialization_->forgetBuffer(id);
    baseShapes_.erase(id);
  }
  deadBuffers_->clear();
}

size_t RaceCheckBackend::issue(Stream* stream) {
  forgetDeadBuffers();
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

size_t RaceCheckBackend::bufferId(const TensorView& view) const { return reinterpret_cast<size_t>(view.buffer.get()); }

void RaceCheckBackend::touch(const TensorView& view, bool write, Data data, Stream* stream, bool wholeBuffer,
                             int64_t reader) {
  auto [whole, box] = boxes(view);
  size_t id = bufferId(view);
  if (!analysis_->knows(id)) {
    // Allocated before the run: a program input, written before the start.
    auto name = inputNames_.find(id);
    std::string inputName = name != inputNames_.end() ? name->second : "an input";
    analysis_->declareBuffer(id, inputName, whole);
    if (initialization_) initialization_->declareBuffer(id, Allocation{inputName, OpKind::Allocate, {}}, whole, true);
  }
  AccessSite site{current_.kind, current_.loc, checked(stream)->slotNumber, write};
  analysis_->access(id, wholeBuffer ? whole : box, write, checked(stream)->index, site);
  if (!initialization_) return;
  if (data == Data::Read)
    initialization_->read(id, box, site, reader);
  else if (data == Data::Written)
    initialization_->write(id, box);
}

Coverage RaceCheckBackend::coverage(const TensorView& view) const {
  if (!initialization_ || !view.buffer) return {};
  return initialization_->coverage(bufferId(view), boxes(view).second);
}

TensorView RaceCheckBackend::input(DType dtype, const Dims& shape, const std::string& name) {
  forgetDeadBuffers();
  TensorView t = TensorView::contiguous(nullptr, dtype, shape);
  t.buffer = std::make_shared<ShapeOnlyBuffer>(t.bytes(), deadBuffers_);
  inputs_.push_back(t.buffer);
  inputNames_[bufferId(t)] = name;
  baseShapes_[bufferId(t)] = shape;
  return t;
}

TensorView RaceCheckBackend::allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) {
  // A buffer that died may have left its address to the one made now.
  forgetDeadBuffers();
  TensorView t;
  if (forward_) {
    t = forward_->allocate(dtype, shape, running_ ? forwarded(stream) : forward_->mainStream(), zero);
  } else {
    t = TensorView::contiguous(nullptr, dtype, shape);
    t.buffer = std::make_shared<ShapeOnlyBuffer>(t.bytes(), deadBuffers_);
  }
  baseShapes_[bufferId(t)] = shape;
  if (!running_) return t;  // before the run: a program input, ready at the start
  if (forward_) keepAlive_.push_back(t.buffer);
  std::string name = current_.result.empty() ? "a temporary" : std::string(current_.result);
  Box whole = boxes(t).first;
  analysis_->declareBuffer(bufferId(t), name, whole);
  if (initialization_)
    initialization_->declareBuffer(bufferId(t), Allocation{name, current_.kind, current_.loc}, whole, zero);
  // Stream-ordered memory: the allocation is a write on its stream; its
  // elements are written only with zero=true (declared so just above).
  issue(stream);
  touch(t, true, Data::Untouched, stream);
  return t;
}

void RaceCheckBackend::recordAccesses(Stream* stream, int64_t root) {
  // Reads before writes, each in operand order: an in-place operand is read,
  // then written.
  for (const TensorAccess& access : current_.tensors) {
    if (!access.view || !readsTensor(access.effect)) continue;
    if (access.effect == Effect::ReadOnRoot) {
      // broadcast's tensor is an input on the root and an output everywhere;
      // the race analysis counts it read and written on every rank alike.
      bool readsHere = root == options_.rank || options_.rank == RaceCheckOptions::kEveryRank;
      touch(*access.view, false, readsHere ? Data::Read : Data::Untouched, stream, false, root);
    } else {
      read(*access.view, stream);
    }
  }
  for (const TensorAccess& access : current_.tensors) {
    if (!access.view || !writesTensor(access.effect)) continue;
    // Stream-ordered free: every earlier use of the buffer must be ordered before it.
    if (access.effect == Effect::Free)
      touch(*access.view, true, Data::Untouched, stream, /*wholeBuffer=*/true);
    else
      write(*access.view, stream);
  }
}

void RaceCheckBackend::deallocate(const TensorView& tensor, Stream* stream) {
  size_t racesBefore = issue(stream);
  recordAccesses(stream);
  if (readyToForward(racesBefore)) forward_->deallocate(tensor, forwarded(stream));
}

void RaceCheckBackend::compute(Stream* stream, const KernelCall& call) {
  size_t racesBefore = issue(stream);
  recordAccesses(stream);
  if (readyToForward(racesBefore)) forward_->compute(forwarded(stream), call);
}

void RaceCheckBackend::copy(Stream* stream, const TensorView& src, const TensorView& dst) {
  size_t racesBefore = issue(stream);
  recordAccesses(stream);
  if (readyToForward(racesBefore)) forward_->copy(forwarded(stream), src, dst);
}

void RaceCheckBackend::collective(Stream* stream, const CollectiveCall& call) {
  size_t racesBefore = issue(stream);
  recordAccesses(stream, call.root);
  if (communicationObserver_) communicationObserver_(call);
  if (readyToForward(racesBefore)) forward_->collective(forwarded(stream), call);
}

void RaceCheckBackend::upload(const void* host, const TensorView& dst) {
  if (forward_) forward_->upload(host, dst);
}

void RaceCheckBackend::download(const TensorView& src, void* host) {
  if (forward_) forward_->download(src, host);
}

}  // namespace hostir
