// OpenBLAS's work buffers as a bounded, reserved pool. A pthreads OpenBLAS
// keeps one table of work buffers (BUFFER_SIZE, 128 MiB on x86-64) for the
// whole process: a GEMM takes a free one, or maps a new one when every
// buffer is in use, and retries that mapping for ever when the address space
// cannot take it (`ulimit -v`), a hang no caller could explain. So GEMMs run
// only on buffers reserved here: a lease takes a reserved buffer that is
// free, or reserves one more (checking the space first, and mapping it
// through OpenBLAS at once), or, when no more can be reserved, waits for one
// to be returned. Only when not even one can be reserved is it an error.
#pragma once

#include <condition_variable>
#include <mutex>
#include <vector>

#include "executor/cpu/blas_library.h"

namespace hostir::cpu {

class BlasBufferPool {
 public:
  explicit BlasBufferPool(const BlasLibrary& blas) : blas_(blas) {}
  // The pool every CPU GEMM of the process leases from.
  static BlasBufferPool& process();

  // Blocks until a reserved buffer is free; throws std::bad_alloc when none
  // is reserved and none can be.
  void acquire();
  void release();
  int reserved();
  // Reserves buffers until `buffers` are, or the address space is short.
  // Called before a team's threads start, when no other thread maps memory
  // between the check and the mapping, so that GEMMs seldom reserve later.
  void reserveUpTo(int buffers);

 private:
  bool reserve();

  const BlasLibrary& blas_;
  std::mutex mutex_;
  std::condition_variable returned_;
  int reserved_ = 0;           // guarded by mutex_
  int inUse_ = 0;              // guarded by mutex_
  std::vector<void*> mapped_;  // guarded by mutex_: the buffers reserve() mapped
};

// One GEMM's buffer, held while it runs.
class BlasBufferLease {
 public:
  explicit BlasBufferLease(BlasBufferPool& pool) : pool_(pool) { pool_.acquire(); }
  ~BlasBufferLease() { pool_.release(); }
  BlasBufferLease(const BlasBufferLease&) = delete;
  BlasBufferLease& operator=(const BlasBufferLease&) = delete;

 private:
  BlasBufferPool& pool_;
};

}  // namespace hostir::cpu
