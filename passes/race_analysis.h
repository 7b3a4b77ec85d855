// Happens-before race analysis over a stream of issued operations: one
// vector clock per stream; synchronize, record_event/wait_event and wait
// add edges; every access is a box in its buffer's index space. An access
// races with an earlier one on another stream when their boxes overlap, at
// least one writes, and no chain of edges orders them. The program walker
// (static check) and the runtime checker both drive this one analysis.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hostir/diagnostic.h"
#include "hostir/ops.h"

namespace hostir {

inline constexpr size_t kMaxBoxRank = 8;

// Half-open intervals per dimension of a buffer's (row-major) index space.
struct Box {
  std::array<int64_t, kMaxBoxRank> lo{}, hi{};
  size_t rank = 0;
  bool empty() const;
  bool contains(const Box& other) const;
  std::string toString() const;  // "[0:64, 16:32]"
};
bool overlaps(const Box& a, const Box& b);
Box intersection(const Box& a, const Box& b);

using VectorClock = std::vector<uint64_t>;

// What a report says about one side of a race.
struct AccessSite {
  OpKind op = OpKind::Copy;
  SourceLoc loc;
  int stream = -1;  // -1: the main stream, else the pool slot
  bool write = false;
};

struct Race {
  AccessSite first, second;  // first was issued earlier
  std::string buffer;
  Box region;                // where the two accesses overlap
};

class RaceAnalysis {
 public:
  // Streams are numbered 0..streams-1; the caller maps its streams onto them.
  explicit RaceAnalysis(size_t streams);

  // A new operation on `stream`: advances the stream's clock.
  void issue(size_t stream);
  // `stream` waits for everything `clock` has seen (synchronize, wait_event, wait).
  void join(size_t stream, const VectorClock& clock);
  const VectorClock& clock(size_t stream) const { return clocks_[stream]; }

  bool knows(size_t buffer) const { return buffers_.count(buffer) != 0; }
  // Names a buffer and its whole extent before its first access.
  void declareBuffer(size_t buffer, const std::string& name, const Box& whole);
  // The operation just issued on `stream` reads or writes `box` of `buffer`.
  void access(size_t buffer, const Box& box, bool write, size_t stream, const AccessSite& site);

  // Races found so far, each pair of statements and buffer once.
  const std::vector<Race>& races() const { return races_; }
  uint64_t accessesChecked() const { return accesses_; }

 private:
  struct Record {
    size_t stream;
    uint64_t tick;  // the stream's clock when it issued the access
    bool write;
    Box box;
    AccessSite site;
  };
  // Earlier accesses, indexed by buckets along one dimension so that a new
  // access only meets the records near it (chunked loops touch disjoint rows
  // or columns; a 100,000-operation program stays fast).
  struct BufferHistory {
    std::string name;
    size_t bucketDim = 0;
    int64_t bucketWidth = 1;
    std::vector<Record> records;
    std::vector<bool> alive;
    std::vector<uint64_t> visited;  // query stamp per record
    std::vector<std::vector<uint32_t>> buckets;
  };
  bool orderedBefore(const Record& earlier, size_t stream) const;

  std::vector<VectorClock> clocks_;
  std::unordered_map<size_t, BufferHistory> buffers_;
  std::vector<Race> races_;
  std::unordered_map<std::string, bool> reported_;
  uint64_t accesses_ = 0;
  uint64_t stamp_ = 0;
};

}  // namespace hostir
