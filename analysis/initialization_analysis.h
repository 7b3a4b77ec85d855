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
// written drops its state, so checking a read is usually one lookup. Where
// a limit bounds the work (kMaxBoxesPerBuffer, kMaxPiecesPerRead), the
// answer past it is "could not prove", never "written".
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

// What the analysis knows of a region: a part of it that nothing has
// written, or that it could not tell (a limit was reached: `unproven` says
// which), or neither: every element is written.
struct Coverage {
  std::optional<UnwrittenRegion> unwritten;
  std::string unproven;
  bool proved() const { return !unwritten && unproven.empty(); }
};

// A read the analysis could not prove initialized, because it reached a limit.
struct UnprovenRead {
  AccessSite reader;
  Allocation allocation;  // of the buffer read
  std::string limit;      // the limit reached, as a phrase
  int64_t rank = 0;
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
  // when part of `box` is unwritten, or an UnprovenRead when the analysis
  // cannot tell. Unknown buffers count as written.
  void read(size_t buffer, const Box& box, const AccessSite& site, int64_t rank);
  // Whether every element of `box` of `buffer` has been written.
  Coverage coverage(size_t buffer, const Box& box) const;
  // A part of `box` of `buffer` known to be unwritten, if there is one.
  std::optional<UnwrittenRegion> unwritten(size_t buffer, const Box& box) const {
    return coverage(buffer, box).unwritten;
  }

  const std::vector<UninitializedRead>& reads() const { return reads_; }
  const std::vector<UnprovenRead>& unprovenReads() const { return unprovenReads_; }
  // Intervals and boxes stored over all buffers, for tests that writes coalesce.
  size_t storedBoxes() const;

  // A buffer written in more disjoint boxes than this (not stripes: those
  // are unbounded) is no longer tracked, so that no access pattern makes a
  // write or a read cost more than this many box tests. Past it, a read of
  // the buffer and the buffer as an output are "could not prove" (until a
  // write covers the whole buffer). Programs write a buffer in stripes or
  // in a few coalescing tiles.
  static constexpr size_t kMaxBoxesPerBuffer = 1024;
  // Subtracting the written boxes from a read splits it into pieces; past
  // this many, the read is "could not prove".
  static constexpr size_t kMaxPiecesPerRead = 4096;

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
    // Past kMaxBoxesPerBuffer: which elements are written is not known.
    bool untracked = false;
  };
  // What a read of `box` finds: a known gap, or "could not prove" (unproven
  // names the limit), or neither.
  struct Gap {
    std::optional<Box> box;
    const char* unproven = nullptr;
  };
  // Every element written: the stripes or boxes are no longer needed.
  static void markFull(Written& w);
  void writeStripe(Written& w, int64_t lo, int64_t hi);
  void writeBox(Written& w, const Box& box);
  Gap firstUnwritten(const Written& w, const Box& box) const;
  Gap firstUnwrittenInBoxes(const Written& w, const Box& wanted) const;
  void report(const Written& w, const Gap& gap, const AccessSite& site, int64_t rank, const std::string& key);

  std::unordered_map<size_t, Written> buffers_;
  std::vector<UninitializedRead> reads_;
  std::vector<UnprovenRead> unprovenReads_;
  std::unordered_set<std::string> reported_;
};

}  // namespace hostir
