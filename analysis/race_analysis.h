// Happens-before race analysis over a stream of issued operations: one
// vector clock per stream; synchronize, record_event/wait_event and wait
// add edges; every access is a box in its buffer's index space. An access
// races with an earlier one on another stream when their boxes overlap, at
// least one writes, and no chain of edges orders them. The program walker
// (static check) and the runtime checker both drive this one analysis.
//
// Memory follows what can still race, not the program's length: an access
// that covers and follows an earlier one retires it, retired records' slots
// are reused, and a buffer that can no longer be accessed is forgotten.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/box.h"
#include "ir/diagnostic.h"
#include "ir/ops.h"

namespace hostir {

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
  Box region;  // where the two accesses overlap
};

class RaceAnalysis {
 public:
  // Streams are numbered 0..streams-1; the caller maps its streams onto them.
  explicit RaceAnalysis(size_t streams);

  size_t streams() const { return clocks_.size(); }
  // A new operation on `stream`: advances the stream's clock.
  void issue(size_t stream);
  // `stream` waits for everything `clock` has seen (synchronize, wait_event, wait).
  void join(size_t stream, std::span<const uint64_t> clock);
  const VectorClock& clock(size_t stream) const { return clocks_[stream]; }

  bool knows(size_t buffer) const { return buffers_.count(buffer) != 0; }
  // Names a buffer and its whole extent before its first access.
  void declareBuffer(size_t buffer, const std::string& name, const Box& whole);
  // Nothing can access `buffer` any more (its last reference is gone): its
  // history is dropped, and the number may name a new buffer afterwards.
  void forgetBuffer(size_t buffer);
  // The operation just issued on `stream` reads or writes `box` of `buffer`.
  void access(size_t buffer, const Box& box, bool write, size_t stream, const AccessSite& site);

  // Races found so far, each pair of statements and buffer once.
  const std::vector<Race>& races() const { return races_; }
  uint64_t accessesChecked() const { return accesses_; }
  // Storage in use, for tests that the analysis stays bounded: buffers with
  // a history, and record slots over all of them (live ones and free ones).
  size_t buffersTracked() const { return buffers_.size(); }
  size_t recordSlots() const;

 private:
  // One earlier access. Its box lives in BufferHistory::coords.
  struct Record {
    uint64_t tick = 0;   // the stream's clock when it issued the access
    uint64_t stamp = 0;  // the last query that met it
    uint32_t stream = 0;
    uint32_t site = 0;        // into sites_
    uint32_t bucketRefs = 0;  // bucket entries that still name it
    bool write = false;
    bool alive = false;  // can still race with a later access
  };
  // Earlier accesses, indexed by buckets along one dimension so that a new
  // access only meets the records near it (chunked loops touch disjoint rows
  // or columns; a 100,000-operation program stays fast).
  struct BufferHistory {
    std::string name;
    size_t rank = 0;
    size_t bucketDim = 0;
    int64_t bucketWidth = 1;
    std::vector<Record> records;
    std::vector<int64_t> coords;      // per record: lo[0..rank), hi[0..rank)
    std::vector<uint32_t> freeSlots;  // dead records no bucket names any more
    std::vector<std::vector<uint32_t>> buckets;
  };
  bool orderedBefore(const Record& earlier, size_t stream) const;
  uint32_t siteIndex(const AccessSite& site);
  // The steps of access(): the buffer's history (declared on first use),
  // the buckets [first, second) the box meets, the check of each bucket's
  // records against the access, and the access's own record.
  BufferHistory& historyFor(size_t buffer, const Box& box);
  static std::pair<size_t, size_t> bucketRange(const BufferHistory& history, const Box& box);
  void scanBucket(BufferHistory& history, std::vector<uint32_t>& bucket, const Box& box, bool write, size_t stream,
                  const AccessSite& site);
  void reportRace(const BufferHistory& history, const Record& earlierRecord, const int64_t* stored, const Box& box,
                  bool write, const AccessSite& site);
  void addRecord(BufferHistory& history, std::pair<size_t, size_t> buckets, const Box& box, bool write, size_t stream,
                 const AccessSite& site);
  // Drops one bucket entry of a dead record; frees its slot after the last.
  static void release(BufferHistory& history, uint32_t index);

  std::vector<VectorClock> clocks_;
  std::unordered_map<size_t, BufferHistory> buffers_;
  // Statements that accessed something, each once per stream: records name
  // them by index, so that a record stays small.
  struct SiteKey {
    uint64_t loc;  // line << 32 | col
    int64_t opAndStream;
    friend bool operator==(const SiteKey&, const SiteKey&) = default;
  };
  struct SiteKeyHash {
    size_t operator()(const SiteKey& k) const {
      return std::hash<uint64_t>()(k.loc * 31 + static_cast<uint64_t>(k.opAndStream));
    }
  };
  std::vector<AccessSite> sites_;
  std::unordered_map<SiteKey, uint32_t, SiteKeyHash> siteIndex_;
  AccessSite lastSite_;
  uint32_t lastSiteIndex_ = UINT32_MAX;
  std::vector<Race> races_;
  std::unordered_map<std::string, bool> reported_;
  uint64_t accesses_ = 0;
  uint64_t stamp_ = 0;
};

}  // namespace hostir
