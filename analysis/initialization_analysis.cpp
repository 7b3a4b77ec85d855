#include "analysis/initialization_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace hostir {
namespace {

// The one dimension in which `box` does not span `whole`, -1 when it spans
// every dimension, -2 when it falls short in more than one.
int stripeDimension(const Box& box, const Box& whole) {
  int dim = -1;
  for (size_t d = 0; d < whole.rank; ++d) {
    if (box.lo[d] == whole.lo[d] && box.hi[d] == whole.hi[d]) continue;
    if (dim != -1) return -2;
    dim = static_cast<int>(d);
  }
  return dim;
}

// The limits, as the phrases that explain a "could not prove".
const char* tooManyPieces() {
  static const std::string text = fmt::format("its writes form more than {} separate pieces, the check's limit",
                                              InitializationAnalysis::kMaxBoxesPerBuffer);
  return text.c_str();
}
const char* tooManyReadPieces() {
  static const std::string text =
      fmt::format("the written parts split the read into more than {} pieces, the check's limit",
                  InitializationAnalysis::kMaxPiecesPerRead);
  return text.c_str();
}

}  // namespace

void InitializationAnalysis::markFull(Written& w) {
  w.full = true;
  w.stripeDim = -1;
  w.boxMode = false;
  w.untracked = false;
  std::map<int64_t, int64_t>().swap(w.stripes);
  std::vector<Box>().swap(w.boxes);
}

void InitializationAnalysis::declareBuffer(size_t buffer, const Allocation& allocation, const Box& whole,
                                           bool written) {
  Written& w = buffers_[buffer];
  w = Written{};
  w.allocation = allocation;
  w.whole = whole;
  w.full = written || whole.empty();
}

size_t InitializationAnalysis::storedBoxes() const {
  size_t boxes = 0;
  for (const auto& [id, w] : buffers_) boxes += w.boxes.size() + w.stripes.size();
  return boxes;
}

void InitializationAnalysis::write(size_t buffer, const Box& box) {
  auto found = buffers_.find(buffer);
  if (found == buffers_.end() || found->second.full) return;
  Written& w = found->second;
  Box written = intersection(box, w.whole);
  if (written.empty()) return;
  if (!w.boxMode) {
    int dim = stripeDimension(written, w.whole);
    if (dim == -1) {
      markFull(w);
      return;
    }
    if (dim >= 0 && (w.stripeDim < 0 || w.stripeDim == dim)) {
      w.stripeDim = dim;
      writeStripe(w, written.lo[static_cast<size_t>(dim)], written.hi[static_cast<size_t>(dim)]);
      return;
    }
    // A tile, or a stripe along another dimension: the stripes become boxes.
    w.boxMode = true;
    for (const auto& [lo, hi] : w.stripes) {
      Box stripe = w.whole;
      stripe.lo[static_cast<size_t>(w.stripeDim)] = lo;
      stripe.hi[static_cast<size_t>(w.stripeDim)] = hi;
      w.boxes.push_back(stripe);
    }
    std::map<int64_t, int64_t>().swap(w.stripes);
  }
  writeBox(w, written);
}

void InitializationAnalysis::writeStripe(Written& w, int64_t lo, int64_t hi) {
  // Absorb every stripe that overlaps or touches [lo, hi).
  auto it = w.stripes.upper_bound(lo);
  if (it != w.stripes.begin() && std::prev(it)->second >= lo) --it;
  while (it != w.stripes.end() && it->first <= hi) {
    lo = std::min(lo, it->first);
    hi = std::max(hi, it->second);
    it = w.stripes.erase(it);
  }
  size_t d = static_cast<size_t>(w.stripeDim);
  if (lo <= w.whole.lo[d] && hi >= w.whole.hi[d]) {
    markFull(w);
    return;
  }
  w.stripes.emplace(lo, hi);
}

void InitializationAnalysis::writeBox(Written& w, const Box& box) {
  if (w.untracked) {
    // Only a write of the whole buffer tells anything again.
    if (box.contains(w.whole)) markFull(w);
    return;
  }
  // Already written: the last box written is the likeliest to contain it.
  for (size_t i = w.boxes.size(); i-- > 0;)
    if (w.boxes[i].contains(box)) return;
  // Coalesce: grow the new box by every stored box it touches along one
  // dimension (or contains), until none is left to absorb. Tiles written in
  // any order end as one box once they form one.
  Box merged = box;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = w.boxes.size(); i-- > 0;) {
      if (auto u = unionBox(w.boxes[i], merged)) {
        merged = *u;
        w.boxes[i] = w.boxes.back();
        w.boxes.pop_back();
        grew = true;
      }
    }
  }
  if (merged.contains(w.whole)) {
    markFull(w);
    return;
  }
  if (w.boxes.size() >= kMaxBoxesPerBuffer) {
    w.untracked = true;
    std::vector<Box>().swap(w.boxes);
    return;
  }
  w.boxes.push_back(merged);
}

InitializationAnalysis::Gap InitializationAnalysis::firstUnwritten(const Written& w, const Box& box) const {
  if (w.full) return {};
  Box wanted = intersection(box, w.whole);
  if (wanted.empty()) return {};
  if (w.untracked) return Gap{std::nullopt, tooManyPieces()};
  if (w.boxMode) return firstUnwrittenInBoxes(w, wanted);
  if (w.stripeDim < 0) return Gap{wanted};  // nothing written yet
  // The first gap between the stripes inside the read's interval.
  size_t d = static_cast<size_t>(w.stripeDim);
  int64_t at = wanted.lo[d];
  auto it = w.stripes.upper_bound(at);
  if (it != w.stripes.begin() && std::prev(it)->second > at) {
    at = std::prev(it)->second;  // inside a stripe: the gap starts at its end
  }
  if (at >= wanted.hi[d]) return {};
  Box gap = wanted;
  gap.lo[d] = at;
  if (it != w.stripes.end() && it->first < gap.hi[d]) gap.hi[d] = it->first;
  return Gap{gap};
}

InitializationAnalysis::Gap InitializationAnalysis::firstUnwrittenInBoxes(const Written& w, const Box& wanted) const {
  for (size_t i = w.boxes.size(); i-- > 0;)
    if (w.boxes[i].contains(wanted)) return {};
  // Subtract every written box from the read; what is left nothing wrote.
  // Each subtraction splits a piece into at most 2 * rank, so the pieces are
  // bounded; past the bound the read is not proved.
  std::vector<Box> pieces{wanted}, next;
  for (const Box& written : w.boxes) {
    next.clear();
    for (const Box& piece : pieces) subtract(piece, written, next);
    pieces.swap(next);
    if (pieces.empty()) return {};
    if (pieces.size() > kMaxPiecesPerRead) return Gap{std::nullopt, tooManyReadPieces()};
  }
  // Report the first piece, grown by the pieces it joins into one box.
  Box first = pieces.front();
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 1; i < pieces.size(); ++i)
      if (auto u = unionBox(first, pieces[i]); u && !(*u == first)) {
        first = *u;
        grew = true;
      }
  }
  return Gap{first};
}

void InitializationAnalysis::report(const Written& w, const Gap& gap, const AccessSite& site, int64_t rank,
                                    const std::string& key) {
  reported_.insert(key);
  AccessSite reader = site;
  reader.write = false;
  if (gap.box)
    reads_.push_back(UninitializedRead{reader, UnwrittenRegion{w.allocation, *gap.box}, rank});
  else
    unprovenReads_.push_back(UnprovenRead{reader, w.allocation, gap.unproven, rank});
}

void InitializationAnalysis::read(size_t buffer, const Box& box, const AccessSite& site, int64_t rank) {
  auto found = buffers_.find(buffer);
  if (found == buffers_.end() || found->second.full) return;
  const Written& w = found->second;
  auto key = [&] { return fmt::format("{}:{}|{}", site.loc.line, site.loc.col, w.allocation.name); };
  if (!w.boxMode && !w.untracked) {
    // A lookup in the stripes.
    Gap gap = firstUnwritten(w, box);
    if (!gap.box) return;
    std::string k = key();
    if (!reported_.count(k)) report(w, gap, site, rank, k);
    return;
  }
  // The common case first: inside one written box. Then, once per statement
  // (a loop repeats an uninitialized read), the box subtraction.
  Box wanted = intersection(box, w.whole);
  for (size_t i = w.boxes.size(); i-- > 0;)
    if (w.boxes[i].contains(wanted)) return;
  std::string k = key();
  if (reported_.count(k)) return;
  Gap gap = firstUnwritten(w, box);
  if (gap.box || gap.unproven) report(w, gap, site, rank, k);
}

Coverage InitializationAnalysis::coverage(size_t buffer, const Box& box) const {
  auto found = buffers_.find(buffer);
  if (found == buffers_.end()) return {};
  Gap gap = firstUnwritten(found->second, box);
  Coverage c;
  if (gap.box) c.unwritten = UnwrittenRegion{found->second.allocation, *gap.box};
  if (gap.unproven) c.unproven = gap.unproven;
  return c;
}

}  // namespace hostir
