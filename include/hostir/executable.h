// A program prepared once and run many times: what an embedding loop calls
// every step. run() and runOnMpi() are one compilation and one call of it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hostir/execution.h"
#include "hostir/host_buffer.h"
#include "hostir/program.h"

namespace hostir::api {

class Executable {
 public:
  // Prepares `program` once, for options.ranks in-process ranks: the passes,
  // the proof (unless options.checked is false), the team's threads, each
  // rank's backend, streams and pooled buffers. Every option of run() counts
  // and stays fixed; options.cancel also stops the preparation. Throws
  // Error as run() does (Usage, Program, Check; Run when a rank cannot
  // start, or when the preparation was cancelled).
  explicit Executable(const Program& program, const RunOptions& options = {});
  // Closes it.
  ~Executable();
  Executable(Executable&&) noexcept;
  Executable& operator=(Executable&&) noexcept;

  // One call: options.warmup untimed runs, then options.repeat timed ones,
  // as run() makes them, on the prepared team. `inputs` are global tensors,
  // every declared input, or none (each is then filled from the seed), or
  // some with options.fillMissingInputs (the others seeded); `outputs` receives the outputs wanted, as in
  // run(). A missing, unknown or mismatched buffer is Error (kind Usage)
  // naming it, and the executable stays usable.
  //
  // One call at a time: a call made while another runs on another thread
  // waits for it. A call that fails (a rank's error, options.cancel)
  // throws Error (kind Run) and leaves the executable usable: its next call
  // starts the team afresh, keeping the passes and the proof. On MPI
  // (compileOnMpi) a failed call closes the executable instead, because
  // its ranks' team cannot be started again.
  RunStats run(const std::map<std::string, HostBuffer>& inputs, const std::map<std::string, HostBuffer>& outputs);

  // Stops the team (its ranks' threads, and their streams') and frees its
  // buffers, which the executable holds until then; waits for a call in
  // progress.
  // Later calls of run() throw Error (kind Usage). Closing twice is allowed.
  void close();
  bool closed() const;

  // The inputs and outputs run() takes, with their global shapes as
  // compiled (the parameters bound, the team's size).
  const std::vector<TensorDecl>& tensors() const;

  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hostir::api
