// A Backend that passes every call on to another. Backends that check or
// observe a real run (communication matching) derive from it and override
// only the calls they change, so an operation added to Backend is forwarded
// without touching them.
#pragma once

#include "runtime/backend.h"

namespace hostir {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& forward) : forward_(forward) {}

  std::string_view name() const override { return forward_.name(); }
  void beginOperation(const OperationInfo& info) override { forward_.beginOperation(info); }
  void useMesh(const std::vector<int64_t>& extents, const std::vector<uint32_t>& overs) override {
    forward_.useMesh(extents, overs);
  }
  void beginRun() override { forward_.beginRun(); }
  Stream* mainStream() override { return forward_.mainStream(); }
  Stream* workerStream(int64_t number) override { return forward_.workerStream(number); }
  Event recordEvent(Stream* stream) override { return forward_.recordEvent(stream); }
  void waitEvent(Stream* waiter, const Event& event) override { forward_.waitEvent(waiter, event); }
  void synchronizeHost() override { forward_.synchronizeHost(); }
  bool replaysRuns() const override { return forward_.replaysRuns(); }
  void replayRun() override { forward_.replayRun(); }
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override {
    return forward_.allocate(dtype, shape, stream, zero);
  }
  void deallocate(const TensorView& tensor, Stream* stream) override { forward_.deallocate(tensor, stream); }
  void compute(Stream* stream, const KernelCall& call) override { forward_.compute(stream, call); }
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override { forward_.copy(stream, src, dst); }
  void collective(Stream* stream, const CollectiveCall& call) override { forward_.collective(stream, call); }
  void upload(const void* host, const TensorView& dst) override { forward_.upload(host, dst); }
  void download(const TensorView& src, void* host) override { forward_.download(src, host); }
  MemoryHighWater* tensorMemory() override { return forward_.tensorMemory(); }

 protected:
  Backend& forward_;
};

}  // namespace hostir
