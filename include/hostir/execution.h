// What the command line does with a program, as calls: check it, predict
// its time on a machine model, run it on a team of in-process ranks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hostir/defaults.h"
#include "hostir/host_buffer.h"
#include "hostir/machine.h"
#include "hostir/program.h"

namespace hostir::api {

class Stream;

struct CheckOptions {
  Params params;
  int64_t ranks = 1;
  int64_t streams = kDefaultStreams;
};

// `hostir check`: verifies with the parameters bound, then proves the
// program free of races, uninitialized reads and mismatched communications
// across `ranks` ranks. Throws Error (kind Program or Check) whose text has
// every finding with its file:line:col.
void check(const Program& program, const CheckOptions& options = {});

struct SimulateOptions {
  Params params;
  int64_t ranks = 1;
  int64_t streams = kDefaultStreams;
  std::vector<std::string> passes;
  double minimumGain = kDefaultMinimumGain;  // the predicted gain a pass's scheduling change must reach
  // What carries the communications (`simulate --communicator`): "auto" or
  // "nccl", kernels on the SMs (one GPU per rank); "copy-engine", the copy
  // engines, which hold no SM and contend for memory bandwidth only.
  std::string communicator = "auto";
  // Called with each remark of the passes, rendered against the program's
  // source, as they make it (`simulate --remarks`); empty: none.
  std::function<void(const std::string&)> onRemark;
  // Called with each warning of the passes (one that stopped at a limit,
  // kMaxPassWholeProgramWork), rendered "file:line:col: warning: ..."; the
  // command line always prints them. Empty: none.
  std::function<void(const std::string&)> onWarning;
  // Non-empty: the predicted timeline is written to this file as a Chrome
  // trace in `run --trace`'s format (`simulate --trace`), its first 64
  // simulated ranks at most.
  std::string tracePath;
};

// `hostir simulate`'s figures, in milliseconds.
struct Prediction {
  std::string machineName;  // the profile's "name" (a file's, not its path)
  double medianMs = 0;
  double computeMs = 0;
  double commMs = 0;
  double exposedCommMs = 0;
  double overlapEfficiency = 0;  // E
  // The schedule a scheduling pass (overlap) chose for each loop it
  // weighed, in the order it decided: "line 8: 2 worker streams", "line 20:
  // as written". Empty when no pass weighed a loop.
  std::vector<std::string> schedules;
  // What pricing assumed where the machine profile had no figure
  // (docs/cost-model.md, "Kernels"), one sentence each.
  std::vector<std::string> assumptions;
  // With a profile that records its figures' spreads (a calibrated one):
  // the median with every figure at the fast end of its spread, and at the
  // slow end. Absent otherwise.
  std::optional<double> fastMs;
  std::optional<double> slowMs;
  // Why E is clamped, when it is (docs/cost-model.md): a stripped variant
  // took longer than the whole program (E counts the shorter part as
  // hidden), or the whole took longer than both variants one after the
  // other (contention; E is 0).
  bool variantSlowerThanWhole = false;
  bool slowerThanSerial = false;
  // Rank 0: its host's time issuing the program, and each stream's busy
  // time (the main stream, then worker streams 0, 1, ...).
  double hostMs = 0;
  std::vector<double> streamBusyMs;
  // One rank was simulated for the whole team: the program never names
  // `rank`, so every rank does the same (SPMD symmetry).
  bool symmetric = false;
  // With tracePath: the ranks the trace draws, and the file's size.
  int64_t tracedRanks = 0;
  uint64_t traceBytes = 0;
};

// Predicts the program (after `passes`) on `machine`: a shipped profile's
// name or a profile file written by `hostir calibrate`, read for this call
// (Machine::load).
Prediction simulate(const Program& program, const std::string& machine, const SimulateOptions& options = {});
// The same on a profile read once, for a caller that simulates many times.
Prediction simulate(const Program& program, const Machine& machine, const SimulateOptions& options = {});

struct RunOptions {
  Params params;
  int64_t ranks = 1;  // in-process ranks (threads); ignored by runOnMpi, whose team is the communicator's
  int64_t streams = kDefaultStreams;
  std::vector<std::string> passes;
  std::string machine;  // for passes that consult the cost model: a shipped profile's name or a file
  double minimumGain = kDefaultMinimumGain;  // the predicted gain a pass's scheduling change must reach
  std::string backend = "auto";              // "auto", "cpu" or "cuda"
  // What carries the collectives: "auto" (the host team's on the CPU; NCCL
  // on CUDA, or copy engines when in-process ranks outnumber the devices),
  // "nccl", or "copy-engine" (in-process ranks only; several may share a GPU).
  std::string communicator = "auto";
  uint64_t seed = 0;    // fills inputs the caller does not give
  bool checked = true;  // prove the program (as `check`) before running; false: `--unchecked`
  int warmup = 0;
  int repeat = 1;
  // A communication that has not completed after this long fails the run
  // (with its position) and the team stops.
  double commTimeoutSeconds = kDefaultCommTimeoutSeconds;
  // CPU: the computations and communications a rank runs at once; streams
  // beyond that take turns in issue order. 0: this node's cores divided by
  // the ranks on it.
  int coresPerRank = 0;
  // CUDA: the stream the program's main stream becomes (see runtime.h); the
  // caller's, never destroyed by hostir. Null: the backend's own.
  const Stream* mainStream = nullptr;
  // Non-empty: the last run's timeline, every rank's, is written to this
  // file as a Chrome trace (Perfetto), as `hostir run --trace` writes it.
  std::string tracePath;
  // The largest trace file, in MiB (`--trace-limit`): recording stops
  // there, and RunStats says so.
  uint64_t traceLimitMiB = kDefaultTraceLimitMiB;
  // Check the work for stream races as it is issued (`--race-check`): each
  // race found is in RunStats::races, and the run goes on.
  bool raceCheck = false;
  // A testing aid (`--inject-delays`): on the CPU backend every task and
  // communication first sleeps a random time up to this many microseconds
  // (drawn from `seed`), so that a missing wait shows as a wrong result.
  uint32_t injectDelaysMicros = 0;
  // Called with each remark of the passes, rendered against the program's
  // source, as they make it (`run --remarks`); empty: none.
  std::function<void(const std::string&)> onRemark;
  // Called with each warning of the passes (one that stopped at a limit,
  // kMaxPassWholeProgramWork), rendered "file:line:col: warning: ..."; the
  // command line always prints them. Empty: none.
  std::function<void(const std::string&)> onWarning;
  // Set by another thread (a signal handler's flag, a UI's stop button):
  // within a second the passes, the proof or the run stop wherever they are
  // (the streams drop their queued work, every rank stops at its next
  // operation) and the call throws Error (kind Run) "the run was
  // cancelled". An executable watches it in every call; the caller clears
  // it before the next. Null: the call cannot be cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // In-process runs: called about every 10 ms by the caller's thread while
  // it waits for the ranks; returning true cancels the call as `cancel`
  // does. For interrupts only the calling thread can see (Python's signal
  // handlers run on its main thread). Empty: none.
  std::function<bool()> interruptCheck;
  // CUDA: capture the program once into a CUDA graph and replay it in every
  // run (`--graph`). Refused with the reason where it cannot be: on the CPU
  // backend, without a device.
  bool graph = false;
  // Inputs the caller does not give are filled from `seed` (`--fill-missing`)
  // rather than refused. A call that gives no input at all is filled from
  // `seed` whatever this says; one that gives some but not all is refused,
  // naming the missing ones, unless this is set.
  bool fillMissingInputs = false;
  // Compare every rank's copy of each replicated output (one declared
  // without shard, which every rank holds whole) with rank 0's after the
  // call (`run --check` does): RunStats::replicaDisagreements names each
  // output whose ranks differ beyond the dtype's tolerance. A replicated
  // output the caller receives is always rank 0's copy.
  bool checkReplicatedOutputs = false;
  // Run as the serial reference that `hostir run --check` compares with:
  // the CPU backend on in-process ranks, one stream per rank in issue
  // order, GEMMs accumulating in f64. Give the program without passes to
  // check what the passes made. Refused with backend "cuda", graph or
  // mainStream.
  bool reference = false;
};

struct RunStats {
  std::vector<double> runMillis;  // one per timed run (repeat of them)
  // Rank 0's host time per timed run from its start until all its work was
  // issued (with graph: the graph launched), before it waits for the work.
  std::vector<double> issueMillis;
  // The most tensor memory any rank held at once in the last run, inputs
  // included (host memory on the CPU backend, device memory on CUDA).
  uint64_t peakMemoryBytes = 0;
  // With tracePath: the trace file's size, and whether a rank reached its
  // share of the trace limit and stopped recording before the run's end.
  uint64_t traceBytes = 0;
  bool traceTruncated = false;
  uint64_t traceDroppedOperations = 0;  // the operations a truncated trace left out
  // With raceCheck: each race the issued work made, rendered against the
  // program's source (file:line:col of both accesses).
  std::vector<std::string> races;
  // With checkReplicatedOutputs: one line per replicated output whose ranks
  // disagree, naming it, the ranks that differ from rank 0 and the first
  // differing element with both values.
  std::vector<std::string> replicaDisagreements;
};

// Runs the program on `options.ranks` in-process ranks. `inputs` are global
// tensors (each rank gets its shard): every input, or none (each is then
// filled from the seed), or some with options.fillMissingInputs. Each buffer in `outputs` receives that output's global
// tensor. Buffers must match the declarations' dtype and global shape (Error kind Usage otherwise). Throws Error (kind
// Run) when a rank fails, with the first failing rank's reason and its position, or when the trace could not be written
// (the outputs are then filled).
RunStats run(const Program& program, const std::map<std::string, HostBuffer>& inputs,
             const std::map<std::string, HostBuffer>& outputs, const RunOptions& options = {});

}  // namespace hostir::api
