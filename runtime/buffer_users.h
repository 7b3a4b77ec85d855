// Which streams have issued work on each tensor buffer, so that a backend
// whose streams run asynchronously (CUDA) can free a buffer in stream order
// when the program deallocates it: the freeing stream first waits for every
// other stream that used it, then frees, as PyTorch's record_stream does for
// its caching allocator. Host-side bookkeeping only; the backend turns the
// answer into event waits.
//
// After the host has seen every stream idle (synchronizeHost), no earlier use
// can still be running: clear() forgets them all, and buffers freed without
// a deallocate (retired at the end of a run) leave nothing behind.
#pragma once

#include <cstddef>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/tensor.h"

namespace hostir {

class BufferUsers {
 public:
  // `stream` issued work that reads or writes `buffer` (null: ignored).
  void noteUse(const Buffer* buffer, Stream* stream);
  // The streams other than `freeing` that used `buffer` since the last
  // clear(), in the order of their first use; forgets the buffer.
  std::vector<Stream*> release(const Buffer* buffer, Stream* freeing);
  // Every stream is idle: no use needs waiting for.
  void clear() { users_.clear(); }
  size_t trackedBuffers() const { return users_.size(); }

 private:
  // A handful of streams per buffer: a vector searched linearly.
  std::unordered_map<const Buffer*, std::vector<Stream*>> users_;
};

}  // namespace hostir
