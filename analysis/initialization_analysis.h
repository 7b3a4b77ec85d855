// Which elements of each buffer hold a value, in issue order: a read of an
// element that nothing has written yet is an uninitialized read. Inputs and
// `allocate(..., zero=true)` start written; `allocate` without zero (and the
// result of `y = op(...)` until op writes it) starts unwritten. Ordering
// between streams is the race analysis' business: a write that is unordered
// with a later read on another stream is a race already, so coverage by
// earlier-issued writes is enough here.
//
// Per buffer, the written elements are kept exactly, in the cheapest form
// that holds them: while every write spans the buffer in all dimensions but
// one (row chunks, column chunks, in any order), an interval set along that
// dimension; otherwise a union of boxes, coalesced as they come (a chunked
// loop's writes collapse into one box). A buffer whose whole extent is
// written drops its state, so checking a read is usually one lookup.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/box.h"
#include "analysis/race_analysis.h"

namespace hostir {

// Where a buffer came from, for messages.
struct Allocation {
  std::string name;              // the name the allocating statement defines, or "a temporary"
  OpKind op = OpKind::Allocate;  // allocate, or the operation whose result it is
  SourceLoc loc;
};

// A region of a buffer that nothing has written.
struct UnwrittenRegion {
  Allocation allocation;
  Box region;
};

struct UninitializedRead {
  AccessSite reader;          // the statement that reads (write is false)
  UnwrittenRegion unwritten;  // a part of what it reads
  int64_t rank = 0;           // the rank that reads it
};

class InitializationAnalysis {
 public:
  // A buffer whose elements start all written (`written`) or none written.
  void declareBuffer(size_t buffer, const Allocation& allocation, const Box& whole, bool written);
  bool knows(size_t buffer) const { return buffers_.count(buffer) != 0; }
  // Nothing can access `buffer` any more; the number may be reused.
  void forgetBuffer(size_t buffer) { buffers_.erase(buffer); }

  void write(size_t buffer, const Box& box);
  // Records an UninitializedRead by `rank` (once per statement and buffer)
  // when part of `box` is unwritten. Unknown buffers count as written.
  void read(size_t buffer, const Box& box, const AccessSite& site, int64_t rank);
  // A part of `box` of `buffer` that nothing has written, if there is one.
  std::optional<UnwrittenRegion> unwritten(size_t buffer, const Box& box) const;

  const std::vector<UninitializedRead>& reads() const { return reads_; }
  // Intervals and boxes stored over all buffers, for tests that writes coalesce.
  size_t storedBoxes() const;

  // A buffer written in more disjoint boxes than this (not stripes: those
  // are unbounded) is no longer tracked (treated as written), so that no
  // access pattern makes a write or a read cost more than this many box
  // tests: a false "initialized", never a false error. Programs write a
  // buffer in stripes or in a few coalescing tiles.
  static constexpr size_t kMaxBoxesPerBuffer = 1024;

 private:
  struct Written {
    Allocation allocation;
    Box whole;
    bool full = false;  // every element written (or no longer tracked)
    // Stripe form (boxMode false): the written elements are the stripes
    // [lo, hi) along `stripeDim` (-1 until the first write), each spanning
    // every other dimension; disjoint and not touching, by lo.
    int stripeDim = -1;
    std::map<int64_t, int64_t> stripes;
    // Box form: the written elements are a union of boxes.
    bool boxMode = false;
    std::vector<Box> boxes;
  };
  // Every element written: the stripes or boxes are no longer needed.
  static void markFull(Written& w);
  void writeStripe(Written& w, int64_t lo, int64_t hi);
  void writeBox(Written& w, const Box& box);
  std::optional<Box> firstUnwritten(const Written& w, const Box& box) const;
  std::optional<Box> firstUnwrittenInBoxes(const Written& w, const Box& wanted) const;

  std::unordered_map<size_t, Written> buffers_;
  std::vector<UninitializedRead> reads_;
  std::unordered_set<std::string> reported_;
};

}  // namespace hostir
