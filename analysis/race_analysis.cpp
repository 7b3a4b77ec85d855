#include "analysis/race_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace hostir {
namespace {

// The record's box, stored as lo[0..rank) then hi[0..rank).
bool overlapsStored(const int64_t* stored, size_t rank, const Box& box) {
  for (size_t d = 0; d < rank; ++d)
    if (std::max(stored[d], box.lo[d]) >= std::min(stored[rank + d], box.hi[d])) return false;
  return true;
}

bool containsStored(const Box& box, const int64_t* stored, size_t rank) {
  for (size_t d = 0; d < rank; ++d)
    if (stored[d] < box.lo[d] || stored[rank + d] > box.hi[d]) return false;
  return true;
}

Box loadBox(const int64_t* stored, size_t rank) {
  Box box;
  box.rank = rank;
  for (size_t d = 0; d < rank; ++d) {
    box.lo[d] = stored[d];
    box.hi[d] = stored[rank + d];
  }
  return box;
}

}  // namespace

RaceAnalysis::RaceAnalysis(size_t streams) : clocks_(streams, VectorClock(streams, 0)) {}

void RaceAnalysis::issue(size_t stream) { ++clocks_[stream][stream]; }

void RaceAnalysis::join(size_t stream, std::span<const uint64_t> clock) {
  VectorClock& mine = clocks_[stream];
  for (size_t s = 0; s < mine.size(); ++s) mine[s] = std::max(mine[s], clock[s]);
}

bool RaceAnalysis::orderedBefore(const Record& earlier, size_t stream) const {
  return earlier.stream == stream || earlier.tick <= clocks_[stream][earlier.stream];
}

size_t RaceAnalysis::recordSlots() const {
  size_t slots = 0;
  for (const auto& [id, history] : buffers_) slots += history.records.size();
  return slots;
}

void RaceAnalysis::declareBuffer(size_t buffer, const std::string& name, const Box& whole) {
  BufferHistory& h = buffers_[buffer];
  h = BufferHistory{};
  h.name = name;
  h.rank = whole.rank;
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

void RaceAnalysis::forgetBuffer(size_t buffer) { buffers_.erase(buffer); }

uint32_t RaceAnalysis::siteIndex(const AccessSite& site) {
  // An operation's accesses come one after another with the same site.
  if (lastSiteIndex_ != UINT32_MAX && site.op == lastSite_.op && site.loc == lastSite_.loc &&
      site.stream == lastSite_.stream)
    return lastSiteIndex_;
  SiteKey key{uint64_t{site.loc.line} << 32 | site.loc.col,
              static_cast<int64_t>(site.stream) * 64 + static_cast<int64_t>(site.op)};
  auto [it, added] = siteIndex_.emplace(key, static_cast<uint32_t>(sites_.size()));
  if (added) {
    AccessSite stored = site;
    stored.write = false;  // the record says whether it wrote
    sites_.push_back(stored);
  }
  lastSite_ = site;
  lastSiteIndex_ = it->second;
  return it->second;
}

void RaceAnalysis::release(BufferHistory& history, uint32_t index) {
  Record& r = history.records[index];
  if (--r.bucketRefs == 0) history.freeSlots.push_back(index);
}

RaceAnalysis::BufferHistory& RaceAnalysis::historyFor(size_t buffer, const Box& box) {
  auto found = buffers_.find(buffer);
  if (found == buffers_.end()) {
    declareBuffer(buffer, "a tensor", box);
    found = buffers_.find(buffer);
  }
  BufferHistory& history = found->second;
  if (box.rank != history.rank)
    throw std::logic_error(
        fmt::format("internal error: a {}-d access to the {}-d buffer '{}'", box.rank, history.rank, history.name));
  return history;
}

std::pair<size_t, size_t> RaceAnalysis::bucketRange(const BufferHistory& history, const Box& box) {
  if (box.rank == 0) return {0, 1};
  size_t first = static_cast<size_t>(box.lo[history.bucketDim] / history.bucketWidth);
  size_t last = static_cast<size_t>((box.hi[history.bucketDim] - 1) / history.bucketWidth);
  return {std::min(first, history.buckets.size() - 1), std::min(last, history.buckets.size() - 1) + 1};
}

void RaceAnalysis::scanBucket(BufferHistory& history, std::vector<uint32_t>& bucket, const Box& box, bool write,
                              size_t stream, const AccessSite& site) {
  // Dead records are dropped from the bucket as it is scanned, so that a
  // bucket holds only records that can still race: a buffer every
  // operation reads whole (a weight) would otherwise make each access scan
  // every earlier one.
  const size_t rank = history.rank;
  size_t kept = 0;
  for (size_t at = 0; at < bucket.size(); ++at) {
    uint32_t index = bucket[at];
    Record& r = history.records[index];
    if (!r.alive) {
      release(history, index);
      continue;
    }
    bucket[kept++] = index;
    // A record in several of the access's buckets is checked once.
    if (r.stamp == stamp_) continue;
    r.stamp = stamp_;
    const int64_t* stored = history.coords.data() + index * 2 * rank;
    bool ordered = orderedBefore(r, stream);
    if (!ordered && (r.write || write) && overlapsStored(stored, rank, box))
      reportRace(history, r, stored, box, write, site);
    // An earlier access ordered before this one and inside its box can only
    // race with a later access that also races with this one (this one
    // writes, or both read), so it need not be kept.
    if (ordered && (write || !r.write) && containsStored(box, stored, rank)) {
      r.alive = false;
      release(history, index);
      --kept;
    }
  }
  bucket.resize(kept);
}

void RaceAnalysis::reportRace(const BufferHistory& history, const Record& earlierRecord, const int64_t* stored,
                              const Box& box, bool write, const AccessSite& site) {
  const AccessSite& earlier = sites_[earlierRecord.site];
  std::string key =
      fmt::format("{}:{}|{}:{}|{}", earlier.loc.line, earlier.loc.col, site.loc.line, site.loc.col, history.name);
  if (!reported_.emplace(key, true).second) return;
  AccessSite first = earlier;
  first.write = earlierRecord.write;
  AccessSite second = site;
  second.write = write;
  races_.push_back(Race{first, second, history.name, intersection(loadBox(stored, history.rank), box)});
}

void RaceAnalysis::addRecord(BufferHistory& history, std::pair<size_t, size_t> buckets, const Box& box, bool write,
                             size_t stream, const AccessSite& site) {
  const size_t rank = history.rank;
  uint32_t index;
  if (!history.freeSlots.empty()) {
    index = history.freeSlots.back();
    history.freeSlots.pop_back();
  } else {
    index = static_cast<uint32_t>(history.records.size());
    history.records.emplace_back();
    history.coords.resize(history.coords.size() + 2 * rank);
  }
  Record& r = history.records[index];
  r.tick = clocks_[stream][stream];
  r.stamp = stamp_;
  r.stream = static_cast<uint32_t>(stream);
  r.site = siteIndex(site);
  r.write = write;
  r.alive = true;
  r.bucketRefs = static_cast<uint32_t>(buckets.second - buckets.first);
  int64_t* stored = history.coords.data() + index * 2 * rank;
  for (size_t d = 0; d < rank; ++d) {
    stored[d] = box.lo[d];
    stored[rank + d] = box.hi[d];
  }
  for (size_t b = buckets.first; b < buckets.second; ++b) history.buckets[b].push_back(index);
}

void RaceAnalysis::access(size_t buffer, const Box& box, bool write, size_t stream, const AccessSite& site) {
  ++accesses_;
  if (box.empty()) return;
  BufferHistory& history = historyFor(buffer, box);
  const std::pair<size_t, size_t> buckets = bucketRange(history, box);
  ++stamp_;  // a new query: its records are met once however many buckets hold them
  for (size_t b = buckets.first; b < buckets.second; ++b)
    scanBucket(history, history.buckets[b], box, write, stream, site);
  addRecord(history, buckets, box, write, stream, site);
}

}  // namespace hostir
