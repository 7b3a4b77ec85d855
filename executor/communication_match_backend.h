// A Backend that proves, while the program runs, what `hostir check` proves
// before it: every rank issues the same communications in the same order
// (kind, dtype, element counts, op, axis, root), each sendrecv paired with
// its peer's sendrecv of the same position. Before it forwards a
// communication, the host of every rank exchanges the communication's
// signature over a communicator of its own; at the end of a run, a marker
// that counts them. A difference is an error at the statement
// ("communication #3 does not match across ranks: ..."), raised on every rank
// before the mismatched communication starts, instead of a transport error
// (MPI_ERR_TRUNCATE) or a hang. `hostir run --unchecked` uses it in place of
// the static proof.
#pragma once

#include <cstdint>

#include "executor/backend.h"

namespace hostir {

class CommunicationMatchBackend : public Backend {
 public:
  // `signatures`: a communicator used only for the exchanges (never the one
  // the communications use, whose calls stream threads make in their own time).
  CommunicationMatchBackend(Backend& forward, Communicator& signatures);

  std::string_view name() const override { return forward_.name(); }
  void beginOperation(const OperationInfo& info) override { forward_.beginOperation(info); }
  void beginRun() override;
  Stream* mainStream() override { return forward_.mainStream(); }
  Stream* workerStream(int64_t number) override { return forward_.workerStream(number); }
  Event recordEvent(Stream* stream) override { return forward_.recordEvent(stream); }
  void waitEvent(Stream* waiter, const Event& event) override { forward_.waitEvent(waiter, event); }
  void synchronizeHost() override;
  TensorView allocate(DType dtype, const Dims& shape, Stream* stream, bool zero) override {
    return forward_.allocate(dtype, shape, stream, zero);
  }
  void deallocate(const TensorView& tensor, Stream* stream) override { forward_.deallocate(tensor, stream); }
  void linear(Stream* stream, const TensorView& x, const TensorView& w, const TensorView* bias,
              const TensorView& out) override {
    forward_.linear(stream, x, w, bias, out);
  }
  void matmul(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) override {
    forward_.matmul(stream, a, b, out);
  }
  void copy(Stream* stream, const TensorView& src, const TensorView& dst) override { forward_.copy(stream, src, dst); }
  void add(Stream* stream, const TensorView& a, const TensorView& b, const TensorView& out) override {
    forward_.add(stream, a, b, out);
  }
  void collective(Stream* stream, const CollectiveCall& call) override;
  void upload(const void* host, const TensorView& dst) override { forward_.upload(host, dst); }
  void download(const TensorView& src, void* host) override { forward_.download(src, host); }

 private:
  // Exchanges this rank's signature; throws DiagnosticError on a mismatch.
  void agree(const CollectiveCall* call);

  Backend& forward_;
  Communicator& signatures_;
  uint64_t issued_ = 0;  // communications of this run so far
};

}  // namespace hostir
