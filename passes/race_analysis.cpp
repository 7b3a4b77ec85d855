#include "passes/race_analysis.h"

#include <fmt/format.h>

#include <algorithm>

namespace hostir {

bool Box::empty() const {
  for (size_t d = 0; d < rank; ++d)
    if (lo[d] >= hi[d]) return true;
  return false;
}

bool Box::contains(const Box& other) const {
  for (size_t d = 0; d < rank; ++d)
    if (other.lo[d] < lo[d] || other.hi[d] > hi[d]) return false;
  return true;
}

std::string Box::toString() const {
  std::vector<std::string> dims;
  for (size_t d = 0; d < rank; ++d) dims.push_back(fmt::format("{}:{}", lo[d], hi[d]));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

bool overlaps(const Box& a, const Box& b) {
  for (size_t d = 0; d < a.rank; ++d)
    if (std::max(a.lo[d], b.lo[d]) >= std::min(a.hi[d], b.hi[d])) return false;
  return true;
}

Box intersection(const Box& a, const Box& b) {
  Box r = a;
  for (size_t d = 0; d < a.rank; ++d) {
    r.lo[d] = std::max(a.lo[d], b.lo[d]);
    r.hi[d] = std::min(a.hi[d], b.hi[d]);
  }
  return r;
}

RaceAnalysis::RaceAnalysis(size_t streams) : clocks_(streams, VectorClock(streams, 0)) {}

void RaceAnalysis::issue(size_t stream) { ++clocks_[stream][stream]; }

void RaceAnalysis::join(size_t stream, const VectorClock& clock) {
  VectorClock& mine = clocks_[stream];
  for (size_t s = 0; s < mine.size(); ++s) mine[s] = std::max(mine[s], clock[s]);
}

bool RaceAnalysis::orderedBefore(const Record& earlier, size_t stream) const {
  return earlier.stream == stream || earlier.tick <= clocks_[stream][earlier.stream];
}

void RaceAnalysis::declareBuffer(size_t buffer, const std::string& name, const Box& whole) {
  BufferHistory& h = buffers_[buffer];
  h.name = name;
  // Bucket along the longest dimension, in at most 8192 buckets: a loop over
  // one-row chunks of a long buffer then meets few records per access (1024
  // made a 1,000,000-operation check 2.3x slower), while an access to the
  // whole buffer still touches a bounded number of buckets.
  int64_t longest = 0;
  for (size_t d = 0; d < whole.rank; ++d)
    if (whole.hi[d] - whole.lo[d] > longest) {
      longest = whole.hi[d] - whole.lo[d];
      h.bucketDim = d;
    }
  constexpr int64_t kBuckets = 8192;
  h.bucketWidth = std::max<int64_t>(1, (longest + kBuckets - 1) / kBuckets);
  h.buckets.resize(static_cast<size_t>(std::max<int64_t>(1, (longest + h.bucketWidth - 1) / h.bucketWidth)));
}

void RaceAnalysis::access(size_t buffer, const Box& box, bool write, size_t stream, const AccessSite& site) {
  ++accesses_;
  if (box.empty()) return;
  BufferHistory& history = buffers_[buffer];
  auto bucketRange = [&](const Box& b) {
    if (b.rank == 0) return std::pair<size_t, size_t>{0, 1};
    size_t first = static_cast<size_t>(b.lo[history.bucketDim] / history.bucketWidth);
    size_t last = static_cast<size_t>((b.hi[history.bucketDim] - 1) / history.bucketWidth);
    return std::pair<size_t, size_t>{std::min(first, history.buckets.size() - 1),
                                     std::min(last, history.buckets.size() - 1) + 1};
  };
  auto [firstBucket, endBucket] = bucketRange(box);
  ++stamp_;
  for (size_t b = firstBucket; b < endBucket; ++b) {
    // Dead records are dropped from the bucket as it is scanned, so that a
    // bucket holds only records that can still race: a buffer every
    // operation reads whole (a weight) would otherwise make each access scan
    // every earlier one.
    std::vector<uint32_t>& bucket = history.buckets[b];
    size_t kept = 0;
    for (size_t at = 0; at < bucket.size(); ++at) {
      uint32_t index = bucket[at];
      if (!history.alive[index]) continue;
      bucket[kept++] = index;
      if (history.visited[index] == stamp_) continue;
      history.visited[index] = stamp_;
      const Record& r = history.records[index];
      bool ordered = orderedBefore(r, stream);
      if (!ordered && (r.write || write) && overlaps(r.box, box)) {
        std::string key = fmt::format("{}:{}|{}:{}|{}", r.site.loc.line, r.site.loc.col, site.loc.line,
                                      site.loc.col, history.name);
        if (reported_.emplace(key, true).second) {
          AccessSite first = r.site;
          first.write = r.write;
          AccessSite second = site;
          second.write = write;
          races_.push_back(Race{first, second, history.name, intersection(r.box, box)});
        }
      }
      // An earlier access ordered before this one and inside its box can only
      // race with a later access that also races with this one (this one
      // writes, or both read), so it need not be kept.
      if (ordered && box.contains(r.box) && (write || !r.write)) {
        history.alive[index] = false;
        --kept;
      }
    }
    bucket.resize(kept);
  }
  auto index = static_cast<uint32_t>(history.records.size());
  history.records.push_back(Record{stream, clocks_[stream][stream], write, box, site});
  history.alive.push_back(true);
  history.visited.push_back(0);
  for (size_t b = firstBucket; b < endBucket; ++b) history.buckets[b].push_back(index);
}

}  // namespace hostir
